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

from dataclasses import dataclass

import numpy as np

from candor_eval.detection.scoring.boxes import box_area, column_iou, stable_key_order
from candor_eval.detection.scoring.records import Anatomy, OperatingPoint, Scored

FP_KINDS = ("localisation", "class_confusion", "duplicate", "background", "both")
LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND, BOTH = range(len(FP_KINDS))
FN_KINDS = ("aimed", "missed")
BACKGROUND_IOU = 0.1   # TIDE's background threshold
BLOCK = 16_384        # FPs compared with their frames' labels at once (best_overlaps)


def error_anatomy(s: Scored, op: OperatingPoint, *, background_iou: float = BACKGROUND_IOU) -> Anatomy:
    """The FP kinds and aimed FNs of ``s`` at ``op`` (see the module docstring).

    Truth is ``s.scene``; ``pos`` is ``s.match_iou``. Each FP meets every non-crowd label of its
    frame: :func:`best_overlaps` visits them slot by slot (the frame's first label, its second, ...)
    for every FP at once, so the work is whole-array steps over the FPs, no per-pair index arrays.
    """
    sc = s.scene
    pos_iou = s.match_iou
    fp = np.flatnonzero(op.fp)
    fp_kind = np.full(len(s.frame), -1, dtype=np.int8)
    fn_aimed = np.zeros(len(sc.label_frame), dtype=bool)
    if len(fp) == 0:
        return Anatomy(fp_kind, fn_aimed)
    best = best_overlaps(s, fp, used=op.found)
    s_best, u_best, o_best = best.own, best.used, best.other
    loc = (s_best >= background_iou) & (s_best <= pos_iou)
    cls = o_best >= pos_iou
    kind = np.select([loc, cls, u_best >= pos_iou, np.maximum(s_best, o_best) <= background_iou],
                     [LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND], default=BOTH)
    fp_kind[fp] = kind
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


def best_overlaps(s: Scored, fp: np.ndarray, *, used: np.ndarray) -> Overlaps:
    """:class:`Overlaps` of the detections ``fp`` (indices into ``s``); ``used`` ``(L,)``: labels a kept
    detection matched.

    The FPs are ordered by how many labels their frame has, most first, so slot ``j`` (every frame's
    ``j``-th label, labels in index order) concerns a prefix of them: each slot is a few whole-array
    steps on that prefix, and the slots together visit each (FP, label) pair of a frame once. A
    maximum moves only on a strictly greater IoU, so ties keep the lower label index (numpy's argmax,
    as TIDE); a pair apart has IoU 0 and moves nothing.
    """
    sc = s.scene
    n = len(fp)
    regular = np.flatnonzero(~sc.label_crowd)
    lab = regular[stable_key_order(sc.label_frame[regular])]          # by frame, then index
    n_frames = len(sc.frames)
    per_frame = np.bincount(sc.label_frame[lab], minlength=n_frames)
    first = np.cumsum(per_frame) - per_frame
    frame = s.frame[fp]
    count = per_frame[frame]
    order = stable_key_order(count.max(initial=0) - count)           # most labels first
    count, start = count[order], first[frame[order]]
    visit = fp[order]                                                # the FPs (indices into ``s``) in that order
    fb = s.boxes[visit]
    f_cols = [np.ascontiguousarray(fb[:, k]) for k in range(4)]
    lb = sc.label_boxes[lab]
    l_cols = [np.ascontiguousarray(lb[:, k]) for k in range(4)]
    # the overlap test in float32: rounding is monotone, so a pair that overlaps (min > max) still has
    # min >= max rounded; the test keeps every overlapping pair (and a few touching ones, IoU 0)
    f_near, l_near = [c.astype(np.float32) for c in f_cols], [c.astype(np.float32) for c in l_cols]
    l_area, l_cls, l_used = box_area(lb), sc.label_class[lab], np.asarray(used, bool)[lab]
    own, use, other = np.zeros(n), np.zeros(n), np.zeros(n)          # per FP, in the order of ``fp``
    own_at, other_at = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    for b0 in range(0, n, BLOCK):          # blocks of FPs: every temporary stays cache-sized
        b1 = min(b0 + BLOCK, n)
        for j in range(int(count[b0])):
            k = b0 + int(np.count_nonzero(count[b0:b1] > j))      # the block's FPs whose frame has > j labels
            at = start[b0:k] + j
            # only pairs that overlap along both axes can move a maximum: the rest have IoU 0
            x1, y1, x2, y2 = (c[b0:k] for c in f_near)
            hit = np.flatnonzero((np.minimum(x2, l_near[2][at]) >= np.maximum(x1, l_near[0][at]))
                                 & (np.minimum(y2, l_near[3][at]) >= np.maximum(y1, l_near[1][at])))
            at, hit = at[hit], hit + b0
            hx1, hy1, hx2, hy2 = (c[hit] for c in f_cols)
            h_area = np.maximum(hx2 - hx1, 0.0) * np.maximum(hy2 - hy1, 0.0)        # box_area's arithmetic
            v = column_iou((hx1, hy1, hx2, hy2), [c[at] for c in l_cols], h_area, l_area[at])
            pos = order[hit]                                                         # the FPs' places in ``fp``
            same = s.cls[visit[hit]] == l_cls[at]
            for best, best_at, mine in ((own, own_at, same), (other, other_at, ~same)):
                up = mine & (v > best[pos])
                best[pos[up]], best_at[pos[up]] = v[up], at[up]
            up = same & l_used[at]
            use[pos[up]] = np.maximum(use[pos[up]], v[up])
    label_of = np.append(lab, -1)                          # position -1 (no label reached) -> -1
    return Overlaps(own=own, used=use, other=other, own_label=label_of[own_at], other_label=label_of[other_at])
