"""The scene a model is scored on (:class:`candor.detection.scoring.metrics.Scene`), from either source.

- :func:`build_scene`: a detector data set (``frames.csv``, YOLO labels) and one model's
  raw detections (:mod:`candor.detection.inference.detections_file`). Classes are the
  ground truth's, in order, then the model's classes that have no labels
  (:func:`union_classes`); a frame's ``scale`` is the letterbox scale of the model's input
  (``min(input_w / width, input_h / height)``), so size bands are in model-input pixels.
- :func:`coco_scene`: a COCO ground truth (standalone COCO mode): one split ``all``, no
  sessions or zooms, ``scale`` 1 (size bands in original pixels: there is no model input).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from candor.common.errors import fail
from candor.detection.frames import read_frames
from candor.detection.inference.detections_file import RawDetections
from candor.detection.scoring.columns import GroundTruth
from candor.detection.scoring.metrics import Scene
from candor.detection.scoring.yolo import read_yolo


def union_classes(truth: tuple[str, ...], model: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Ground-truth classes in their order, then the model's classes that have no labels.

    >>> union_classes(("deer", "sheep"), ["sheep", "boar", "deer"])
    ('deer', 'sheep', 'boar')
    """
    return tuple(truth) + tuple(c for c in model if c not in truth)


def build_scene(*, data: Path, raw: RawDetections, input_hw: tuple[int, int],
                frames: tuple[str, ...] | None = None) -> tuple[Scene, np.ndarray, np.ndarray]:
    """Scene of ``frames`` (default: all of frames.csv) for one model, plus the raw boxes remapped.

    Returns the scene, the detections' frame indices into the scene and their class
    indices into the scene's classes. Without ``frames`` the detections must cover
    exactly the data set's frames (else they are stale: an input error).
    """
    info = read_frames(data / "frames.csv")
    wanted = info.frames if frames is None else frames
    missing = [f for f in wanted if f not in raw.sizes]
    extra = [f for f in raw.frames if f not in set(wanted)]
    if missing or (frames is None and extra):
        raise fail(str(data / "frames.csv"), "the detections do not cover exactly the data set's frames",
                   expected=f"{len(wanted)} frames", got=f"missing {missing[:5]}, extra {extra[:5]}",
                   hint="the detections are stale: dvc repro detect")
    gt = read_yolo(data, frames=list(wanted), sizes=raw.sizes)
    classes = union_classes(gt.classes, raw.header["classes"])
    cmap = np.array([classes.index(c) for c in raw.header["classes"]], dtype=np.int64)
    pos = {f: i for i, f in enumerate(wanted)}
    fmap = np.array([pos.get(f, -1) for f in raw.frames], dtype=np.int64)
    meta = {f: i for i, f in enumerate(info.frames)}
    idx = [meta[f] for f in wanted]
    ih, iw = input_hw
    scale = np.array([min(iw / gt.sizes[i, 0], ih / gt.sizes[i, 1]) for i in range(len(wanted))])
    scene = Scene(classes=classes, frames=np.array(wanted, dtype=str),
                  split=np.array([info.split[i] for i in idx], dtype=str),
                  session=np.array([info.session[i] for i in idx], dtype=str),
                  zoom=np.array([info.zoom[i] for i in idx], dtype=str), scale=scale,
                  label_frame=gt.label_frame, label_index=gt.label_index, label_class=gt.label_class,
                  label_boxes=gt.label_boxes, label_crowd=gt.label_crowd)
    return scene, fmap[raw.frame] if len(raw.frame) else raw.frame, cmap[raw.cls] if len(raw.cls) else raw.cls


def coco_scene(gt: GroundTruth) -> Scene:
    """The scene of a COCO ground truth: split ``all``, empty session and zoom, scale 1."""
    n = len(gt.frames)
    return Scene(classes=gt.classes, frames=np.array(gt.frames, dtype=str), split=np.full(n, "all"),
                 session=np.full(n, ""), zoom=np.full(n, ""), scale=np.ones(n),
                 label_frame=gt.label_frame, label_index=gt.label_index, label_class=gt.label_class,
                 label_boxes=gt.label_boxes, label_crowd=gt.label_crowd)
