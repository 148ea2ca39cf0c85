"""Quick F1 check of a demo detector at one threshold for every class, on the pipeline's own kernels.

    python -m tools.demo.evaluate --model models/demo-v1.yaml [--model models/demo-v2.yaml]
                                  [--data data/detector] [--threshold 0.35] [--json OUT.json]

Used right after training (``tools/demo/README.md``) to report how good a model is
before any served per-class thresholds exist. It composes the pipeline's pieces, so it
has no definitions of its own: the model is hash-checked and run as the detect stage
runs it (:func:`candor_eval.detection.inference.runner.run_model`: letterbox, decode, raw boxes
at the threshold, as arrays), then scored as the score stage scores
(:mod:`candor_eval.detection.scoring.scene`, :mod:`candor_eval.detection.scoring.metrics`:
same-class NMS at IoU 0.5 (suppress when IoU > 0.5), greedy one-to-one matching at
IoU >= 0.5, micro and per-class P/R/F1), per split and over all frames.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from candor_eval.detection.config import DetectorParams
from candor_eval.detection.detections_file import RawDetections
from candor_eval.detection.frames import find_images, read_frames
from candor_eval.detection.inference.onnx_model import open_model
from candor_eval.detection.inference.runner import run_model
from candor_eval.detection.match_defaults import MATCH_IOU
from candor_eval.detection.scoring.metrics import operating_point
from candor_eval.detection.scoring.nms_match import score_detections
from candor_eval.detection.scoring.scene import build_scene
from candor_eval.detection.scoring.tally import summarise
from candor_eval.detection.served import Served

NMS_IOU = DetectorParams().nms_iou     # the pipeline's defaults, not the served params.yaml


def evaluate(card: Path, data: Path, *, threshold: float) -> dict:
    """Run the model on every frame (boxes at ``threshold``), then :func:`evaluate_raw`."""
    model = open_model(card, providers=["CPUExecutionProvider"])
    raw = run_model(model, read_frames(data / "frames.csv").frames, find_images(data / "images"), floor=threshold)
    return evaluate_raw(raw, data, threshold=threshold)


def evaluate_raw(raw: RawDetections, data: Path, *, threshold: float) -> dict:
    """``{split: {micro, per_class}}`` for ``all`` and each split of ``frames.csv``, from raw boxes
    (any floor <= ``threshold``: NMS and matching are greedy by score, so boxes under the threshold
    change nothing)."""
    scene, frame, cls, *_ = build_scene(data=data, raw=raw, input_hw=tuple(raw.header["input_size"]))
    s = score_detections(scene, frame=frame, cls=cls, boxes=raw.boxes, score=raw.score,
                         nms_iou=NMS_IOU, match_iou=MATCH_IOU)
    op = operating_point(s, Served.at(np.full(len(scene.classes), threshold)))
    masks = {"all": np.ones(len(scene.frames), bool)} | {sp: scene.split == sp for sp in sorted(set(scene.split))}
    out = {}
    for split, mask in masks.items():
        block = summarise(s, op, frame_mask=mask, min_support=0, critical=[], band_edges=[])
        out[split] = {"micro": block["micro"], "per_class": block["per_class"]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.demo.evaluate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, action="append", help="model card models/<name>.yaml (repeatable)")
    ap.add_argument("--data", default="data/detector")
    ap.add_argument("--threshold", type=float, default=0.35)
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    results = {Path(m).stem: evaluate(Path(m), Path(args.data), threshold=args.threshold) for m in args.model}
    for name, res in results.items():
        for split, r in res.items():
            m = r["micro"]
            print(f"{name} {split:4s} micro P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f} "
                  f"(tp {m['tp']} fp {m['fp']} fn {m['fn']})")
        print(f"{'class':12s} {'support':>7s} {'F1':>6s}   (split all)")
        for n, c in res["all"]["per_class"].items():
            print(f"{n:12s} {c['support']:7d} {c['f1'] or 0.0:6.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
