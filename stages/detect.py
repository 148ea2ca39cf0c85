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

from PIL import Image
from tqdm import tqdm

from candor.common.atomic import atomic_open
from candor.detection.inference.decode import decode
from candor.detection.inference.detections_file import frame_json, header, rounded_candidates
from candor.detection.config import DetectorParams
from candor.common.errors import fail, run_main
from candor.common.images import load_frame
from candor.detection.frames import FrameInfo, find_images, read_frames
from candor.detection.inference.letterbox import Letterboxer, plan, to_original
from candor.common.manifest import load_manifest
from candor.detection.inference.onnx_model import LoadedModel, open_model
from candor.common.params import DEFAULT_PARAMS, section

log = logging.getLogger("candor.detect")



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
