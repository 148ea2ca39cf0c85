"""COCO average precision (AP), threshold-free: AP50 and AP@[.5:.95], as pycocotools' COCOeval
computes them for boxes with area range ``all`` and ``maxDets`` 100. Higher is better.

Definition, per class ``c`` with ``n_c > 0`` non-crowd labels (a class without any is left out:
``None``), and per IoU threshold ``t`` of :data:`IOU_THRESHOLDS` (0.50, 0.55, ..., 0.95):

1. per image, the class's detections by score (ties in input order), the first ``max_dets`` kept;
2. they are matched to the image's labels of the class in that order with the one matcher
   (:func:`~candor_eval.detection.scoring.matching.match_detections`) at IoU ``>= min(t, 1 - 1e-10)``,
   IoU ties to the *later* label (pycocotools' loop); a detection matched to no label but inside a
   crowd region (``inter / area(det) >= t``) is ignored;
3. all the class's kept detections of every image, by score, ties by image (in ``image_order``)
   then by their order in the image, give the cumulative ``TP(i)``, ``FP(i)`` (ignored ones count
   in neither); recall ``TP/n_c``, precision ``TP / (TP + FP + eps)`` (``eps`` = ``np.spacing(1)``);
4. precision is made non-increasing from the right, read at the 101 recall points
   :data:`RECALL_THRESHOLDS` (the first detection whose recall reaches the point; 0 beyond the
   last), and averaged: ``AP_t(c)``.

``ap50(c) = AP_0.5(c)``, ``ap50_95(c)`` the mean over the ten ``t``; ``map50`` and ``map50_95``
the means over the classes that have labels (pycocotools' mean over every element of its
precision array that is not -1), ``None`` when no class has a label. Means are taken with
:func:`math.fsum` (exactly rounded, so the bits do not depend on the CPU); they agree with
pycocotools' ``np.mean`` to about 1e-16.

Where candor's inputs differ from pycocotools' (docs/detector.md, "COCO AP"): labels carry no
``area`` field (pycocotools also ignores, for area ``all``, a label whose ``area`` is negative or
above 1e10); pycocotools records a match by the label's annotation ``id`` and reads ``id 0`` as
"unmatched" (such a label can never be found there; here it can); results naming an unknown
image or category are refused by the readers (pycocotools asserts on images, ignores unknown
categories).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from candor_eval.detection.scoring.boxes import (
    descending_order,
    key_chunks,
    rank_order,
    stable_key_order,
    within_group_ranks,
)
from candor_eval.detection.scoring.matching import Matches, match_at_ious
from candor_eval.detection.scoring.records import APMatches, APMatchesByClass

IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALL_THRESHOLDS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
MAX_DETS = 100
AP_IOUS = tuple(min(float(t), 1 - 1e-10) for t in IOU_THRESHOLDS)     # the matcher's thresholds (step 2)
CHUNK_DETS = 32_768    # detections matched at once: whole frames (as in candor_eval.detection.scoring.nms_match)


@dataclass(frozen=True)
class AveragePrecision:
    """``precision`` ``(T, R, C)``: the interpolated precision at each IoU threshold, recall point
    and class, ``-1`` for a class without labels (pycocotools' ``eval["precision"][..., 0, -1]``)."""

    classes: tuple[str, ...]
    precision: np.ndarray

    def per_class(self) -> dict[str, tuple[float | None, float | None]]:
        """``name -> (ap50, ap50_95)``, ``None`` for a class without labels."""
        out: dict[str, tuple[float | None, float | None]] = {}
        for k, name in enumerate(self.classes):
            p = self.precision[:, :, k]
            out[name] = (None, None) if p[0, 0] < 0 else (_mean(p[0]), _mean(p))
        return out

    def mean(self) -> tuple[float | None, float | None]:
        """``(map50, map50_95)`` over the classes with labels."""
        p = self.precision
        has = p[0, 0] >= 0
        if not has.any():
            return None, None
        return _mean(p[0][:, has]), _mean(p[:, :, has])

    def block(self, category_ids: list[int]) -> dict:
        """The metrics files' ``ap`` block: ``{"map50", "map50_95", "per_class": {name:
        {"category_id", "ap50", "ap50_95"}}}`` (classes in ``classes`` order, their COCO ids)."""
        m50, m = self.mean()
        return {"map50": m50, "map50_95": m,
                "per_class": {name: {"category_id": int(cid), "ap50": a50, "ap50_95": a}
                              for (name, (a50, a)), cid in zip(self.per_class().items(), category_ids)}}


def _mean(values: np.ndarray) -> float:
    v = np.asarray(values, dtype=np.float64).ravel()
    return math.fsum(v.tolist()) / len(v)


def match_for_ap(*, n_classes: int, label_frame: np.ndarray, label_class: np.ndarray, label_boxes: np.ndarray,
                 label_crowd: np.ndarray, det_frame: np.ndarray, det_class: np.ndarray, det_boxes: np.ndarray,
                 det_score: np.ndarray, max_dets: int = MAX_DETS) -> APMatches:
    """Steps 1-2 of the definition: each image's and class's first ``max_dets`` detections by score
    (ties in input order), matched at every IoU threshold (arguments: :func:`average_precision`;
    ``n_classes`` at most 32,767, the compact field's range)."""
    if n_classes > 32_767:
        raise ValueError(f"n_classes must be at most 32767, got {n_classes}")
    n_c = max(n_classes, 1)
    det_frame = np.asarray(det_frame, np.int64)
    det_class = np.asarray(det_class, np.int64)
    det_score = np.asarray(det_score, np.float64)
    det_boxes = np.asarray(det_boxes, np.float64).reshape(-1, 4)
    label_frame = np.asarray(label_frame, np.int64)
    label_groups = label_frame * n_c + np.asarray(label_class, np.int64)
    label_boxes, crowd = np.asarray(label_boxes, np.float64).reshape(-1, 4), np.asarray(label_crowd, bool)
    n_frames = int(max(det_frame.max(initial=-1), label_frame.max(initial=-1))) + 1
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    # chunks of whole frames (matching never crosses one): every sort and pair temporary stays cache-sized.
    # A chunk's detections come by frame, then input order, so sorting them by (frame, class, score
    # descending) keeps input order for ties: each group's visit order, and the chunks in frame order
    # give every image's and class's boxes in one global (frame, class, visit) order.
    for d, lab in key_chunks(det_frame, label_frame, n_keys=n_frames, max_dets=CHUNK_DETS):
        if len(d) == 0:
            continue
        groups = det_frame[d] * n_c + det_class[d]
        order = rank_order(groups, det_score[d])
        d, groups = d[order], groups[order]
        keep = within_group_ranks(groups)[0] < max_dets
        d, groups = d[keep], groups[keep]
        matches = match_at_ious(label_groups[lab], label_boxes[lab], groups, det_boxes[d], det_score[d],
                                ious=AP_IOUS, label_crowd=crowd[lab], label_ties="higher")
        parts.append((d, *ap_bits(matches)))
    d = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    tp = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.uint16)
    ignored = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.uint16)
    return APMatches(det_frame[d].astype(np.int32), det_class[d].astype(np.int16), det_score[d], tp, ignored)


def ap_bits(matches: list[Matches]) -> tuple[np.ndarray, np.ndarray]:
    """The ``tp`` and ``ignored`` bits (:class:`~candor_eval.detection.scoring.records.APMatches`) of the
    same detections matched at each threshold of :data:`AP_IOUS` (``matches``, in that order)."""
    n = len(matches[0].det_label) if matches else 0
    tp, ignored = np.zeros(n, np.uint16), np.zeros(n, np.uint16)
    for i, m in enumerate(matches):
        tp |= m.det_tp.astype(np.uint16) << i
        ignored |= m.det_ignored.astype(np.uint16) << i
    return tp, ignored


def accumulate(m: APMatches, *, classes: tuple[str, ...], n_labels: np.ndarray,
               image_order: np.ndarray | None = None) -> AveragePrecision:
    """Steps 3-4 of the definition: ``n_labels`` ``(C,)`` non-crowd labels per class on the frames
    of ``m``, whose images may come in any order but each image's boxes of a class in visit order
    (as :func:`match_for_ap` gives them); ``image_order``: :func:`average_precision`."""
    return accumulate_subsets(APMatchesByClass.of(m, len(classes)), classes=classes,
                              subsets={"all": (None, n_labels)}, image_order=image_order)["all"]


def accumulate_subsets(matches: APMatchesByClass, *, classes: tuple[str, ...],
                       subsets: dict[str, tuple[np.ndarray | None, np.ndarray]],
                       image_order: np.ndarray | None = None) -> dict[str, AveragePrecision]:
    """:func:`accumulate` of several subsets of the frames of ``matches`` at once, taking (emptying) them
    class by class: ``subsets`` maps a name to ``(frames, n_labels)``, ``frames`` a bool mask ``(F,)``
    (None: every frame) and ``n_labels`` its non-crowd labels per class. The AP of a subset is the AP
    of its frames' matches alone.

    One class at a time: its boxes are put in sequence (score descending, image in ``image_order``,
    then the order they came: each image's visit order); a subset's sequence is that sequence
    restricted to its frames (a stable order restricted is the subset's own). Memory beyond the
    matches: one class's sequence at a time.
    """
    T, R = len(IOU_THRESHOLDS), len(RECALL_THRESHOLDS)
    order = np.asarray(image_order, np.int64) if image_order is not None else None
    out = {name: -np.ones((T, R, len(classes))) for name in subsets}
    for k in range(len(classes)):
        m = matches.take(k)
        if not any(n_labels[k] for _, n_labels in subsets.values()):
            continue
        # score descending, image, then the order they came: stable linear sorts from the last key to the first
        seq = descending_order(m.score, stable_key_order(m.frame if order is None else order[m.frame]))
        for name, (frames, n_labels) in subsets.items():
            if n_labels[k] == 0:
                continue
            sub = seq if frames is None else seq[np.asarray(frames, bool)[m.frame[seq]]]
            out[name][:, :, k] = _interpolated_precision(m.tp[sub], m.ignored[sub], int(n_labels[k]))
    return {name: AveragePrecision(classes=tuple(classes), precision=p) for name, p in out.items()}


def _interpolated_precision(tp_bits: np.ndarray, ignored_bits: np.ndarray, n_labels: int) -> np.ndarray:
    """Step 4 for one class: ``(T, R)``, the interpolated precision at each IoU threshold and recall
    point, of its boxes in sequence (their match and ignore bits) against its ``n_labels`` labels.
    One threshold at a time: a few arrays of the class's boxes at once.

    The counts are integer running sums, turned into float64 only to divide (exact below 2**53, so the
    same values as summing 0/1 in float64); ``TP + FP`` is the running count of boxes not ignored (a box
    is never both matched and ignored). Recall ``TP / n_labels`` (float64) reaches a recall point ``r``
    exactly when ``TP`` reaches the first count ``c`` with ``c / n_labels >= r`` (the division is
    monotone in ``c``), so the first box reaching each point is found on the integer sums. The precision
    made non-increasing from the right is needed only at the recall points: the maximum of each stretch
    between consecutive points, then those maxima from the right (the same values as the whole running
    maximum, read there)."""
    q = np.zeros((len(IOU_THRESHOLDS), len(RECALL_THRESHOLDS)))
    n = len(tp_bits)
    if n == 0:
        return q
    # per recall point, the first TP count whose recall reaches it (n + 1: none of 0..n does)
    reach = np.searchsorted(np.arange(n + 1, dtype=np.float64) / n_labels, RECALL_THRESHOLDS, side="left")
    counted_all = np.arange(1, n + 1, dtype=np.float64) + np.spacing(1)     # TP + FP + eps, no box ignored
    some_ignored = bool(np.asarray(ignored_bits).any())
    for i in range(len(IOU_THRESHOLDS)):
        tps = np.cumsum((tp_bits >> i) & 1, dtype=np.int64)
        at = np.searchsorted(tps, reach, side="left")
        reached = int(np.count_nonzero(at < n))               # recall points some box reaches (0 beyond)
        if reached == 0:
            continue
        at = at[:reached]
        a0 = int(at[0])
        if some_ignored and (ignored := (ignored_bits >> i) & 1).any():
            den = np.cumsum(1 - ignored, dtype=np.int64)[a0:].astype(np.float64)
            den += np.spacing(1)
        else:
            den = counted_all[a0:]
        pr = tps[a0:] / den
        stretch = np.maximum.reduceat(pr, at - a0)
        q[i, :reached] = np.maximum.accumulate(stretch[::-1])[::-1]
    return q


def average_precision(*, classes: tuple[str, ...], label_frame: np.ndarray, label_class: np.ndarray,
                      label_boxes: np.ndarray, label_crowd: np.ndarray, det_frame: np.ndarray, det_class: np.ndarray,
                      det_boxes: np.ndarray, det_score: np.ndarray, image_order: np.ndarray | None = None,
                      max_dets: int = MAX_DETS) -> AveragePrecision:
    """COCO AP of the detections against the labels (see the module docstring).

    Truth first: per label ``(L,)`` its frame index, class index into ``classes``, ``(L, 4)`` xyxy
    box and crowd flag; then per detection ``(D,)`` frame, class, xyxy box and score, in input
    order (the tie order within an image). ``image_order`` ``(F,)``: each frame's rank in the
    image order that breaks score ties across images (pycocotools: ascending image id; default:
    frame index). Empty detections give AP 0 for every class with labels.
    """
    m = match_for_ap(n_classes=len(classes), label_frame=label_frame, label_class=label_class,
                     label_boxes=label_boxes, label_crowd=label_crowd, det_frame=det_frame, det_class=det_class,
                     det_boxes=det_boxes, det_score=det_score, max_dets=max_dets)
    crowd = np.asarray(label_crowd, bool)
    n_labels = np.bincount(np.asarray(label_class, np.int64)[~crowd], minlength=len(classes))
    return accumulate(m, classes=classes, n_labels=n_labels, image_order=image_order)
