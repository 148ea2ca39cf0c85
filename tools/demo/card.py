"""Write the model card ``models/<name>.yaml`` of a demo detector (no torch needed).

    python -m tools.demo.card --onnx models/demo-v1.onnx --record tools/demo/records/demo-v1.train.json

The card names the ONNX file and its SHA-256, the class names in output order, the
static input size [h, w], the output layout, the training facts from the training record,
and ``eval_manifest_sha256``: the manifest SHA-256 of the evaluation set
(``candor_eval.common.manifest.load_manifest(data/detector/manifest.csv).sha256``). It is checked
with :func:`candor_eval.detection.model_card.load_card` before it is kept. No thresholds: the
served ones live in ``params.yaml`` (``thresholds``, ``thresholds_by_model``).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import onnxruntime as ort
import yaml

from candor_eval.common.atomic import write_text
from candor_eval.common.manifest import MANIFEST_NAME, load_manifest, sha256_file
from candor_eval.detection.model_card import load_card
from tools.demo.scenes import CLASSES

DESCRIPTIONS = {
    "demo-v1": "Demo reference detector (TinyDet, anchor-free, stride 8) trained on procedural "
               "top-down game scenes (tools/demo). Plain recipe: horizontal flips only.",
    "demo-v2": "Demo candidate detector (same TinyDet architecture), a second attempt: longer "
               "training with vertical flips and brightness/tint/haze jitter.",
}
PREPROCESS = ("Input: RGB float32 /255, NCHW, letterboxed: scale = min(S/h, S/w), resized with PIL "
              "BILINEAR to round(w*scale) x round(h*scale), pasted at left = (S-new_w)//2, "
              "top = (S-new_h)//2 on gray 114.")


def build_card(*, onnx: Path, record: dict, manifest_sha256: str) -> dict:
    sess = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    _, _, h, w = sess.get_inputs()[0].shape
    name = onnx.stem
    return {
        "onnx": onnx.name,
        "sha256": sha256_file(onnx),
        "description": f"{DESCRIPTIONS.get(name, 'Demo detector.')} {PREPROCESS}",
        "classes": list(CLASSES),
        "input_size": [int(h), int(w)],
        "output_layout": "ultralytics [1, 4+C, N]",
        "training": record,
        "eval_manifest_sha256": manifest_sha256,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.demo.card", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--record", required=True, help="training record JSON written by tools.demo.train")
    ap.add_argument("--data", default="data/detector", help="evaluation set folder (with manifest.csv)")
    args = ap.parse_args(argv)
    onnx = Path(args.onnx)
    record = json.loads(Path(args.record).read_text())
    card = build_card(onnx=onnx, record=record,
                      manifest_sha256=load_manifest(Path(args.data) / MANIFEST_NAME).sha256)
    out = onnx.with_suffix(".yaml")
    write_text(out, yaml.safe_dump(card, sort_keys=False, width=100))
    load_card(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
