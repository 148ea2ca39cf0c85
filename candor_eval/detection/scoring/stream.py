"""Scoring one model's raw detections chunk by chunk, in memory bounded by the chunk (docs/scale.md).

:func:`score_stream` takes the scene (the ground truth: every frame and label, a few dozen bytes
each) and the raw detections as chunks of whole frames
(:func:`~candor_eval.detection.detections_file.iter_chunks` from the file,
:func:`~candor_eval.detection.detections_file.split_chunks` from memory). Each chunk is
scored on its own frames and their labels: NMS and matching never cross a frame, so this is
exactly the result of scoring every box at once. The chunk's counts are added to a
:class:`~candor_eval.detection.scoring.tally.Tally`, its per-frame and per-label outcomes kept in
:class:`Outcomes`, its served detections handed to ``served`` (the COCO export writes them as they
come), and its boxes dropped. Memory: one chunk's boxes plus a few arrays per frame and label;
time: linear in the number of boxes.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from candor_eval.common.errors import fail
from candor_eval.detection.detections_file import RawDetections
from candor_eval.detection.scoring.anatomy import FP_KINDS, error_anatomy
from candor_eval.detection.scoring.box_quality import tp_box_errors
from candor_eval.detection.scoring.boxes import stable_key_order
from candor_eval.detection.scoring.clusters import ClusterBy
from candor_eval.detection.scoring.coco_ap import APMatches, match_for_ap
from candor_eval.detection.scoring.columns import DetectionTable
from candor_eval.detection.scoring.metrics import operating_point, wrong_targets
from candor_eval.detection.scoring.nms_match import score_detections
from candor_eval.detection.scoring.scene import Scene, SceneInputs
from candor_eval.detection.scoring.tally import Tally, frame_groups

STRICT_IOU = 0.75


@dataclass(frozen=True)
class Outcomes:
    """Per frame of ``scene``: ``tp``, ``fp``, ``fn`` at the operating point, ``fp_kinds`` ``(F, 5)``
    the FPs by kind of :data:`~candor_eval.detection.scoring.anatomy.FP_KINDS`, ``fn_aimed`` the aimed
    FNs; per label: ``found`` (matched by a kept detection), ``tp_iou`` and ``tp_edge`` (the IoU and
    edge error of the detection that found it, :mod:`candor_eval.detection.scoring.box_quality`; ``NaN``
    when not found). The rows of the outcome tables are read off these."""

    scene: Scene
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    found: np.ndarray
    fp_kinds: np.ndarray
    fn_aimed: np.ndarray
    tp_iou: np.ndarray
    tp_edge: np.ndarray

    def tp_strict(self) -> np.ndarray:
        """Per frame: true positives whose IoU is at least :data:`STRICT_IOU` (COCO's strict AP75 bar)."""
        strict = self.found & (self.tp_iou >= STRICT_IOU)
        return np.bincount(self.scene.label_frame[strict], minlength=len(self.scene.frames))


def frame_labels(scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """The scene's label indices grouped by frame (each frame's labels in their scene order) and
    the start of each frame's run, ``(F + 1,)``: frame ``f``'s labels are ``order[start[f]:start[f + 1]]``."""
    order = stable_key_order(scene.label_frame)
    return order, np.searchsorted(scene.label_frame[order], np.arange(len(scene.frames) + 1))


def sub_scene(scene: Scene, frames: np.ndarray, *, order: np.ndarray, start: np.ndarray) -> tuple[Scene, np.ndarray]:
    """The scene of frames ``frames`` (scene indices; frame ``i`` of the result is ``frames[i]``)
    with their labels, and those labels' scene indices (:func:`frame_labels` gives ``order`` and ``start``)."""
    lens = start[frames + 1] - start[frames]
    offset = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    labels = order[np.repeat(start[frames], lens) + offset]
    sub = Scene(classes=scene.classes, frames=scene.frames[frames], split=scene.split[frames],
                session=scene.session[frames], zoom=scene.zoom[frames], scale=scene.scale[frames],
                label_frame=np.repeat(np.arange(len(frames)), lens), label_index=scene.label_index[labels],
                label_class=scene.label_class[labels], label_boxes=scene.label_boxes[labels],
                label_crowd=scene.label_crowd[labels])
    return sub, labels


def score_stream(inputs: SceneInputs, chunks: Iterable[RawDetections], *, class_thresholds: np.ndarray,
                 nms_iou: float | None, match_iou: float, critical: list[str], band_edges: list[float],
                 agnostic: bool = False, max_det: int | None = None,
                 grid: np.ndarray, where: str, matrix: bool = True,
                 served: Callable[[DetectionTable], None] | None = None,
                 ap: Callable[[APMatches], None] | None = None,
                 cluster: ClusterBy | None = None) -> tuple[Tally, Outcomes]:
    """Score the chunks against ``inputs`` (:func:`~candor_eval.detection.scoring.scene.build_scene`) at
    the served thresholds ``class_thresholds`` ``(C,)``, served NMS ``nms_iou``, ``agnostic``, ``max_det``
    (:class:`~candor_eval.detection.config.ServedNms`; agnostic or capped: the operating point is scored
    on the thresholded boxes, :mod:`candor_eval.detection.scoring.metrics`); curves on ``grid``; the
    confusion matrix with ``matrix``; the cluster sums of every rate by ``cluster`` (frame or
    session) when given. Every
    frame of the scene must come in exactly one chunk (else an input error naming ``where``: the
    detections changed while read). ``ap`` receives each chunk's COCO AP matches of every box
    after NMS, before thresholds (:func:`~candor_eval.detection.scoring.coco_ap.match_for_ap`, frames as
    scene indices)."""
    scene = inputs.scene
    n_frames = len(scene.frames)
    tally = Tally.empty(frame_groups(scene), classes=scene.classes, band_edges=band_edges, grid=grid,
                        matrix=matrix, cluster=cluster)
    n_labels = len(scene.label_frame)
    out = Outcomes(scene=scene, tp=np.zeros(n_frames, np.int64), fp=np.zeros(n_frames, np.int64),
                   fn=np.zeros(n_frames, np.int64), found=np.zeros(n_labels, bool),
                   fp_kinds=np.zeros((n_frames, len(FP_KINDS)), np.int64), fn_aimed=np.zeros(n_frames, np.int64),
                   tp_iou=np.full(n_labels, np.nan), tp_edge=np.full(n_labels, np.nan))
    position = {f: i for i, f in enumerate(scene.frames.tolist())}
    seen = np.zeros(n_frames, bool)
    order, start = frame_labels(scene)
    critical_idx = [scene.classes.index(c) for c in critical]
    for chunk in chunks:
        frames = np.array([position.get(f, -1) for f in chunk.frames], dtype=np.int64)
        if (frames < 0).any() or seen[frames].any() or len(np.unique(frames)) < len(frames):
            raise fail(where, "the detections changed while they were read (a frame is unknown or repeated)",
                       hint="rerun the command; if it persists: dvc repro detect")
        seen[frames] = True
        sub, labels = sub_scene(scene, frames, order=order, start=start)
        cls = inputs.scope.model_to_class[chunk.cls]
        floor = score_detections(sub, frame=chunk.frame, cls=cls, boxes=chunk.boxes, score=chunk.score,
                                 nms_iou=nms_iou, match_iou=match_iou, agnostic=agnostic, max_det=max_det)
        s = floor
        if agnostic or max_det is not None:        # thresholds first, as served
            above = chunk.score >= class_thresholds[cls]
            s = score_detections(sub, frame=chunk.frame[above], cls=cls[above], boxes=chunk.boxes[above],
                                 score=chunk.score[above], nms_iou=nms_iou, match_iou=match_iou, agnostic=agnostic,
                                 max_det=max_det)
        op = operating_point(s, class_thresholds=class_thresholds)
        anatomy = error_anatomy(s, op)
        tally.add(s, op, wrong=wrong_targets(s, op, classes=critical_idx), anatomy=anatomy,
                  of_frame=tally.groups.of_frame[frames], curves=None if s is floor else floor)
        n = len(frames)
        out.tp[frames] = np.bincount(s.frame[op.tp], minlength=n)
        out.fp[frames] = np.bincount(s.frame[op.fp], minlength=n)
        out.fn[frames] = np.bincount(sub.label_frame[op.fn], minlength=n)
        out.found[labels] = op.found
        is_fp = anatomy.fp_kind >= 0
        out.fp_kinds[frames] = np.bincount(s.frame[is_fp] * len(FP_KINDS) + anatomy.fp_kind[is_fp],
                                           minlength=n * len(FP_KINDS)).reshape(n, len(FP_KINDS))
        out.fn_aimed[frames] = np.bincount(sub.label_frame[anatomy.fn_aimed], minlength=n)
        tp = np.flatnonzero(op.tp)
        iou, edge = tp_box_errors(s.boxes[tp], sub.label_boxes[s.label[tp]], sub.scale[s.frame[tp]])
        out.tp_iou[labels[s.label[tp]]] = iou
        out.tp_edge[labels[s.label[tp]]] = edge
        if ap is not None:
            m = match_for_ap(n_classes=len(scene.classes), label_frame=sub.label_frame, label_class=sub.label_class,
                             label_boxes=sub.label_boxes, label_crowd=sub.label_crowd, det_frame=floor.frame,
                             det_class=floor.cls, det_boxes=floor.boxes, det_score=floor.score)
            ap(replace(m, frame=frames[m.frame]))
        if served is not None:
            kept = np.flatnonzero(op.kept)
            served(DetectionTable(classes=scene.classes, frame=frames[s.frame[kept]], cls=s.cls[kept],
                                  boxes=s.boxes[kept], score=s.score[kept]))
    if not seen.all():
        raise fail(where, "the detections changed while they were read (frames are missing)",
                   hint="rerun the command; if it persists: dvc repro detect")
    return tally, out
