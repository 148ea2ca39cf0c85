"""What kind of error: the anatomy of false positives and false negatives at an operating point.

Definitions (TIDE's, Bolya et al. ECCV 2020; docs/detector.md, "What kind of error"). Each kept
false positive (FP, :class:`~candor_eval.detection.scoring.records.OperatingPoint`) is judged
against the non-crowd labels of its frame, with

- ``s``: its best IoU with a label of its own class,
- ``u``: its best IoU with a label of its own class that a kept detection matched (a *used* label),
- ``o``: its best IoU with a label of another class,

``pos`` the matching IoU (``match.iou``) and ``bg`` the background IoU (:data:`BACKGROUND_IOU`,
TIDE's 0.1). It takes the first rule that applies, in TIDE's order:

1. ``localisation``: ``bg <= s <= pos`` (right class, box not good enough);
2. ``class_confusion``: ``o >= pos`` (a good box of another class's object);
3. ``duplicate``: ``u >= pos`` (the object was already found by a higher-scored box);
4. ``background``: ``max(s, o) <= bg`` (on nothing);
5. ``both``: anything else (``s < bg`` and ``bg < o < pos``: wrong class and poor box).

The five parts add up to the FP count exactly. Both bounds of rule 1 are inclusive, as in
TIDE's code. (An unmatched box with ``s > pos`` always has ``u >= s``: the label it overlaps was
taken before it was visited, since the matcher takes any free label at IoU >= ``pos``.)

False negatives (non-crowd labels no kept detection matched) split into ``aimed``: the label is
the *target* of a localisation FP (its own-class label of highest IoU) or of a class-confusion FP
(its other-class label of highest IoU), so a better box or class would have found it; and
``missed``: the rest (TIDE's "missed"). Argmax ties go to the lower label index (the label's
order in its frame), as numpy's argmax does in TIDE.

Where candor differs from TIDE (documented in docs/detector.md): detections inside a crowd
region are ignored (neither TP nor FP) and get no error type, while TIDE classifies them too
and lets them make a label "aimed"; TIDE keeps only the 100 highest-scored boxes of an image
across classes (candor: the served ``max_det``, if any), and its crowd test is ``>`` where
pycocotools' (and candor's) is ``>=``.

Shapes: per detection ``(D,)`` of the :class:`~candor_eval.detection.scoring.records.Scored`
arrays, per label ``(L,)`` of its scene. No FP: every kind is 0; a frame without labels makes
each of its FPs ``background``.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields

import numpy as np

from candor_eval.detection.scoring.boxes import as_boxes, box_area, column_iou, stable_key_order
from candor_eval.detection.scoring.records import Anatomy, OperatingPoint, Scene, Scored

FP_KINDS = ("localisation", "class_confusion", "duplicate", "background", "both")
LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND, BOTH = range(len(FP_KINDS))
FN_KINDS = ("aimed", "missed")
BACKGROUND_IOU = 0.1   # TIDE's background threshold
BLOCK = 16_384        # FPs compared with their frames' labels at once (overlaps_by_block)


def error_anatomy(s: Scored, op: OperatingPoint, *, background_iou: float = BACKGROUND_IOU) -> Anatomy:
    """The FP kinds and aimed FNs of ``s`` at ``op`` (see the module docstring).

    Truth is ``s.scene``; ``pos`` is ``s.match_iou``. Each FP meets every non-crowd label of its
    frame (:class:`FrameLabels`), :data:`BLOCK` FPs at a time: every temporary stays cache-sized
    and is judged and dropped before the next block.
    """
    sc = s.scene
    pos_iou = s.match_iou
    fp = np.flatnonzero(op.fp)
    fp_kind = np.full(len(s.frame), -1, dtype=np.int8)
    fn_aimed = np.zeros(len(sc.label_frame), dtype=bool)
    if len(fp) == 0:
        return Anatomy(fp_kind, fn_aimed)
    for block, best in overlaps_by_block(s, fp, used=op.found):
        s_best, u_best, o_best = best.own, best.used, best.other
        loc = (s_best >= background_iou) & (s_best <= pos_iou)
        cls = o_best >= pos_iou
        kind = np.select([loc, cls, u_best >= pos_iou, np.maximum(s_best, o_best) <= background_iou],
                         [LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND], default=BOTH)
        fp_kind[block] = kind
        targets = np.concatenate([best.own_label[kind == LOCALISATION], best.other_label[kind == CLASS_CONFUSION]])
        fn_aimed[targets[targets >= 0]] = True
    fn_aimed &= op.fn
    return Anatomy(fp_kind, fn_aimed)


@dataclass(frozen=True)
class Overlaps:
    """Per FP ``(N,)``: the best IoU with a non-crowd label of its frame of its own class (``own``), of its
    own class and used (``used``), of another class (``other``), 0 when none; the scene index of the first
    label (lowest index) reaching ``own`` and ``other`` when that is above 0, else -1."""

    own: np.ndarray
    used: np.ndarray
    other: np.ndarray
    own_label: np.ndarray
    other_label: np.ndarray


def overlaps_by_block(s: Scored, fp: np.ndarray, *, used: np.ndarray) -> Iterator[tuple[np.ndarray, Overlaps]]:
    """The detections ``fp`` (indices into ``s``) :data:`BLOCK` at a time (one empty block when there are
    none), each block with its :class:`Overlaps` (:meth:`FrameLabels.best_overlaps`; ``used`` ``(L,)``:
    labels a kept detection matched). The labels' layout is built once for all blocks."""
    labels = FrameLabels.of(s.scene, used=used)
    for b0 in range(0, max(len(fp), 1), BLOCK):
        block = fp[b0:b0 + BLOCK]
        yield block, labels.best_overlaps(s, block)


def best_overlaps(s: Scored, fp: np.ndarray, *, used: np.ndarray) -> Overlaps:
    """:class:`Overlaps` of the detections ``fp`` (indices into ``s``) at once: those of
    :func:`overlaps_by_block` joined (the result does not depend on the block)."""
    parts = [best for _, best in overlaps_by_block(s, fp, used=used)]
    return Overlaps(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Overlaps)))


@dataclass(frozen=True)
class FrameLabels:
    """The non-crowd labels of a scene laid out frame by frame, for :meth:`best_overlaps`: ``label_of``
    ``(M + 1,)`` their scene indices by frame, then index, then -1 (position ``M``: no label); per frame
    ``(F,)`` ``first`` (its first position) and ``count``; per position ``(M,)``: ``boxes`` ``(M, 4)``, ``area``
    (:func:`box_area`), ``cls``, ``used``, and ``near_x``, ``near_y`` the ``(x1, x2)`` and ``(y1, y2)`` pairs in
    float32 packed in one int64 each (one gather fetches a pair)."""

    label_of: np.ndarray
    first: np.ndarray
    count: np.ndarray
    boxes: np.ndarray
    area: np.ndarray
    cls: np.ndarray
    used: np.ndarray
    near_x: np.ndarray
    near_y: np.ndarray

    @classmethod
    def of(cls, sc: Scene, *, used: np.ndarray) -> FrameLabels:
        """The layout of ``sc``'s labels; ``used`` ``(L,)``: labels a kept detection matched."""
        regular = np.flatnonzero(~sc.label_crowd)
        lab = regular[stable_key_order(sc.label_frame[regular])]          # by frame, then index
        count = np.bincount(sc.label_frame[lab], minlength=len(sc.frames))
        boxes = as_boxes(sc.label_boxes[lab])
        near = boxes.astype(np.float32)
        near_x, near_y = (np.ascontiguousarray(near[:, cols]).view(np.int64).ravel() for cols in ([0, 2], [1, 3]))
        return cls(label_of=np.append(lab, -1), first=np.cumsum(count) - count, count=count, boxes=boxes,
                   area=box_area(boxes), cls=sc.label_class[lab], used=np.asarray(used, bool)[lab],
                   near_x=near_x, near_y=near_y)

    def best_overlaps(self, s: Scored, fp: np.ndarray) -> Overlaps:
        """:class:`Overlaps` of the detections ``fp`` (indices into ``s``, a cache-sized block).

        The FPs are ordered by how many labels their frame has, most first, so slot ``j`` (every frame's
        ``j``-th label, labels in index order) concerns a prefix of them: each slot is a few whole-array
        steps on that prefix, and the slots together visit each (FP, label) pair of a frame once. Only
        pairs that overlap (or touch) along x, then along y, can have an IoU above 0: the test is
        ``l_x1 <= d_x2`` and ``d_x1 <= l_x2`` in float32 (rounding is monotone, so it keeps every such pair,
        and a few apart ones, IoU 0). The IoU of the pairs kept (float64, :func:`column_iou`) then moves
        the maxima: a maximum moves only on a strictly greater IoU and, of equal IoUs, the lowest label
        position (index) is kept, so ties keep the lower label index (numpy's argmax, as TIDE); a pair
        apart has IoU 0 and moves nothing.
        """
        fp = np.asarray(fp, np.int64)
        n = len(fp)
        frame = s.frame[fp]
        count = self.count[frame]
        top = int(count.max(initial=0))
        order = stable_key_order(top - count)                              # most labels first
        count, start = count[order], self.first[frame[order]]
        visit = fp[order]
        x1, y1, x2, y2 = (s.boxes[visit, k].astype(np.float32) for k in range(4))    # no row copies
        # the FPs whose frame has more than j labels: a prefix of ``ends[j]``
        ends = np.searchsorted(-count, -np.arange(top), side="left").tolist()
        hits, at_hits = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for j, k in enumerate(ends):
            nx = self.near_x[j:][start[:k]].view(np.float32)              # x1, x2 of each FP's j-th label
            hit = np.flatnonzero((nx[0::2] <= x2[:k]) & (x1[:k] <= nx[1::2]))
            at = start[hit] + j
            ny = self.near_y[at].view(np.float32)
            both = (ny[0::2] <= y2[hit]) & (y1[hit] <= ny[1::2])
            hits.append(hit[both])
            at_hits.append(at[both])
        hit, at = np.concatenate(hits), np.concatenate(at_hits)
        hb = as_boxes(s.boxes[visit[hit]])
        v = column_iou(hb.T, self.boxes[at].T, box_area(hb), self.area[at])
        apart = v > 0
        pos, at, v = order[hit[apart]], at[apart], v[apart]               # the FPs' places in ``fp``
        same = s.cls[fp[pos]] == self.cls[at]
        # own (2 p) and other (2 p + 1) side by side: one pass moves both maxima
        key = 2 * pos + ~same
        best = np.zeros(2 * n)
        np.maximum.at(best, key, v)
        reach = v == best[key]
        best_at = np.full(2 * n, len(self.label_of) - 1, np.int64)      # no label reached: position M, -1
        np.minimum.at(best_at, key[reach], at[reach])                    # the lowest position reaching it
        use = np.zeros(n)
        up = same & self.used[at]
        np.maximum.at(use, pos[up], v[up])
        own_label, other_label = self.label_of[best_at[0::2]], self.label_of[best_at[1::2]]
        return Overlaps(own=best[0::2], used=use, other=best[1::2], own_label=own_label, other_label=other_label)
