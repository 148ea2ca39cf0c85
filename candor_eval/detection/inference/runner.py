"""One model over the frames of a data set: checked inputs, then raw boxes per frame.

- :func:`open_inputs`: the data set's manifest and the model's card must be the ones the fetch
  stage verified for the set (``<verified>/detection-<set>.json``, :mod:`candor_eval.detection.sets`;
  the model must be one of the set's), every frame of ``frames.csv`` must have an image, and the
  model is opened hash-checked (:func:`~candor_eval.detection.inference.onnx_model.open_model`).
- :func:`detect_frame`: one decoded frame -> its :class:`FrameBoxes`: letterbox to the
  model's static input with the card's ``preprocess`` (:mod:`~candor_eval.detection.inference.letterbox`), run, decode
  (:mod:`~candor_eval.detection.inference.decode`) keeping candidates with score >= ``floor``, map
  back to original-image pixels, round and sort
  (:func:`~candor_eval.detection.detections_file.rounded_candidates`). No per-class
  threshold and no NMS: those are scoring's.
- :func:`iter_frames` streams that over frames in the given order (one image in memory at a
  time, loaded with the card's EXIF policy, one reused letterbox tensor); :func:`iter_lines` makes the raw-detections
  file's
  lines of it, :func:`run_model` its arrays (:class:`RawDetections`, equal to what
  :func:`~candor_eval.detection.detections_file.read_raw` reads back from those lines).
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from PIL import Image
from tqdm import tqdm

from candor_eval.common.errors import fail
from candor_eval.common.images import load_frame
from candor_eval.common.manifest import load_manifest, sha256_file
from candor_eval.common.params import DEFAULT_PARAMS
from candor_eval.detection.detections_file import (
    FrameBoxes,
    RawDetections,
    collect,
    file_lines,
    header,
    rounded_candidates,
)
from candor_eval.detection.frames import FrameInfo, find_images, load_frames
from candor_eval.detection.inference.decode import decode
from candor_eval.detection.inference.letterbox import Letterboxer, plan, to_original
from candor_eval.detection.inference.onnx_model import LoadedModel, open_model

OUTPUT_RANK = 3  # every supported layout is [1, A, B]


def check_set_record(data: Path, card_file: Path, verified: Path, *, params_file: str | Path = DEFAULT_PARAMS) -> None:
    """The set's manifest and the model's card must be the ones the fetch stage verified for the set
    (``<verified>/detection-<set>.json``, the set named by the data folder), and the model one of the set's
    (``detector.sets`` of ``params_file``, named in the hints)."""
    record_path = verified / f"detection-{data.name}.json"
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail(str(record_path), "verified record of the detection set not found",
                   hint=f"add the set to detector.sets in {params_file}, then: dvc repro fetch") from None
    actual = load_manifest(data / "manifest.csv").sha256
    if record["data"].get("sha256") != actual:
        raise fail(str(data / "manifest.csv"), "manifest changed since it was verified",
                   expected=record["data"].get("sha256"), got=actual, hint="dvc repro fetch")
    entry = record["models"].get(card_file.stem)
    if entry is None:
        raise fail(str(record_path), f"model {card_file.stem!r} is not a model of detection set {data.name!r}",
                   expected="one of: " + ", ".join(record["models"]), hint=f"{params_file}:detector.sets")
    if entry["card_sha256"] != sha256_file(card_file):
        raise fail(str(card_file), "model card changed since it was verified", hint="dvc repro fetch")


def open_inputs(*, model: str, models: str | Path, data: str | Path, verified: str | Path,
                providers: Sequence[str], params_file: str | Path = DEFAULT_PARAMS,
                ) -> tuple[FrameInfo, dict[str, Path], LoadedModel]:
    """The frames of ``data``, their images, and the model ``<models>/<model>.yaml`` opened with
    ``providers``, after checking the data set and the model against the fetch stage's records in
    ``verified``. Every frame of ``frames.csv`` must have an image. ``params_file``: where the set
    and the providers were read (named in errors)."""
    data, verified = Path(data), Path(verified)
    check_set_record(data, Path(models) / f"{model}.yaml", verified, params_file=params_file)
    info = load_frames(data)
    images = find_images(data / "images")
    missing = [f for f in info.frames if f not in images]
    if missing:
        raise fail(str(data / "images"), f"{len(missing)} frame(s) of frames.csv have no image", got=missing[:10])
    loaded = open_model(Path(models) / f"{model}.yaml", providers=list(providers),
                        verified=verified / f"model-{model}.json", params_file=params_file)
    return info, images, loaded


def detect_frame(model: LoadedModel, image: Image.Image, *, frame: str, floor: float,
                 letterbox: Letterboxer) -> FrameBoxes:
    """The raw boxes of one decoded frame (see the module docstring); ``letterbox`` is reused."""
    w, h = image.size
    lb = plan(w, h, input_w=model.input_w, input_h=model.input_h)
    out = model.run(letterbox(image, lb))
    if out.ndim != OUTPUT_RANK or out.shape[0] != 1:
        raise fail(f"model {model.name}", "output has an unexpected shape at run time", got=list(out.shape))
    cand = decode(out, layout=model.layout, num_classes=len(model.classes), floor=floor)
    b, s, c = rounded_candidates(to_original(cand.boxes, lb), cand.scores, cand.classes, floor=floor)
    return FrameBoxes(frame, w, h, b, s, c)


def iter_frames(model: LoadedModel, frames: Sequence[str], images: dict[str, Path], *,
                floor: float) -> Iterator[FrameBoxes]:
    """:func:`detect_frame` of each of ``frames`` in order, streaming (with a progress bar on stderr)."""
    pre = model.card.preprocess
    letterbox = Letterboxer(input_w=model.input_w, input_h=model.input_h, preprocess=pre)
    for frame in tqdm(frames, desc=f"detect {model.name}", unit="frame"):
        yield detect_frame(model, load_frame(images[frame], exif=pre.exif), frame=frame, floor=floor,
                           letterbox=letterbox)


def iter_lines(model: LoadedModel, frames: Sequence[str], images: dict[str, Path], *,
               floor: float) -> Iterator[str]:
    """The raw-detections file's lines (without ``\\n``, streaming): the header, then one line per frame."""
    return file_lines(header(model, floor=floor), iter_frames(model, frames, images, floor=floor))


def run_model(model: LoadedModel, frames: Sequence[str], images: dict[str, Path], *,
              floor: float) -> RawDetections:
    """The raw detections of ``model`` over ``frames`` as arrays: the values the file of
    :func:`iter_lines` holds, rounded the same way, with no file written or read."""
    return collect(header(model, floor=floor), iter_frames(model, frames, images, floor=floor))

