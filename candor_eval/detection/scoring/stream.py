"""Scoring one model's raw detections chunk by chunk, in memory bounded by the chunk (docs/scale.md).

:func:`score_stream` takes the scene (the ground truth: every frame and label, a few dozen bytes
each) and the raw detections as chunks of whole frames
(:func:`~candor_eval.detection.detections_file.iter_chunks` from the file,
:func:`~candor_eval.detection.detections_file.split_chunks` from memory). Each chunk is
scored on its own frames and their labels: NMS and matching never cross a frame, so this is
exactly the result of scoring every box at once. The chunk's counts are added to a
:class:`~candor_eval.detection.scoring.tally.Tally`, its per-frame and per-label outcomes kept in
:class:`~candor_eval.detection.scoring.records.Outcomes`, its served detections handed to ``export``
(the COCO export writes them as they come), and its boxes dropped. Memory: one chunk's boxes plus a
few arrays per frame and label; time: linear in the number of boxes.
"""
from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from candor_eval.common.errors import fail
from candor_eval.detection.detections_file import RawDetections
from candor_eval.detection.scoring.anatomy import FP_KINDS, error_anatomy
from candor_eval.detection.scoring.box_quality import tp_box_errors
from candor_eval.detection.scoring.boxes import stable_key_order
from candor_eval.detection.scoring.coco_ap import match_for_ap
from candor_eval.detection.scoring.columns import DetectionTable
from candor_eval.detection.scoring.metrics import operating_point, wrong_targets
from candor_eval.detection.scoring.nms_match import score_served
from candor_eval.detection.scoring.records import Anatomy, APMatches, OperatingPoint, Outcomes, Scene, Scored
from candor_eval.detection.scoring.scene import SceneInputs
from candor_eval.detection.scoring.tally import Tally
from candor_eval.detection.served import Served


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


def chunk_scenes(inputs: SceneInputs, chunks: Iterable[RawDetections], *,
                 where: str) -> Iterator[tuple[np.ndarray, Scene, np.ndarray, RawDetections]]:
    """Each chunk on the scene: ``(frames, sub, labels, chunk)``, its frames' scene indices, their
    :func:`sub_scene` and its labels' scene indices, and the chunk with its classes mapped to the scene's.
    Every frame of the scene must come in exactly one chunk (else an input error naming ``where``:
    the detections changed while read)."""
    scene = inputs.scene
    position = {f: i for i, f in enumerate(scene.frames.tolist())}
    seen = np.zeros(len(scene.frames), bool)
    order, start = frame_labels(scene)
    for chunk in chunks:
        frames = np.array([position.get(f, -1) for f in chunk.frames], dtype=np.int64)
        # a frame twice in the chunk: a count above 1 (np.bincount: np.unique would import numpy.ma)
        if (frames < 0).any() or seen[frames].any() or (np.bincount(frames) > 1).any():
            raise fail(where, "the detections changed while they were read (a frame is unknown or repeated)",
                       hint="rerun the command; if it persists: dvc repro detect")
        seen[frames] = True
        sub, labels = sub_scene(scene, frames, order=order, start=start)
        yield frames, sub, labels, replace(chunk, cls=inputs.scope.model_to_class[chunk.cls])
    if not seen.all():
        raise fail(where, "the detections changed while they were read (frames are missing)",
                   hint="rerun the command; if it persists: dvc repro detect")


def record_outcomes(out: Outcomes, s: Scored, op: OperatingPoint, anatomy: Anatomy, *, frames: np.ndarray,
                    labels: np.ndarray) -> None:
    """Write one chunk's per-frame and per-label outcomes into ``out``: ``s``, ``op`` and ``anatomy`` are
    on the chunk's sub-scene, whose frames are the scene's ``frames`` and labels its ``labels``."""
    sub, n, n_k = s.scene, len(frames), len(FP_KINDS)
    out.tp[frames] = np.bincount(s.frame[op.tp], minlength=n)
    out.fp[frames] = np.bincount(s.frame[op.fp], minlength=n)
    out.fn[frames] = np.bincount(sub.label_frame[op.fn], minlength=n)
    out.found[labels] = op.found
    is_fp = anatomy.fp_kind >= 0
    out.fp_kinds[frames] = np.bincount(s.frame[is_fp] * n_k + anatomy.fp_kind[is_fp], minlength=n * n_k).reshape(n, n_k)
    out.fn_aimed[frames] = np.bincount(sub.label_frame[anatomy.fn_aimed], minlength=n)
    tp = np.flatnonzero(op.tp)
    iou, edge = tp_box_errors(s.boxes[tp], sub.label_boxes[s.label[tp]], sub.scale[s.frame[tp]])
    out.tp_iou[labels[s.label[tp]]] = iou
    out.tp_edge[labels[s.label[tp]]] = edge


def ap_matches(floor: Scored, frames: np.ndarray) -> APMatches:
    """The COCO AP matches (:func:`~candor_eval.detection.scoring.coco_ap.match_for_ap`) of every box of
    ``floor`` (after NMS, before thresholds), frames as the scene's indices ``frames``: ``floor.ap`` when
    they were matched beside the operating point (:func:`~candor_eval.detection.scoring.nms_match.score_detections`)."""
    if floor.ap is not None:
        return replace(floor.ap, frame=frames[floor.ap.frame])
    sub = floor.scene
    m = match_for_ap(n_classes=len(sub.classes), label_frame=sub.label_frame, label_class=sub.label_class,
                     label_boxes=sub.label_boxes, label_crowd=sub.label_crowd, det_frame=floor.frame,
                     det_class=floor.cls, det_boxes=floor.boxes, det_score=floor.score)
    return replace(m, frame=frames[m.frame])


def served_table(s: Scored, op: OperatingPoint, frames: np.ndarray) -> DetectionTable:
    """The detections kept at the operating point, frames as the scene's indices ``frames``."""
    kept = np.flatnonzero(op.kept)
    return DetectionTable(classes=s.scene.classes, frame=frames[s.frame[kept]], cls=s.cls[kept],
                          boxes=s.boxes[kept], score=s.score[kept])


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block (restored as it was, also on an error).

    Reading a chunk makes ~10**5 short-lived Python objects (a list per box row, freed by reference
    counting once the chunk's arrays are made); their allocation sets the collector off again and
    again, to walk them and, every few chunks, every object alive, for no garbage (the rows hold no
    cycles), at a cost per chunk that grew with the run (bench/NOTES.md: the per-frame cost of 100k
    frames was 1.35x that of 10k with it, 0.94x without). Memory is still freed by reference
    counting; only cyclic garbage made inside the block (the scoring code makes none) waits for the
    collector's next run after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def score_stream(inputs: SceneInputs, chunks: Iterable[RawDetections], served: Served, *, tally: Tally,
                 critical: list[str], where: str, export: Callable[[DetectionTable], None] | None = None,
                 ap: Callable[[APMatches], None] | None = None) -> tuple[Tally, Outcomes]:
    """Score the chunks against ``inputs`` (:func:`~candor_eval.detection.scoring.scene.build_scene`) as
    ``served`` serves them (thresholds, NMS, matching IoU; a class-agnostic or capped NMS scores the
    operating point on the thresholded boxes, :func:`~candor_eval.detection.scoring.nms_match.score_served`),
    adding every chunk's counts to ``tally`` (:meth:`~candor_eval.detection.scoring.tally.Tally.empty`
    on the scene's frame groups) with the wrong targets of the ``critical`` classes. ``export`` receives
    each chunk's served detections, ``ap`` its COCO AP matches of every box after NMS, before thresholds
    (frames as scene indices); ``where`` names the detections in errors (:func:`chunk_scenes`)."""
    scene = inputs.scene
    out = Outcomes.empty(scene, n_kinds=len(FP_KINDS))
    critical_idx = [scene.classes.index(c) for c in critical]
    with collector_paused():
        _stream(inputs, chunks, served, tally=tally, out=out, critical_idx=critical_idx, where=where, export=export,
                ap=ap)
    return tally, out


def _stream(inputs: SceneInputs, chunks: Iterable[RawDetections], served: Served, *, tally: Tally, out: Outcomes,
            critical_idx: list[int], where: str, export: Callable[[DetectionTable], None] | None,
            ap: Callable[[APMatches], None] | None) -> None:
    """The loop of :func:`score_stream`: each chunk scored and added to ``tally`` and ``out``."""
    for frames, sub, labels, chunk in chunk_scenes(inputs, chunks, where=where):
        floor, s = score_served(sub, frame=chunk.frame, cls=chunk.cls, boxes=chunk.boxes, score=chunk.score,
                                served=served, ap=ap is not None)
        op = operating_point(s, served)
        anatomy = error_anatomy(s, op)
        tally.add(s, op, wrong=wrong_targets(s, op, classes=critical_idx), anatomy=anatomy,
                  of_frame=tally.groups.of_frame[frames], curves=None if s is floor else floor)
        record_outcomes(out, s, op, anatomy, frames=frames, labels=labels)
        if ap is not None:
            ap(ap_matches(floor, frames))
        if export is not None:
            export(served_table(s, op, frames))
