"""Localisation quality of true positives: how good the boxes that count as found are. Higher IoU
is better; a lower edge error is better.

Per true positive (a kept detection matched to a label at the operating point):

- ``iou``: its IoU with the label it matched (at least ``match.iou`` by definition);
- ``edge``: its mean absolute edge error in model-input pixels,
  ``(|x1 - x1'| + |y1 - y1'| + |x2 - x2'| + |y2 - y2'|) / 4 * scale`` (``scale``: the letterbox
  scale of its frame for this model; 1 in the standalone COCO mode, where it is in original pixels).

A set of true positives is summarised (:func:`quality_block`) as ``iou_median`` and ``iou_p10``
(the 50th and 10th percentiles, linear interpolation between order statistics: numpy's default,
type 7), ``edge_error_px`` (the mean of ``edge``) and ``tp`` (how many). With no true positive
the three figures are ``None``. Values are rounded to 6 decimals; they are computed from the
stored boxes in float64, in label order, so the same boxes give the same bytes.

The values are kept per label (:class:`~candor_eval.detection.scoring.records.Outcomes`: ``NaN`` for a
label not found), a few bytes per label like the other per-label outcomes, so any split and
class is summarised from them.
"""
from __future__ import annotations

import numpy as np

from candor_eval.common.rounding import rounded
from candor_eval.detection.scoring.boxes import paired_iou


def tp_box_errors(det_boxes: np.ndarray, label_boxes: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(iou, edge)``, each ``(K,)``, of matched pairs ``det_boxes[k]`` / ``label_boxes[k]`` (both
    ``(K, 4)`` xyxy, original pixels) on frames of letterbox ``scale`` ``(K,)``.

    >>> iou, edge = tp_box_errors(np.array([[0., 0, 10, 10]]), np.array([[0., 0, 10, 8]]), np.array([0.5]))
    >>> iou.tolist(), edge.tolist()
    ([0.8], [0.25])
    """
    iou = paired_iou(det_boxes, label_boxes)
    edge = np.abs(det_boxes - label_boxes).mean(axis=1) * scale
    return iou, edge


def quality_block(iou: np.ndarray, edge: np.ndarray) -> dict:
    """``{"tp", "iou_median", "iou_p10", "edge_error_px"}`` of the true positives ``iou`` and
    ``edge`` (``(K,)`` each; see the module docstring).

    >>> quality_block(np.array([0.5, 0.7, 0.9]), np.array([1.0, 2.0, 6.0]))
    {'tp': 3, 'iou_median': 0.7, 'iou_p10': 0.54, 'edge_error_px': 3.0}
    >>> quality_block(np.zeros(0), np.zeros(0))
    {'tp': 0, 'iou_median': None, 'iou_p10': None, 'edge_error_px': None}
    """
    iou = np.asarray(iou, dtype=np.float64)
    return _blocks(np.sort(iou), np.zeros(1, np.intp), np.array([len(iou)]), [np.asarray(edge, np.float64)])[0]


def quality_by_class(iou: np.ndarray, edge: np.ndarray, label_class: np.ndarray, *,
                     classes: tuple[str, ...]) -> tuple[dict, dict[str, dict]]:
    """The :func:`quality_block` of every label found (``iou`` not ``NaN``; per label ``(L,)``,
    with ``label_class`` indices into ``classes``), then of each class's: the percentiles of every
    class read off one sort by (class, IoU)."""
    found = ~np.isnan(iou)
    iou, edge, label_class = iou[found], edge[found], np.asarray(label_class)[found]
    counts = np.bincount(label_class, minlength=len(classes))[:len(classes)] if len(label_class) else \
        np.zeros(len(classes), np.intp)
    starts = np.cumsum(counts) - counts
    by_class = iou[np.lexsort((iou, label_class))]
    edges = [edge[label_class == i] for i in range(len(classes))]      # each class's, in label order
    return quality_block(iou, edge), dict(zip(classes, _blocks(by_class, starts, counts, edges)))


def _blocks(values: np.ndarray, starts: np.ndarray, counts: np.ndarray, edges: list[np.ndarray]) -> list[dict]:
    """The :func:`quality_block` of each run ``values[starts[k]:starts[k] + counts[k]]`` (IoUs, sorted)
    with its edge errors ``edges[k]``."""
    filled = counts > 0
    p10, p50 = np.zeros(len(counts)), np.zeros(len(counts))
    for out, q in ((p10, 10), (p50, 50)):
        out[filled] = _sorted_percentile(values, starts[filled], counts[filled], q)
    return [{"tp": int(n), "iou_median": rounded(m), "iou_p10": rounded(t), "edge_error_px": rounded(e.mean())}
            if n else {"tp": 0, "iou_median": None, "iou_p10": None, "edge_error_px": None}
            for n, t, m, e in zip(counts.tolist(), p10, p50, edges)]


def _sorted_percentile(values: np.ndarray, starts: np.ndarray, counts: np.ndarray, q: float) -> np.ndarray:
    """The ``q``-th percentile of each sorted run ``values[starts[k]:starts[k] + counts[k]]`` (``counts``
    >= 1), as ``np.percentile`` computes it (method ``linear``, type 7): the virtual index
    ``(n - 1) * q / 100`` between order statistics ``a`` and ``b``, weight ``g`` its fraction, then
    ``a + (b - a) * g``, or ``b - (b - a) * (1 - g)`` when ``g >= 0.5``; at or beyond the last, the
    last. The same arithmetic, so the same bits (tested against numpy's), for every run at once
    (numpy's ``percentile`` works one array at a time, and its first call imports ``numpy.ma``)."""
    at = (counts - 1) * np.true_divide(q, 100)
    low = np.floor(at)
    g = at - low
    low = low.astype(np.intp)
    last = at >= counts - 1
    low[last] = counts[last] - 1
    a = values[starts + low]
    b = values[starts + np.where(last, low, low + 1)]
    diff = b - a
    out = np.where(g >= 0.5, b - diff * (1 - g), a + diff * g)
    out[last] = a[last]
    return out
