"""The scene a model is scored on: its frames and labels as aligned arrays (:class:`Scene`), from
either source.

- :func:`build_scene`: a detector data set (``frames.csv``, its ground truth in YOLO txt or
  COCO JSON, :mod:`candor_eval.detection.scoring.truth`) and one model's raw detections
  (:mod:`candor_eval.detection.detections_file`). Classes are the data set's classes the
  model covers, in the data set's order (:mod:`candor_eval.detection.scoring.scope`); the labels of
  the others are set apart (:class:`~candor_eval.detection.scoring.scope.OutOfScope`). A frame's
  ``scale`` is the letterbox scale of the model's input (``min(input_w / width, input_h /
  height)``), so size bands are in model-input pixels.
- :func:`coco_scene`: a COCO ground truth (standalone COCO mode): one split ``all``, no
  sessions or zooms, ``scale`` 1 (size bands in original pixels: there is no model input).

What :func:`build_scene` reads of the data set does not depend on the model (``frames.csv`` with its
manifest check, and the ground truth of given frames and image sizes): a :class:`DataReads` keeps
it, so the models of one set read it once (:meth:`DataReads.prefetch`, before their workers fork).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from candor_eval.common.errors import fail
from candor_eval.detection.detections_file import RawDetections, read_index
from candor_eval.detection.frames import FrameInfo, load_frames
from candor_eval.detection.scoring.columns import GroundTruth
from candor_eval.detection.scoring.records import Scene
from candor_eval.detection.scoring.scope import ClassScope, OutOfScope, class_scope
from candor_eval.detection.scoring.truth import Truth, read_truth


class SceneInputs(NamedTuple):
    """What :func:`build_scene` returns: the ``scene``; the raw detections' frame indices into it
    (``det_frame``) and class indices into its classes (``det_class``); the class ``scope``; the
    ``outside`` (out-of-scope) labels; the ground truth read (``truth``, with COCO ids when any)."""

    scene: Scene
    det_frame: np.ndarray
    det_class: np.ndarray
    scope: ClassScope
    outside: OutOfScope
    truth: Truth


class DataReads:
    """The reads of data set ``data`` that every model of it shares, each done on first use and kept:
    :meth:`frames` (:func:`~candor_eval.detection.frames.load_frames`) and :meth:`truth`
    (:func:`~candor_eval.detection.scoring.truth.read_truth`, kept per frames and image sizes). A read
    that fails keeps nothing: the next use reads again and raises the same error at its own place."""

    def __init__(self, data: Path) -> None:
        self.data = Path(data)
        self._frames: FrameInfo | None = None
        self._truth: dict[tuple[str, ...], tuple[dict[str, tuple[int, int]], Truth]] = {}

    def frames(self) -> FrameInfo:
        """The data set's frames (``frames.csv``, every read file listed in its manifest)."""
        if self._frames is None:
            self._frames = load_frames(self.data)
        return self._frames

    def truth(self, frames: Sequence[str], sizes: dict[str, tuple[int, int]]) -> Truth:
        """The ground truth of ``frames`` whose images have ``sizes`` (frame -> (width, height))."""
        key = tuple(frames)
        kept = self._truth.get(key)
        if kept is not None and kept[0] == sizes:
            return kept[1]
        truth = read_truth(self.data, frames=list(frames), sizes=sizes)
        self._truth[key] = (dict(sizes), truth)
        return truth

    def prefetch(self, detections: Path) -> None:
        """Read what :func:`build_scene` reads for the detections file ``detections`` (all frames), so
        that workers forked afterwards inherit it. Any error is left for the model's own scoring to
        raise, in its order (the card and header checks come first there)."""
        try:
            raw = read_index(detections)
            wanted = self.frames().frames
            if all(f in raw.sizes for f in wanted):
                self.truth(wanted, raw.sizes)
        except Exception:  # noqa: BLE001, S110 - see the docstring: raised again where it belongs
            pass


def build_scene(*, data: Path, raw: RawDetections, input_hw: tuple[int, int], class_map: dict[str, str] | None = None,
                card: str = "model card", frames: tuple[str, ...] | None = None,
                reads: DataReads | None = None) -> SceneInputs:
    """Scene of ``frames`` (default: all of frames.csv) for one model, plus the raw boxes remapped.

    ``class_map`` is the card's (``card`` names it in errors). Without ``frames`` the detections
    must cover exactly the data set's frames (else they are stale: an input error). ``reads`` (of
    ``data``): the data set's reads shared with the set's other models (default: read here).
    """
    reads = DataReads(data) if reads is None else reads
    info = reads.frames()
    wanted = info.frames if frames is None else frames
    missing = [f for f in wanted if f not in raw.sizes]
    wanted_set = set(wanted)
    extra = [f for f in raw.frames if f not in wanted_set]
    if missing or (frames is None and extra):
        raise fail(str(data / "frames.csv"), "the detections do not cover exactly the data set's frames",
                   expected=f"{len(wanted)} frames", got=f"missing {missing[:5]}, extra {extra[:5]}",
                   hint="the detections are stale: dvc repro detect")
    truth = reads.truth(wanted, raw.sizes)
    gt = truth.gt
    scope = class_scope(gt.classes, raw.header["classes"], class_map=class_map, where=card)
    cls = scope.data_to_class[gt.label_class] if len(gt.label_class) else gt.label_class
    inside = cls >= 0
    out = ~inside & ~gt.label_crowd
    oos = {c: i for i, c in enumerate(scope.out_of_scope)}
    outside = OutOfScope(classes=scope.out_of_scope, label_frame=gt.label_frame[out],
                         label_class=np.array([oos[gt.classes[k]] for k in gt.label_class[out].tolist()],
                                              dtype=np.int64))
    pos = {f: i for i, f in enumerate(wanted)}
    fmap = np.array([pos.get(f, -1) for f in raw.frames], dtype=np.int64)
    meta = {f: i for i, f in enumerate(info.frames)}
    idx = [meta[f] for f in wanted]
    ih, iw = input_hw
    scale = np.array([min(iw / gt.sizes[i, 0], ih / gt.sizes[i, 1]) for i in range(len(wanted))])
    scene = Scene(classes=scope.classes, frames=np.array(wanted, dtype=str),
                  split=np.array([info.split[i] for i in idx], dtype=str),
                  session=np.array([info.session[i] for i in idx], dtype=str),
                  zoom=np.array([info.zoom[i] for i in idx], dtype=str), scale=scale,
                  label_frame=gt.label_frame[inside], label_index=gt.label_index[inside], label_class=cls[inside],
                  label_boxes=gt.label_boxes[inside], label_crowd=gt.label_crowd[inside])
    return SceneInputs(scene=scene, det_frame=fmap[raw.frame] if len(raw.frame) else raw.frame,
                       det_class=scope.model_to_class[raw.cls] if len(raw.cls) else raw.cls,
                       scope=scope, outside=outside, truth=truth)


def coco_scene(gt: GroundTruth) -> Scene:
    """The scene of a COCO ground truth: split ``all``, empty session and zoom, scale 1."""
    n = len(gt.frames)
    return Scene(classes=gt.classes, frames=np.array(gt.frames, dtype=str), split=np.full(n, "all"),
                 session=np.full(n, ""), zoom=np.full(n, ""), scale=np.ones(n),
                 label_frame=gt.label_frame, label_index=gt.label_index, label_class=gt.label_class,
                 label_boxes=gt.label_boxes, label_crowd=gt.label_crowd)
