"""The one matcher: greedy one-to-one matching of detections to labels, by confidence.

Definition (docs/detector.md, "Served post-processing and matching"). Within each group (normally one image and one
class),
detections are visited by confidence, higher first; equal confidences are
visited in input order (lower original index first). A visited detection takes
the still-unmatched label of its group with the highest IoU, provided that IoU
is **at least** ``iou`` (IoU exactly at the threshold is a match); IoU ties
between labels go to the lower label index. A detection that takes a label is a
true positive (TP); one that takes none is a false positive (FP); a label that
no detection takes is a false negative (FN). Detections of a group with no
labels (for instance a class that has no labels at all) are all FP.

Crowd labels (COCO ``iscrowd: 1``) follow pycocotools: they are never FN, and a
detection that matched no regular label but covers a crowd region of its group
(``inter / area(detection) >= iou``) is *ignored*: neither TP nor FP. A crowd
region may absorb any number of detections.

Because a detection's match depends only on detections ranked above it,
dropping every detection below a score threshold (a suffix of the visit order
in each group) leaves the remaining matches unchanged. The score stage uses
that to match once at the floor and read every threshold (operating points, PR
and F1-versus-threshold curves) off the same matched arrays.

Vectorised: the candidate pairs (IoU >= ``iou``) of all groups are found at
once; step ``r`` resolves every group's rank-``r`` detection simultaneously
(one detection per group per step, so steps never conflict).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from candor_eval.detection.scoring.boxes import (
    as_boxes,
    iter_group_pairs,
    paired_crowd_iou,
    paired_iou,
    rank_order,
    within_group_ranks,
)

Ties = Literal["lower", "higher"]
_OTHER: dict[str, Ties] = {"lower": "higher", "higher": "lower"}


@dataclass(frozen=True)
class Matches:
    """Result of :func:`match_detections`.

    ``det_label``: ``(D,)`` int64, the index of the label each detection matched, or -1.
    ``det_iou``: ``(D,)`` float64, IoU with that label (0 when unmatched).
    ``det_ignored``: ``(D,)`` bool, unmatched but inside a crowd region (neither TP nor FP).
    ``label_det``: ``(L,)`` int64, the index of the detection that matched each label, or -1
    (always -1 for crowd labels).
    """

    det_label: np.ndarray
    det_iou: np.ndarray
    det_ignored: np.ndarray
    label_det: np.ndarray

    @property
    def det_tp(self) -> np.ndarray:
        return self.det_label >= 0

    @property
    def det_fp(self) -> np.ndarray:
        return (self.det_label < 0) & ~self.det_ignored

    @property
    def label_found(self) -> np.ndarray:
        return self.label_det >= 0


def match_detections(label_groups: np.ndarray, label_boxes: np.ndarray,
                     det_groups: np.ndarray, det_boxes: np.ndarray, det_scores: np.ndarray, *,
                     iou: float = 0.5, label_crowd: np.ndarray | None = None,
                     label_ties: Ties = "lower") -> Matches:
    """Greedy one-to-one matching (see the module docstring for the definition).

    Truth first: ``label_groups`` ``(L,)`` int, ``label_boxes`` ``(L, 4)`` xyxy;
    then predictions: ``det_groups`` ``(D,)``, ``det_boxes`` ``(D, 4)``,
    ``det_scores`` ``(D,)``. ``label_crowd`` ``(L,)`` bool marks crowd labels
    (default: none). ``label_ties``: which label an IoU tie goes to, the lower index (candor's
    rule) or the higher (pycocotools', whose loop keeps the last of equal IoUs: what COCO AP uses,
    :mod:`candor_eval.detection.scoring.coco_ap`). Empty inputs are fine: no labels makes every
    detection FP, no detections makes every regular label FN.

    >>> m = match_detections(np.array([0]), np.array([[0., 0, 10, 10]]),
    ...                      np.array([0, 0]), np.array([[0., 0, 10, 10], [0., 0, 10, 10]]),
    ...                      np.array([0.9, 0.8]))
    >>> m.det_label.tolist(), m.label_det.tolist()
    ([0, -1], [0])
    """
    return match_at_ious(label_groups, label_boxes, det_groups, det_boxes, det_scores, ious=(iou,),
                         label_crowd=label_crowd, label_ties=label_ties)[0]


def match_at_ious(label_groups: np.ndarray, label_boxes: np.ndarray,
                  det_groups: np.ndarray, det_boxes: np.ndarray, det_scores: np.ndarray, *,
                  ious: Sequence[float], label_crowd: np.ndarray | None = None,
                  label_ties: Ties | Sequence[Ties] = "lower") -> list[Matches]:
    """:func:`match_detections` at each IoU threshold of ``ious`` (one :class:`Matches` each, in
    order; ``label_ties`` one rule for all or one per threshold): the candidate pairs and their IoUs
    are found and sorted once, at the lowest threshold, and the greedy visit is run once per
    threshold on the pairs that reach it (what COCO AP's ten thresholds need, and the operating
    point's match beside them). The two tie rules visit the pairs in the same order unless a
    detection has two candidate labels at exactly the same IoU; only then are they sorted twice."""
    label_groups = np.asarray(label_groups, dtype=np.int64)
    det_groups = np.asarray(det_groups, dtype=np.int64)
    label_boxes, det_boxes = as_boxes(label_boxes), as_boxes(det_boxes)
    det_scores = np.asarray(det_scores, dtype=np.float64)
    n_lab, n_det = len(label_groups), len(det_groups)
    crowd = np.zeros(n_lab, dtype=bool) if label_crowd is None else np.asarray(label_crowd, dtype=bool)

    ties = [label_ties] * len(ious) if isinstance(label_ties, str) else list(label_ties)
    if len(ties) != len(ious):
        raise ValueError(f"label_ties: one rule or one per threshold ({len(ious)}), got {len(ties)}")
    out = [Matches(np.full(n_det, -1, dtype=np.int64), np.zeros(n_det, dtype=np.float64),
                   np.zeros(n_det, dtype=bool), np.full(n_lab, -1, dtype=np.int64)) for _ in ious]
    if n_det == 0 or not len(ious):
        return out
    low = min(ious)

    order = rank_order(det_groups, det_scores)
    rank = np.empty(n_det, dtype=np.int64)
    rank[order] = within_group_ranks(det_groups[order])[0]

    regular = np.flatnonzero(~crowd)
    for ia, ib in iter_group_pairs(det_groups, label_groups[regular]):
        ib = regular[ib]
        v = paired_iou(det_boxes[ia], label_boxes[ib])
        ok = v >= low
        ia, ib, v = ia[ok], ib[ok], v[ok]
        if len(ia) == 0:
            continue
        # visit order: detection rank, then group (any), then best IoU, then the label_ties index
        first = ties[0]
        srt = np.lexsort((ib if first == "lower" else -ib, -v, det_groups[ia], rank[ia]))
        by_rule = {first: (ia[srt], ib[srt], v[srt])}
        if any(t != first for t in ties):
            a, b, w = by_rule[first]
            # pairs the rules order differently: one detection's (adjacent) candidates at the same IoU
            if ((a[1:] == a[:-1]) & (w[1:] == w[:-1])).any():
                srt = np.lexsort((ib if first != "lower" else -ib, -v, det_groups[ia], rank[ia]))
                by_rule[_OTHER[first]] = (ia[srt], ib[srt], v[srt])
            else:
                by_rule[_OTHER[first]] = by_rule[first]
        for iou, rule, m in zip(ious, ties, out):
            a, b, w = by_rule[rule]
            reach = w >= iou
            _resolve(m, a[reach], b[reach], w[reach], rank)

    crowd_idx = np.flatnonzero(crowd)
    if len(crowd_idx):
        for ia, ib in iter_group_pairs(det_groups, label_groups[crowd_idx]):
            cover = paired_crowd_iou(det_boxes[ia], label_boxes[crowd_idx[ib]])
            for iou, m in zip(ious, out):
                hit = ia[(cover >= iou) & (m.det_label[ia] < 0)]
                m.det_ignored[hit] = True
    return out


def _resolve(m: Matches, ia: np.ndarray, ib: np.ndarray, v: np.ndarray, rank: np.ndarray) -> None:
    """The greedy visit over candidate pairs in visit order (``ia`` detections, ``ib`` labels,
    ``v`` IoUs), writing the matches into ``m``: step ``r`` resolves every group's rank-``r``
    detection at once (one detection per group per step, so steps never conflict)."""
    if len(ia) == 0:
        return
    r = rank[ia]
    edges = [0, *(np.flatnonzero(r[1:] != r[:-1]) + 1).tolist(), len(ia)]
    for s0, s1 in zip(edges[:-1], edges[1:]):
        sa, sb, sv = ia[s0:s1], ib[s0:s1], v[s0:s1]
        free = m.label_det[sb] < 0
        if not free.any():
            continue
        sa, sb, sv = sa[free], sb[free], sv[free]
        # one detection per group at this rank, its candidates contiguous (sorted by rank, then group):
        # the first free candidate of each detection wins
        first = np.empty(len(sa), dtype=bool)
        first[0] = True
        np.not_equal(sa[1:], sa[:-1], out=first[1:])
        sa, sb, sv = sa[first], sb[first], sv[first]
        m.label_det[sb] = sa
        m.det_label[sa] = sb
        m.det_iou[sa] = sv
