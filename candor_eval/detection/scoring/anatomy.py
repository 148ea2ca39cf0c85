"""What kind of error: the anatomy of false positives and false negatives at an operating point.

Definitions (TIDE's, Bolya et al. ECCV 2020; docs/detector.md, "What kind of error"). Each kept
false positive (FP, :class:`~candor_eval.detection.scoring.metrics.OperatingPoint`) is judged
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

Shapes: per detection ``(D,)`` of the :class:`~candor_eval.detection.scoring.nms_match.Scored`
arrays, per label ``(L,)`` of its scene. No FP: every kind is 0; a frame without labels makes
each of its FPs ``background``.
"""
from __future__ import annotations

import numpy as np

from candor_eval.detection.scoring.boxes import box_area, column_iou, iter_group_pairs
from candor_eval.detection.scoring.records import Anatomy, OperatingPoint, Scored

FP_KINDS = ("localisation", "class_confusion", "duplicate", "background", "both")
LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND, BOTH = range(len(FP_KINDS))
FN_KINDS = ("aimed", "missed")
BACKGROUND_IOU = 0.1   # TIDE's background threshold
PAIRS = 1 << 20        # FP-label pairs gathered at once (their columns: about 100 MB of temporaries)


def _segment_best(v: np.ndarray, starts: np.ndarray, lens: np.ndarray,
                  lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per segment ``[starts[k], starts[k] + lens[k])`` of the pair values ``v`` (``-1``: not a
    candidate): the highest value (``-1`` when none) and the label of its first occurrence (the
    lowest label index: labels ascend within a segment), ``-1`` when none."""
    best = np.maximum.reduceat(v, starts)
    at = np.flatnonzero((v == np.repeat(best, lens)) & (v >= 0))
    seg = np.repeat(np.arange(len(starts)), lens)[at]
    arg = np.full(len(starts), -1, dtype=np.int64)
    first = np.r_[True, seg[1:] != seg[:-1]] if len(seg) else np.zeros(0, bool)
    arg[seg[first]] = lab[at[first]]
    return best, arg


def error_anatomy(s: Scored, op: OperatingPoint, *, background_iou: float = BACKGROUND_IOU) -> Anatomy:
    """The FP kinds and aimed FNs of ``s`` at ``op`` (see the module docstring).

    Truth is ``s.scene``; ``pos`` is ``s.match_iou``. Each FP meets every non-crowd label of its
    frame that it overlaps along x (:func:`~candor_eval.detection.scoring.boxes.iter_group_pairs`: a FP's
    pairs are contiguous, its labels in ascending index; a pair apart along x has IoU 0 and moves
    no maximum), reduced per FP without a sort.
    """
    sc = s.scene
    pos_iou = s.match_iou
    fp = np.flatnonzero(op.fp)
    n = len(fp)
    fp_kind = np.full(len(s.frame), -1, dtype=np.int8)
    fn_aimed = np.zeros(len(sc.label_frame), dtype=bool)
    if n == 0:
        return Anatomy(fp_kind, fn_aimed)
    regular = np.flatnonzero(~sc.label_crowd)
    fb, lb = s.boxes[fp], sc.label_boxes[regular]
    f_cols = [np.ascontiguousarray(fb[:, k]) for k in range(4)]
    l_cols = [np.ascontiguousarray(lb[:, k]) for k in range(4)]
    f_area, l_area = box_area(fb), box_area(lb)
    f_cls, l_cls = s.cls[fp], sc.label_class[regular]
    used_label = op.found[regular]
    s_best, u_best, o_best = np.zeros(n), np.zeros(n), np.zeros(n)
    s_arg, o_arg = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    for ia, ib in iter_group_pairs(s.frame[fp], sc.label_frame[regular], max_pairs=PAIRS):
        # pairs apart along x have IoU 0, which moves no maximum: drop them before the other gathers
        apart = np.minimum(f_cols[2][ia], l_cols[2][ib]) <= np.maximum(f_cols[0][ia], l_cols[0][ib])
        ia, ib = ia[~apart], ib[~apart]
        if len(ia) == 0:
            continue
        v = column_iou([c[ia] for c in f_cols], [c[ib] for c in l_cols], f_area[ia], l_area[ib])
        same = f_cls[ia] == l_cls[ib]
        starts = np.flatnonzero(np.r_[True, ia[1:] != ia[:-1]])
        lens = np.diff(np.r_[starts, len(ia)])
        who = ia[starts]
        sb, sa = _segment_best(np.where(same, v, -1.0), starts, lens, regular[ib])
        ub, _ = _segment_best(np.where(same & used_label[ib], v, -1.0), starts, lens, regular[ib])
        ob, oa = _segment_best(np.where(same, -1.0, v), starts, lens, regular[ib])
        s_best[who], s_arg[who] = np.maximum(sb, 0.0), sa
        u_best[who] = np.maximum(ub, 0.0)
        o_best[who], o_arg[who] = np.maximum(ob, 0.0), oa
    loc = (s_best >= background_iou) & (s_best <= pos_iou)
    cls = o_best >= pos_iou
    kind = np.select([loc, cls, u_best >= pos_iou, np.maximum(s_best, o_best) <= background_iou],
                     [LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND], default=BOTH)
    fp_kind[fp] = kind
    targets = np.concatenate([s_arg[kind == LOCALISATION], o_arg[kind == CLASS_CONFUSION]])
    fn_aimed[targets] = True
    fn_aimed &= op.fn
    return Anatomy(fp_kind, fn_aimed)
