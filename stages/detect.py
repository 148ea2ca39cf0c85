"""detect stage: run one ONNX detector over every frame and store its raw boxes.

    python -m stages.detect --model demo-v1 [--models models] [--data data/detector]
                            [--verified build/verified] --out build/detections/demo-v1.jsonl

Reads ``detector.floor`` and ``detector.providers`` from ``params.yaml`` (and
nothing else, so threshold and NMS changes never rerun inference). For each
frame of ``<data>/frames.csv`` (sorted by frame id), streamed one at a time:
letterbox to the model's static input (:mod:`candor.detection.inference.letterbox`, one reused
tensor), run, decode (:mod:`candor.detection.inference.decode`), keep candidates with score >= floor,
map them back to original-image pixels. No per-class threshold and no NMS: those
are scoring's. Lines are the bytes of ``json.dumps(..., separators=(",", ":"))``
(written by msgspec where that is byte-identical, see :func:`json_line`).

Output (JSON Lines, deterministic bytes):

- line 1, a header: ``format`` (``candor-detections/1``), ``model``,
  ``onnx_sha256``, ``classes``, ``input_size`` ``[H, W]``, ``layout``,
  ``floor``, ``precision`` (``box_px`` 0.001, ``score`` 0.00001);
- one line per frame: ``frame``, ``width``, ``height``, ``boxes``: a list of
  ``[x1, y1, x2, y2, score, class_index]``; coordinates rounded to 1e-3 px,
  scores to 1e-5 (onnxruntime's last bits differ between CPU instruction sets;
  the rounding keeps the file, and dvc.lock, stable), rows sorted by class,
  score descending, then coordinates; a box is kept when its *rounded* score is
  >= floor.

The model's bytes are hashed and checked against its card and the fetch
stage's verified record before onnxruntime loads them; the data manifest must
match ``build/verified/data-<set>.json``. Bad input exits 2 and writes nothing.
"""
from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec
import numpy as np
from PIL import Image
from tqdm import tqdm

from candor.common.atomic import atomic_open
from candor.detection.inference.decode import decode
from candor.detection.config import DetectorParams
from candor.common.errors import fail, run_main
from candor.common.images import load_frame
from candor.detection.frames import FrameInfo, find_images, read_frames
from candor.detection.inference.letterbox import Letterboxer, plan, to_original
from candor.common.manifest import load_manifest
from candor.detection.inference.onnx_model import LoadedModel, open_model
from candor.common.params import DEFAULT_PARAMS, section

log = logging.getLogger("candor.detect")

FORMAT = "candor-detections/1"
BOX_DECIMALS = 3
SCORE_DECIMALS = 5


def rounded_candidates(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, *,
                       floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes ``(K, 4)``, scores ``(K,)`` rounded (float64) and classes ``(K,)`` (int64), filtered
    and sorted as documented (pure); :func:`candidate_rows` makes them the output's rows.

    ``+ 0.0`` turns ``-0.0`` into ``0.0`` so the text never depends on a sign bit.
    """
    b = np.round(np.asarray(boxes, dtype=np.float64).reshape(-1, 4), BOX_DECIMALS) + 0.0
    s = np.round(np.asarray(scores, dtype=np.float64), SCORE_DECIMALS) + 0.0
    c = np.asarray(classes, dtype=np.int64)
    keep = s >= floor
    b, s, c = b[keep], s[keep], c[keep]
    order = np.lexsort((b[:, 3], b[:, 2], b[:, 1], b[:, 0], -s, c))
    return b[order], s[order], c[order]


def candidate_rows(b: np.ndarray, s: np.ndarray, c: np.ndarray) -> list[list[float | int]]:
    """The columns of :func:`rounded_candidates` as rows ``[x1, y1, x2, y2, score, class]``."""
    return [[*row, k] for row, k in zip(np.column_stack([b, s]).tolist(), c.tolist())]


_ENCODER = msgspec.json.Encoder()


def json_line(obj: dict, *, floats: np.ndarray) -> str:
    """``json.dumps(obj, separators=(",", ":"))``, byte for byte, faster when it can be.

    ``floats`` are all the float values in ``obj``. msgspec writes the same shortest
    round-trip digits as Python's ``repr``, but its exponent form differs (``1e-5`` and
    ``1e16`` where Python writes ``1e-05`` and ``1e+16``) and it starts at other magnitudes
    (Python: below 1e-4, msgspec: below 1e-5). So msgspec is used only where both write
    plain decimals: every float is 0 or has ``1e-4 <= |x| < 1e16`` (which also excludes
    NaN and infinities), and every string is printable ASCII (``json.dumps`` escapes
    non-ASCII); otherwise ``json.dumps`` writes the line.
    """
    a = np.abs(np.asarray(floats, dtype=np.float64))
    plain = bool(np.all((a == 0) | ((a >= 1e-4) & (a < 1e16))))
    strings = all(v.isascii() and v.isprintable() for v in obj.values() if isinstance(v, str))
    if plain and strings:
        return _ENCODER.encode(obj).decode("ascii")
    return json.dumps(obj, separators=(",", ":"))


def frame_line(model: LoadedModel, image: Image.Image, *, frame: str, floor: float,
               letterbox: Letterboxer) -> str:
    """Run the model on one frame and return its output line (JSON text)."""
    w, h = image.size
    lb = plan(w, h, input_w=model.input_w, input_h=model.input_h)
    out = model.run(letterbox(image, lb))
    expected_rank = 3
    if out.ndim != expected_rank or out.shape[0] != 1:
        raise fail(f"model {model.name}", "output has an unexpected shape at run time", got=list(out.shape))
    cand = decode(out, layout=model.layout, num_classes=len(model.classes), floor=floor)
    b, s, c = rounded_candidates(to_original(cand.boxes, lb), cand.scores, cand.classes, floor=floor)
    return frame_json(frame, w, h, b, s, c)


def frame_json(frame: str, width: int, height: int, b: np.ndarray, s: np.ndarray, c: np.ndarray) -> str:
    """One frame's output line from its rounded, sorted candidate columns (:func:`rounded_candidates`)."""
    return json_line({"frame": frame, "width": width, "height": height, "boxes": candidate_rows(b, s, c)},
                     floats=np.concatenate([b.ravel(), s]))


def header(model: LoadedModel, *, floor: float) -> dict:
    return {"format": FORMAT, "model": model.name, "onnx_sha256": model.sha256, "classes": list(model.classes),
            "input_size": [model.input_h, model.input_w], "layout": model.layout, "floor": floor,
            "precision": {"box_px": 10.0 ** -BOX_DECIMALS, "score": 10.0 ** -SCORE_DECIMALS}}


def iter_lines(model: LoadedModel, frames: Sequence[str], images: dict[str, Path], *,
               floor: float) -> Iterator[str]:
    """Header then one JSON line per frame, streaming (one image in memory at a time)."""
    yield json.dumps(header(model, floor=floor), separators=(",", ":"))
    letterbox = Letterboxer(input_w=model.input_w, input_h=model.input_h)
    for frame in tqdm(frames, desc=f"detect {model.name}", unit="frame"):
        yield frame_line(model, load_frame(images[frame]), frame=frame, floor=floor, letterbox=letterbox)


def check_data(data: Path, verified: Path) -> None:
    """The data set's manifest must be the one the fetch stage verified."""
    record_path = verified / f"data-{data.name}.json"
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail(str(record_path), "verified record not found", hint="run the fetch stage: dvc repro fetch") from None
    actual = load_manifest(data / "manifest.csv").sha256
    if record.get("sha256") != actual:
        raise fail(str(data / "manifest.csv"), "manifest changed since it was verified",
                   expected=record.get("sha256"), got=actual, hint="dvc repro fetch")


def model_parser(prog: str, description: str | None, *, out_help: str) -> argparse.ArgumentParser:
    """The arguments of a stage that runs one model over the frames of a data set (detect, latency)."""
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model card name: <models>/<name>.yaml")
    p.add_argument("--models", default="models", help="folder of model cards (default: models)")
    p.add_argument("--data", default="data/detector", help="data set folder (frames.csv, images/)")
    p.add_argument("--verified", default="build/verified", help="the fetch stage's records")
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: params.yaml)")
    p.add_argument("--out", required=True, help=out_help)
    return p


def open_inputs(args: argparse.Namespace, params: DetectorParams) -> tuple[FrameInfo, dict[str, Path], LoadedModel]:
    """Check the data set against its verified record, list its frames and images, and open the
    model (hash-checked). Every frame of frames.csv must have an image."""
    data, verified = Path(args.data), Path(args.verified)
    check_data(data, verified)
    info = read_frames(data / "frames.csv")
    images = find_images(data / "images")
    missing = [f for f in info.frames if f not in images]
    if missing:
        raise fail(str(data / "images"), f"{len(missing)} frame(s) of frames.csv have no image", got=missing[:10])
    model = open_model(Path(args.models) / f"{args.model}.yaml", providers=params.providers,
                       verified=verified / f"model-{args.model}.json")
    return info, images, model


def main(argv: Sequence[str] | None = None) -> int:
    args = model_parser("python -m stages.detect", __doc__, out_help="output .jsonl of raw boxes").parse_args(argv)
    params = section(DetectorParams, "detector", path=args.params)
    info, images, model = open_inputs(args, params)
    log.info("%s: %s layout, input %dx%d, %d classes, %d frames, floor %g", model.name, model.layout,
             model.input_w, model.input_h, len(model.classes), len(info.frames), params.floor)
    with atomic_open(args.out) as fh:
        for line in iter_lines(model, info.frames, images, floor=params.floor):
            fh.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
