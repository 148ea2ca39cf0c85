"""What kind of error: the anatomy of false positives and false negatives at an operating point.

Definitions (TIDE's, Bolya et al. ECCV 2020; docs/detector.md, "What kind of error"). Each kept
false positive (FP, :class:`~candor.detection.scoring.metrics.OperatingPoint`) is judged
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

Shapes: per detection ``(D,)`` of the :class:`~candor.detection.scoring.metrics.Scored`
arrays, per label ``(L,)`` of its scene. No FP: every kind is 0; a frame without labels makes
each of its FPs ``background``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from candor.detection.scoring.boxes import iter_group_pairs, paired_iou
from candor.detection.scoring.metrics import OperatingPoint, Scored

FP_KINDS = ("localisation", "class_confusion", "duplicate", "background", "both")
LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND, BOTH = range(len(FP_KINDS))
FN_KINDS = ("aimed", "missed")
BACKGROUND_IOU = 0.1   # TIDE's background threshold


@dataclass(frozen=True)
class Anatomy:
    """``fp_kind`` ``(D,)`` int8: the index into :data:`FP_KINDS` of each kept FP, ``-1`` for
    every other detection; ``fn_aimed`` ``(L,)`` bool: FN labels some localisation or
    class-confusion FP was aimed at."""

    fp_kind: np.ndarray
    fn_aimed: np.ndarray


def _best(n: int, pos: np.ndarray, lab: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per FP position ``0..n-1``: the highest of its pairs' IoUs ``v`` (0 without pairs) and the
    label of that IoU (ties: the lower label index; -1 without pairs)."""
    best, arg = np.zeros(n), np.full(n, -1, dtype=np.int64)
    if len(pos):
        srt = np.lexsort((lab, -v, pos))
        first = srt[np.r_[True, pos[srt][1:] != pos[srt][:-1]]]
        best[pos[first]], arg[pos[first]] = v[first], lab[first]
    return best, arg


def error_anatomy(s: Scored, op: OperatingPoint, *, background_iou: float = BACKGROUND_IOU) -> Anatomy:
    """The FP kinds and aimed FNs of ``s`` at ``op`` (see the module docstring).

    Truth is ``s.scene``; ``pos`` is ``s.match_iou``.
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
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("pos", "lab", "v", "same")}
    for ia, ib in iter_group_pairs(s.frame[fp], sc.label_frame[regular]):
        lab = regular[ib]
        parts["pos"].append(ia)
        parts["lab"].append(lab)
        parts["v"].append(paired_iou(s.boxes[fp[ia]], sc.label_boxes[lab]))
        parts["same"].append(sc.label_class[lab] == s.cls[fp[ia]])
    if parts["pos"]:
        pos, lab, v, same = (np.concatenate(parts[k]) for k in ("pos", "lab", "v", "same"))
    else:
        pos, lab, v, same = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool)
    s_best, s_arg = _best(n, pos[same], lab[same], v[same])
    used = same & op.found[lab]
    u_best, _ = _best(n, pos[used], lab[used], v[used])
    o_best, o_arg = _best(n, pos[~same], lab[~same], v[~same])
    loc = (s_best >= background_iou) & (s_best <= pos_iou)
    cls = o_best >= pos_iou
    kind = np.select([loc, cls, u_best >= pos_iou, np.maximum(s_best, o_best) <= background_iou],
                     [LOCALISATION, CLASS_CONFUSION, DUPLICATE, BACKGROUND], default=BOTH)
    fp_kind[fp] = kind
    targets = np.concatenate([s_arg[kind == LOCALISATION], o_arg[kind == CLASS_CONFUSION]])
    fn_aimed[targets] = True
    fn_aimed &= op.fn
    return Anatomy(fp_kind, fn_aimed)
