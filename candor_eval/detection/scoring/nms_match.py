"""NMS, then the matcher: the matched arrays of one model on one scene, before any threshold.

:func:`score_detections` runs the served post-processing on every raw box above
``detector.floor`` and matches what it keeps (definitions: :mod:`candor_eval.detection.scoring.metrics`):

1. same-class greedy NMS at ``nms_iou`` (:func:`candor_eval.detection.scoring.boxes.nms`, per frame and
   class; across the classes of a frame with ``agnostic``), then at most ``max_det`` boxes per frame;
2. greedy one-to-one matching per frame and class at IoU >= ``match_iou``
   (:func:`candor_eval.detection.scoring.matching.match_detections`).

Both are greedy in score order, so dropping the detections below a threshold (a suffix of each
group's order) gives exactly the result of thresholding first, as the served path does: every
threshold is read off the same :class:`Scored` arrays
(:func:`candor_eval.detection.scoring.metrics.operating_point`). A class-agnostic or capped NMS breaks
that; its operating point is scored on the thresholded boxes (:mod:`candor_eval.detection.scoring.stream`).
"""
from __future__ import annotations

import numpy as np

from candor_eval.detection.scoring.boxes import key_chunks, nms, rank_order, within_group_ranks
from candor_eval.detection.scoring.coco_ap import AP_IOUS, MAX_DETS, ap_bits
from candor_eval.detection.scoring.matching import Ties, match_at_ious
from candor_eval.detection.scoring.records import APMatches, Scene, Scored
from candor_eval.detection.served import Served

# detections scored at once: whole frames, arrays that fit the CPU caches (score_detections)
CHUNK_DETS = 32_768


def score_detections(scene: Scene, *, frame: np.ndarray, cls: np.ndarray, boxes: np.ndarray,
                     score: np.ndarray, nms_iou: float | None, match_iou: float, agnostic: bool = False,
                     max_det: int | None = None, chunk_dets: int = CHUNK_DETS, ap: bool = False) -> Scored:
    """NMS (skipped when ``nms_iou`` is None; across the classes of a frame with ``agnostic``), then
    at most ``max_det`` boxes per frame (the highest-scored; ties in the sorted order: class, then
    input order), then match; see the module docstring. With ``ap``, the boxes after NMS are also
    matched for COCO AP in the same pass (``Scored.ap``): the same as
    :func:`~candor_eval.detection.scoring.coco_ap.match_for_ap` on them, whose visit order (frame,
    class, score descending, ties in input order) is the one sorted here, so the candidate pairs,
    their IoUs and their sort serve the operating point's threshold and AP's ten at once (AP's first
    ``max_dets`` of a group are matched as if alone: a greedy visit never looks at lower ranks).

    Truth (``scene``) first, then the raw detections: ``frame`` ``(D,)`` frame
    indices, ``cls`` ``(D,)`` class indices into ``scene.classes``, ``boxes``
    ``(D, 4)`` xyxy original px, ``score`` ``(D,)``.

    Frames never interact, so the work runs over chunks of whole frames of about
    ``chunk_dets`` detections each (:func:`candor_eval.detection.scoring.boxes.key_chunks`): every sort
    and gather then works on cache-sized arrays and the cost stays linear in the
    number of boxes. The result does not depend on ``chunk_dets``.
    """
    n_cls = max(len(scene.classes), 1)
    frame = np.asarray(frame, dtype=np.int64)
    cls = np.asarray(cls, dtype=np.int64)
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    score = np.asarray(score, dtype=np.float64)
    label_groups = scene.label_frame * n_cls + scene.label_class
    label_score = np.full(len(scene.label_frame), -np.inf)
    # each chunk's kept boxes, in order: their index into the input, matched label, ignored (the input's
    # columns are read once at the end: no chunk keeps copies of its boxes)
    kept: dict[str, list[np.ndarray]] = {"det": [np.zeros(0, np.int64)], "label": [np.zeros(0, np.int64)],
                                         "ignored": [np.zeros(0, bool)]}
    if ap and len(scene.classes) > 32_767:
        raise ValueError(f"n_classes must be at most 32767 for AP, got {len(scene.classes)}")
    # the operating point's match (ties to the lower label), then AP's (ties to the higher, as pycocotools)
    ious = [match_iou, *(AP_IOUS if ap else ())]
    higher: list[Ties] = ["higher"] * len(AP_IOUS) if ap else []
    ties: list[Ties] = ["lower", *higher]
    ap_parts: list[APMatches] = []
    for d, lab in key_chunks(frame, scene.label_frame, n_keys=len(scene.frames), max_dets=chunk_dets):
        if len(d) == 0:
            continue
        # one sort by (group, score desc, input order); NMS and matching then see sorted input
        groups, sc = frame[d] * n_cls + cls[d], score[d]
        order = rank_order(groups, sc)
        d, groups, sc, b = d[order], groups[order], sc[order], boxes[d[order]]
        if nms_iou is not None:
            keep = np.flatnonzero(nms(frame[d] if agnostic else groups, b, sc, iou=nms_iou))
            d, groups, sc, b = d[keep], groups[keep], sc[keep], b[keep]
        if max_det is not None:
            by_frame = rank_order(frame[d], sc)
            rank = np.empty(len(d), np.int64)
            rank[by_frame] = within_group_ranks(frame[d][by_frame])[0]
            keep = np.flatnonzero(rank < max_det)
            d, groups, sc, b = d[keep], groups[keep], sc[keep], b[keep]
        matches = match_at_ious(label_groups[lab], scene.label_boxes[lab], groups, b, sc, ious=ious,
                                label_crowd=scene.label_crowd[lab], label_ties=ties)
        m = matches[0]
        if ap:
            tp, ign = ap_bits(matches[1:])
            f, c = frame[d], cls[d]
            # groups come sorted: one has more than MAX_DETS boxes iff a box has the same group MAX_DETS later
            if len(groups) > MAX_DETS and (groups[MAX_DETS:] == groups[:-MAX_DETS]).any():
                top = within_group_ranks(groups)[0] < MAX_DETS
                f, c, tp, ign, s_top = f[top], c[top], tp[top], ign[top], sc[top]
            else:
                s_top = sc
            ap_parts.append(APMatches(f.astype(np.int32), c.astype(np.int16), s_top, tp, ign))
        found = m.label_det >= 0
        label_score[lab[found]] = sc[m.label_det[found]]
        matched = m.det_label >= 0
        scene_label = np.full(len(d), -1, dtype=np.int64)     # the chunk's label index -> the scene's
        scene_label[matched] = lab[m.det_label[matched]]
        for key, part in (("det", d), ("label", scene_label), ("ignored", m.det_ignored)):
            kept[key].append(part)
    det = np.concatenate(kept.pop("det"))
    return Scored(scene=scene, frame=frame[det], cls=cls[det], boxes=boxes[det], score=score[det],
                  label=np.concatenate(kept.pop("label")),
                  ignored=np.concatenate(kept.pop("ignored")), label_score=label_score, match_iou=match_iou,
                  ap=APMatches.concat(ap_parts) if ap else None)


def score_served(scene: Scene, *, frame: np.ndarray, cls: np.ndarray, boxes: np.ndarray, score: np.ndarray,
                 served: Served, ap: bool = False) -> tuple[Scored, Scored]:
    """The raw boxes (as :func:`score_detections` takes them) scored as ``served`` serves them:
    ``(floor, at_threshold)``. ``floor``: every box, the served NMS, then matched at ``served.match_iou``
    (what the curves and the AP read). ``at_threshold``: the same object when the served NMS is per
    class (:attr:`~candor_eval.detection.served.ServedNms.per_class`: every threshold is read off it);
    else the boxes :meth:`~candor_eval.detection.served.Served.keeps` keeps, scored again, as served
    (thresholds first; :mod:`candor_eval.detection.scoring.metrics`). With ``ap``, ``floor`` carries the
    COCO AP matches of its boxes (:func:`score_detections`)."""
    nms = served.nms
    floor = score_detections(scene, frame=frame, cls=cls, boxes=boxes, score=score, nms_iou=nms.iou,
                             match_iou=served.match_iou, agnostic=nms.agnostic, max_det=nms.max_det, ap=ap)
    if nms.per_class:
        return floor, floor
    above = served.keeps(score, cls)
    return floor, score_detections(scene, frame=frame[above], cls=cls[above], boxes=boxes[above], score=score[above],
                                   nms_iou=nms.iou, match_iou=served.match_iou, agnostic=nms.agnostic,
                                   max_det=nms.max_det)
