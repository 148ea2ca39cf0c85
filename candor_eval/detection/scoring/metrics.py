"""Detection metrics (docs/detector.md): one matching, many views. Higher is better for P, R, F1.

Pipeline (the served path, then the scorer):

1. raw candidates (score >= ``detector.floor``) ->
2. same-class greedy NMS at ``nms_iou`` (:func:`candor_eval.detection.scoring.boxes.nms`, per frame and class) ->
3. greedy one-to-one matching per frame and class at IoU >= ``match_iou``
   (:func:`candor_eval.detection.scoring.matching.match_detections`); steps 2 and 3:
   :func:`candor_eval.detection.scoring.nms_match.score_detections`, the matched arrays
   :class:`~candor_eval.detection.scoring.records.Scored` ->
4. the operating point keeps detections with ``score >= class_thresholds[class]``
   (:func:`operating_point`, :meth:`candor_eval.detection.served.Served.keeps`; the served threshold of each class).

Steps 2 and 3 run once, on everything above the floor. Both are greedy in
score order, so dropping the detections below a threshold (a suffix of each
group's order) gives exactly the result of thresholding first, as the served
path does; every threshold (operating point, PR and F1-versus-threshold
curves, suggested thresholds) is therefore read off the same matched arrays.

A model whose served NMS is class-agnostic or capped (``max_det``,
:class:`candor_eval.detection.served.ServedNms`) breaks that: a box below its own class's threshold
can suppress a box of another class, and the cap counts only the boxes above the thresholds. Its
operating point is therefore scored on the thresholded boxes, exactly as served
(:func:`candor_eval.detection.scoring.stream.score_stream`), and its curves and AP on every box above
the floor (the model served at ``conf = floor``, read at each threshold).

Definitions, on a set of frames:

- TP: a kept detection matched to a label of its class; FP: a kept detection
  matched to none (and not inside a crowd region); FN: a (non-crowd) label no
  kept detection matched. Detections of classes without labels are FP.
- precision ``TP / (TP + FP)``, recall ``TP / (TP + FN)``, F1
  ``2 TP / (2 TP + FP + FN)`` (the harmonic mean of P and R). Policy for empty
  denominators: the rate is ``None`` (JSON null; "not interpretable"), never 0
  or 1; e.g. a class without labels has ``recall: null``.
- ``fp_per_frame`` = FP / frames (``None`` with no frames); ``frames`` counts frames.
- per class: the above plus ``support`` (= TP + FN, the number of labels) and
  ``qualified`` = ``support >= min_support``; an unqualified class is reported
  but must not be called improved or regressed.
- size band: a box's size at model input is ``sqrt(w * h) * scale`` (letterbox
  scale of its frame for this model); bands are ``[0, e0)``, ``[e0, e1)``,
  ..., ``[e_last, inf)`` for edges ``e``, named ``lt<e0>``, ``<e0>to<e1>``,
  ``ge<e_last>``. TP and FN count in the band of their label, FP in the band of
  the detection.
- zoom: frames grouped by their ``zoom`` value (key ``zoom_<value>``, with
  characters other than letters, digits, ``-`` replaced by ``_``;
  ``zoom_unknown`` when not recorded).
- critical classes: ``missed`` = FN labels of the class; ``wrong`` = kept FP
  detections of the class whose IoU with some (non-crowd) label of *another*
  class in the same frame is >= ``match_iou`` (an action aimed at the wrong
  object).
- confusion matrix (rows true, columns predicted, last index background):
  TP on the diagonal; then the kept FP detections and the FN labels of each
  frame are matched class-agnostically with the same greedy matcher, each such
  pair counts as (true class, predicted class); the remaining FP count as
  (background, predicted) and FN as (true, background). Row sums are label
  counts, column sums kept detection counts (ignored ones excluded).

Counts behind the rates (:func:`rate_counts`, the metrics file's ``counts`` block,
:mod:`candor_eval.common.counts`): every precision is ``k = TP`` of ``n = TP + FP`` kept
detections (unit ``detection``), every recall ``k = TP`` of ``n = TP + FN`` labels (unit
``label``), for ``micro``, each class, band and zoom of each split block.
"""
from __future__ import annotations

import re

import numpy as np

from candor_eval.common.counts import Count
from candor_eval.common.rounding import DECIMALS
from candor_eval.detection.scoring.boxes import iter_group_pairs, paired_iou
from candor_eval.detection.scoring.matching import match_detections
from candor_eval.detection.scoring.records import Curve, OperatingPoint, Scored
from candor_eval.detection.served import Served


def operating_point(s: Scored, served: Served) -> OperatingPoint:
    """Apply the served thresholds (:meth:`~candor_eval.detection.served.Served.keeps`) to the matched arrays:
    a detection is kept by its own score, a label found by the score of the detection that matched it."""
    kept = served.keeps(s.score, s.cls)
    tp = kept & (s.label >= 0)
    fp = kept & (s.label < 0) & ~s.ignored
    sc = s.scene
    found = (s.label_score > -np.inf) & served.keeps(s.label_score, sc.label_class)
    fn = ~found & ~sc.label_crowd
    return OperatingPoint(kept=kept, tp=tp, fp=fp, found=found, fn=fn)


def band_names(edges: list[float] | tuple[float, ...]) -> list[str]:
    """Band keys for ``edges`` e.g. ``[16, 48]`` -> ``lt16, 16to48, ge48``."""
    e = [f"{x:g}" for x in edges]
    if not e:
        return ["all"]
    return [f"lt{e[0]}"] + [f"{a}to{b}" for a, b in zip(e, e[1:])] + [f"ge{e[-1]}"]


def zoom_key(value: str) -> str:
    """Metrics key of a zoom value: ``zoom_`` plus the value with unsafe characters as ``_``."""
    return "zoom_" + (re.sub(r"[^A-Za-z0-9-]", "_", str(value)) or "unknown")


def size_at_input(boxes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Object size at model input: ``sqrt(w * h) * scale`` per box.

    ``boxes``: ``(N, 4)`` xyxy in original pixels; ``scale``: ``(N,)`` (or a scalar), the
    letterbox scale of each box's frame. A box with ``w`` or ``h <= 0`` has size 0.

    >>> size_at_input(np.array([[0.0, 0.0, 8.0, 2.0], [5, 5, 5, 9]]), np.array([0.5, 2.0])).tolist()
    [2.0, 0.0]
    """
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    if w.dtype.kind == "f":         # the same arithmetic in place: no fresh array per step
        np.maximum(w, 0.0, out=w)
        np.maximum(h, 0.0, out=h)
    else:
        w, h = np.maximum(w, 0.0), np.maximum(h, 0.0)
    w *= h
    return np.multiply(np.sqrt(w, out=w), scale)


def wrong_targets(s: Scored, op: OperatingPoint, *, classes: list[int] | None = None) -> np.ndarray:
    """Bool ``(D,)``: kept FP detections overlapping (IoU >= match_iou) a label of another class.

    ``classes`` limits the search to detections of those class indices (default: all).
    """
    sc = s.scene
    out = np.zeros(len(s.frame), dtype=bool)
    fp = op.fp if classes is None else op.fp & np.isin(s.cls, classes)
    cand = np.flatnonzero(fp)
    regular = np.flatnonzero(~sc.label_crowd)
    if len(cand) == 0 or len(regular) == 0:
        return out
    for ia, ib in iter_group_pairs(s.frame[cand], sc.label_frame[regular]):
        d, lab = cand[ia], regular[ib]
        other = sc.label_class[lab] != s.cls[d]
        d, lab = d[other], lab[other]
        hit = paired_iou(s.boxes[d], sc.label_boxes[lab]) >= s.match_iou
        out[d[hit]] = True
    return out


def confusion(s: Scored, op: OperatingPoint) -> np.ndarray:
    """``(C+1, C+1)`` int64 matrix, rows true class, columns predicted; index C is background."""
    return confusion_by_group(s, op, of_frame=np.zeros(len(s.scene.frames), np.int64), n_groups=1)[0]


def confusion_by_group(s: Scored, op: OperatingPoint, *, of_frame: np.ndarray, n_groups: int) -> np.ndarray:
    """``(n_groups, C+1, C+1)``: :func:`confusion` of the frames of each group, ``of_frame`` the group
    of each of the scene's frames (``-1``: not counted). A cell belongs to the frame of its boxes
    (matching never crosses a frame), so the groups' matrices add up to the whole one."""
    sc = s.scene
    n = len(sc.classes)
    mat = np.zeros((n_groups + 1, n + 1, n + 1), dtype=np.int64)     # the last group collects the -1 frames
    g_of = np.where(of_frame >= 0, of_frame, n_groups)
    np.add.at(mat, (g_of[s.frame[op.tp]], s.cls[op.tp], s.cls[op.tp]), 1)
    fp_idx, fn_idx = np.flatnonzero(op.fp), np.flatnonzero(op.fn)
    m = match_detections(sc.label_frame[fn_idx], sc.label_boxes[fn_idx], s.frame[fp_idx], s.boxes[fp_idx],
                         s.score[fp_idx], iou=s.match_iou)
    paired = m.det_label >= 0
    np.add.at(mat, (g_of[s.frame[fp_idx[paired]]], sc.label_class[fn_idx[m.det_label[paired]]],
                    s.cls[fp_idx[paired]]), 1)
    np.add.at(mat, (g_of[s.frame[fp_idx[~paired]]], np.full((~paired).sum(), n), s.cls[fp_idx[~paired]]), 1)
    lone = ~m.label_found
    np.add.at(mat, (g_of[sc.label_frame[fn_idx[lone]]], sc.label_class[fn_idx[lone]], np.full(lone.sum(), n)), 1)
    return mat[:n_groups]


RATE_GROUPS = ("per_class", "by_band", "by_zoom")


def rate_counts(blocks: dict[str, dict]) -> dict[str, Count]:
    """The counts behind every precision and recall of metrics blocks (``{split: block}``,
    :meth:`candor_eval.detection.scoring.tally.Tally.block`).

    Keys are the rates' dotted paths (``all.micro.precision``, ``dev.per_class.deer.recall``);
    precision counts ``tp`` of ``tp + fp`` detections, recall ``tp`` of ``tp + fn`` labels.
    A rate that is None (``n == 0``) still has its count.

    >>> block = {"micro": {"tp": 3, "fp": 1, "fn": 2}, "per_class": {}, "by_band": {}, "by_zoom": {}}
    >>> {k: (c.k, c.n, c.unit) for k, c in rate_counts({"all": block}).items()}
    {'all.micro.precision': (3, 4, 'detection'), 'all.micro.recall': (3, 5, 'label')}
    """
    out: dict[str, Count] = {}
    for split, block in blocks.items():
        entries = [("micro", block["micro"])]
        entries += [(f"{group}.{name}", m) for group in RATE_GROUPS for name, m in block[group].items()]
        for path, m in entries:
            out[f"{split}.{path}.precision"] = Count(k=m["tp"], n=m["tp"] + m["fp"], unit="detection")
            out[f"{split}.{path}.recall"] = Count(k=m["tp"], n=m["tp"] + m["fn"], unit="label")
    return out


def threshold_grid(floor: float, *, step: float = 0.01) -> np.ndarray:
    """Thresholds ``floor, ceil(floor/step)*step, ..., 1.0`` rounded to 6 decimals (the curves' x)."""
    k0 = int(np.ceil(round(floor / step, 9)))
    grid = np.round(np.arange(k0, int(round(1 / step)) + 1) * step, DECIMALS)
    grid, first = grid[grid >= floor], round(floor, DECIMALS)
    # ascending and distinct already, and ``first`` (the nearest 6-decimal value to the floor) is at
    # most ``grid[0]``: no np.unique, whose plain call imports numpy.ma (~13 ms of a sweep stage)
    return grid if len(grid) and grid[0] == first else np.concatenate([[first], grid])


def best_thresholds(curve_by_class: dict[str, Curve], *, support: dict[str, int], min_support: int,
                    default: float) -> dict[str, float]:
    """Per class, the threshold of the curve with the best F1 (ties: the highest threshold).

    Classes with ``support < min_support``, no defined F1, or no true positive at
    any threshold (F1 0 everywhere) keep ``default``.
    """
    out = {}
    for name, cv in curve_by_class.items():
        if name == "all":
            continue
        den = 2 * cv.tp + cv.fp + cv.fn
        if support.get(name, 0) < min_support or not (den > 0).any():
            out[name] = default
            continue
        f1 = np.where(den > 0, 2 * cv.tp / np.maximum(den, 1), -1.0)
        if f1.max() <= 0:      # no true positive at any threshold: no evidence, keep the default
            out[name] = default
            continue
        best = np.flatnonzero(f1 == f1.max())[-1]
        out[name] = float(cv.grid[best])
    return out


