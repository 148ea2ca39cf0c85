"""Boxes: IoU, pairs of boxes that share a group, and same-class greedy NMS.

Conventions used everywhere in candor's detector track:

- A box is ``(x1, y1, x2, y2)`` float, in pixels, ``x2 >= x1`` and ``y2 >= y1``
  (continuous coordinates: a box's width is ``x2 - x1``, no "+1").
- ``boxes``: ``(N, 4)`` float64 array of such boxes.
- A *group* is an int64 key per box; only boxes of the same group are compared
  (``image * n_classes + class`` for same-class work, ``image`` for
  class-agnostic work). Groups never interact, so all work is vectorised over
  groups at once and, for memory, done in chunks of whole groups.
- IoU of two boxes is ``area(a & b) / area(a | b)``; higher means more overlap,
  in ``[0, 1]``. Two zero-area boxes have IoU 0 (the union is empty).

Order and ties (the documented rule every stage follows): boxes are ranked by
score, higher first; equal scores keep their input order (lower original index
first). :func:`rank_order` implements that once.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

MAX_PAIRS = 4_000_000  # pairs of boxes materialised at once (about 100 MB of temporaries)


def as_boxes(boxes: np.ndarray | list) -> np.ndarray:
    """``boxes`` as a contiguous ``(N, 4)`` float64 array (an empty input gives ``(0, 4)``)."""
    arr = np.asarray(boxes, dtype=np.float64)
    if arr.size == 0:
        return np.zeros((0, 4), dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"boxes must have shape (N, 4), got {arr.shape}")
    return np.ascontiguousarray(arr)


def box_area(boxes: np.ndarray) -> np.ndarray:
    """Area of each box, ``(N,)``; degenerate boxes (x2 < x1) have area 0."""
    b = as_boxes(boxes)
    return np.maximum(b[:, 2] - b[:, 0], 0.0) * np.maximum(b[:, 3] - b[:, 1], 0.0)


def intersection(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise intersection area of ``a[k]`` and ``b[k]`` (both ``(K, 4)``)."""
    w = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    h = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    return np.maximum(w, 0.0) * np.maximum(h, 0.0)


def paired_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise IoU of ``a[k]`` and ``b[k]`` (both ``(K, 4)``), ``(K,)``.

    >>> paired_iou(np.array([[0., 0, 10, 10]]), np.array([[0., 0, 10, 5]])).tolist()
    [0.5]
    """
    return column_iou(a.T, b.T, box_area(a), box_area(b))


def column_iou(a: Sequence[np.ndarray] | np.ndarray, b: Sequence[np.ndarray] | np.ndarray, area_a: np.ndarray,
               area_b: np.ndarray) -> np.ndarray:
    """:func:`paired_iou` from the boxes' columns ``x1, y1, x2, y2`` and their areas (:func:`box_area`):
    the same arithmetic, so the same bits, without gathering whole rows (what NMS uses on its pairs)."""
    w = np.minimum(a[2], b[2]) - np.maximum(a[0], b[0])
    h = np.minimum(a[3], b[3]) - np.maximum(a[1], b[1])
    inter = np.maximum(w, 0.0) * np.maximum(h, 0.0)
    union = area_a + area_b - inter
    out = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def paired_crowd_iou(det: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """Element-wise overlap of a detection with a crowd region: ``inter / area(det)``.

    This is pycocotools' definition for ``iscrowd`` labels (a crowd region may
    contain many objects, so only the share of the detection inside it counts).
    """
    inter = intersection(det, crowd)
    area = box_area(det)
    out = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, area, out=out, where=area > 0)
    return out


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix ``(N, M)`` between every box of ``a`` ``(N, 4)`` and of ``b`` ``(M, 4)``."""
    a, b = as_boxes(a), as_boxes(b)
    ia = np.repeat(np.arange(len(a)), len(b))
    ib = np.tile(np.arange(len(b)), len(a))
    return paired_iou(a[ia], b[ib]).reshape(len(a), len(b))


def rank_order(groups: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Indices sorting boxes by group, then score descending, then original index.

    Returns ``order`` such that ``groups[order]`` is ascending and, within a group,
    ``scores[order]`` is descending with ties in input order (the tie rule).
    Input already in that order is recognised in linear time (``arange``); so is input whose
    scores already descend within each group (a detector's boxes of an image listed by score, as
    COCO results files usually are): then the stable sort by group alone is the order.
    """
    g = np.asarray(groups)
    s = np.asarray(scores, dtype=np.float64)
    n = len(s)
    if n < 2:
        return np.arange(n)
    same = g[1:] == g[:-1]
    if np.all(g[1:] >= g[:-1]) and np.all(~same | (s[1:] <= s[:-1])):
        return np.arange(n)
    # by score with ties in input order (a stable sort), then stably by group (a linear radix sort)
    g64 = g.astype(np.int64, copy=False)
    lo, hi = int(g64.min()), int(g64.max())
    if hi - lo >= 2**62:
        return np.lexsort((-s, g64))  # np.lexsort is stable too; only for huge group ids
    by_group = stable_key_order(g64 - lo)
    gs, ss = g64[by_group], s[by_group]
    if np.all((gs[1:] != gs[:-1]) | (ss[1:] <= ss[:-1])):          # scores already descend within groups
        return by_group
    by_score = descending_order(s)
    return by_score[stable_key_order(g64[by_score] - lo)]


def descending_order(values: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """``order`` (default: every index) stably sorted by ``values[order]`` descending: equal values keep
    their place in ``order``. The same result as ``order[np.argsort(-values[order], kind="stable")]``
    (``-0.0`` equals ``0.0``), faster: numpy's unstable sort (vectorised), then each run of equal values
    put back in input order (:func:`_sorted_with_index`). NaN falls back to the stable comparison sort.

    >>> descending_order(np.array([0.5, 0.9, 0.5, -1.0, 0.0, -0.0])).tolist()
    [1, 0, 2, 4, 5, 3]
    """
    v = np.asarray(values, dtype=np.float64)
    order = np.arange(len(v)) if order is None else np.asarray(order, dtype=np.int64)
    x = v[order] + 0.0                                            # -0.0 -> 0.0: equal floats, equal keys
    n = len(x)
    if n < 2 or np.isnan(x).any() or 2 * n.bit_length() > 62:
        return order[np.argsort(-x, kind="stable")]
    by = np.argsort(-x)                                           # ties in any order
    sx = x[by]
    new_run = sx[1:] != sx[:-1]
    if not new_run.all():                                         # ties: each run of equal values by position
        run = np.zeros(n, np.int64)
        np.cumsum(new_run, out=run[1:])
        by = _sorted_with_index(run, by, n.bit_length())
    return order[by]


def _sorted_with_index(keys: np.ndarray, index: np.ndarray, bits: int) -> np.ndarray:
    """``index`` (distinct non-negative integers below ``2**bits``) ordered by ``(keys, index)``, ``keys``
    non-negative integers with ``keys.max()`` below ``2**(63 - bits)``: both packed in one int64 that is
    unique, so numpy's (unstable, vectorised) sort of values gives the one order there is."""
    packed = np.left_shift(keys, bits, dtype=np.int64)
    packed |= index
    packed.sort()
    packed &= (1 << bits) - 1
    return packed


def stable_key_order(keys: np.ndarray) -> np.ndarray:
    """Indices that sort non-negative integer ``keys`` ascending, equal keys in input order.

    Same result as ``np.argsort(keys, kind="stable")``, in linear time whatever the
    input order: keys below ``2**16`` sorted as ``uint16`` (numpy's stable sort of ``uint16`` is a
    counting sort); else each key packed with its index in one int64 and sorted by value
    (:func:`_sorted_with_index`) when both fit in 63 bits, else a least-significant-digit radix
    sort over 16-bit digits, one pass per digit of the largest key.

    >>> stable_key_order(np.array([2, 0, 2, 1, 0])).tolist()
    [1, 4, 3, 0, 2]
    """
    k = np.asarray(keys, dtype=np.int64)
    order = np.arange(len(k))
    if len(k) == 0:
        return order
    if k.min() < 0:
        raise ValueError("stable_key_order needs non-negative keys")
    if (k[1:] >= k[:-1]).all():  # already grouped in order (as files usually list images): nothing to do
        return order
    top, bits = int(k.max()), len(k).bit_length()
    if top < 1 << 16:
        return np.argsort(k.astype(np.uint16), kind="stable")
    if top.bit_length() + bits <= 63:
        return _sorted_with_index(k, order, bits)
    shift = 0
    while True:
        digit = ((k[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
        if top >> shift == 0:
            return order


def key_chunks(det_keys: np.ndarray, label_keys: np.ndarray, *, n_keys: int,
               max_dets: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Split detections and labels into chunks of whole keys (e.g. images), about ``max_dets`` detections each.

    ``det_keys`` ``(D,)`` and ``label_keys`` ``(L,)`` are integers in ``[0, n_keys)``.
    Yields ``(det_idx, label_idx)``: the indices of the detections and labels
    whose key lies in one range ``[k0, k1)`` of keys, each array ascending by key
    with equal keys in input order (ascending index). Ranges are consecutive and
    cover every key, so each detection and label is in exactly one chunk; a
    chunk holds at most ``max_dets`` detections unless a single key has more.
    Grouping is linear in the number of boxes (:func:`stable_key_order`), so
    per-chunk work on cache-sized arrays keeps the total linear too.
    """
    det_keys = np.asarray(det_keys, dtype=np.int64)
    label_keys = np.asarray(label_keys, dtype=np.int64)
    for name, keys in (("det_keys", det_keys), ("label_keys", label_keys)):
        if len(keys) and (keys.min() < 0 or keys.max() >= n_keys):   # would be dropped or miscounted
            raise ValueError(f"{name} must lie in [0, {n_keys}), got {keys.min()}..{keys.max()}")
    det_order, label_order = stable_key_order(det_keys), stable_key_order(label_keys)
    det_end = np.cumsum(np.bincount(det_keys, minlength=n_keys))     # detections of keys < k + 1
    label_end = np.cumsum(np.bincount(label_keys, minlength=n_keys))
    edges = [0]
    while edges[-1] < n_keys:
        k0 = edges[-1]
        base = int(det_end[k0 - 1]) if k0 else 0
        # the last key whose cumulative count still fits, but always at least one key
        k1 = int(np.searchsorted(det_end, base + max_dets, side="right"))
        edges.append(min(max(k1, k0 + 1), n_keys))
    for k0, k1 in zip(edges[:-1], edges[1:]):
        d0, d1 = (int(det_end[k0 - 1]) if k0 else 0), int(det_end[k1 - 1])
        l0, l1 = (int(label_end[k0 - 1]) if k0 else 0), int(label_end[k1 - 1])
        yield det_order[d0:d1], label_order[l0:l1]


def within_group_ranks(sorted_groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For groups sorted ascending: each position's rank in its group and its group's end."""
    g = np.asarray(sorted_groups)
    n = len(g)
    cuts = np.flatnonzero(g[1:] != g[:-1]) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [n]])
    lens = ends - starts
    return np.arange(n) - np.repeat(starts, lens), np.repeat(ends, lens)


def iter_group_pairs(a_groups: np.ndarray, b_groups: np.ndarray, *,
                     max_pairs: int = MAX_PAIRS) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(ia, ib)`` index arrays of every pair ``(a, b)`` with ``a_groups[a] == b_groups[b]``.

    Pairs come in chunks of whole groups (a group is never split across chunks,
    so per-group algorithms may run chunk by chunk), each chunk of at most about
    ``max_pairs`` pairs (a single larger group is one chunk). Within a chunk,
    pairs are ordered by ``a`` (in ascending group order, stable), then ``b``.
    """
    a_groups = np.asarray(a_groups, dtype=np.int64)
    b_groups = np.asarray(b_groups, dtype=np.int64)
    if len(a_groups) == 0 or len(b_groups) == 0:
        return
    base = min(int(a_groups.min()), int(b_groups.min()))
    a_groups, b_groups = a_groups - base, b_groups - base
    oa, ob = stable_key_order(a_groups), stable_key_order(b_groups)
    ga, gb = a_groups[oa], b_groups[ob]
    span = int(max(ga[-1], gb[-1])) + 1
    if span <= 4 * (len(ga) + len(gb)) + 4096:     # dense keys: each group's b-run from a count per key
        per_key = np.bincount(gb, minlength=span)
        cnt = per_key[ga]
        lo = (np.cumsum(per_key) - per_key)[ga]
    else:
        lo = np.searchsorted(gb, ga, side="left")
        cnt = np.searchsorted(gb, ga, side="right") - lo
    cum = np.cumsum(cnt)
    total = int(cum[-1])
    if total == 0:
        return
    # chunk boundaries on the sorted a-side, only where the group changes
    start = 0
    n = len(ga)
    while start < n:
        base = int(cum[start - 1]) if start else 0
        stop = int(np.searchsorted(cum, base + max_pairs, side="right"))
        stop = max(stop, start + 1)
        if stop < n:  # extend to the end of the group so it is not split
            stop = int(np.searchsorted(ga, ga[stop - 1], side="right"))
        c = cnt[start:stop]
        k = int(c.sum())
        if k:
            offs = np.arange(k) - np.repeat(np.cumsum(c) - c, c)
            yield np.repeat(oa[start:stop], c), ob[np.repeat(lo[start:stop], c) + offs]
        start = stop


def x_overlap_ends(x1: np.ndarray, x2: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For boxes in ``x1`` order within groups, each group at positions ``[start, end)`` (given per
    box): each box's exclusive end of the boxes of its group whose ``x1`` is strictly left of its
    ``x2`` (so the later ones among them overlap it along x; ``x1 == x2`` touches, no overlap).

    Exact: a binary search per box within its group, all boxes at once (one vector step per
    halving, so about log2 of the largest group's size steps).

    >>> x_overlap_ends(np.array([0., 5, 9, 0]), np.array([6., 9, 12, 1]), np.array([0, 0, 0, 3]),
    ...                np.array([3, 3, 3, 4])).tolist()
    [2, 2, 3, 4]
    """
    x1, x2 = np.asarray(x1, dtype=np.float64), np.asarray(x2, dtype=np.float64)
    lo, hi = np.array(start, dtype=np.int64), np.array(end, dtype=np.int64)
    active = np.flatnonzero(lo < hi)
    while len(active):                       # invariant: x1[:lo] < x2 <= x1[hi:] within the group
        mid = (lo[active] + hi[active]) // 2
        left = x1[mid] < x2[active]
        lo[active[left]] = mid[left] + 1
        hi[active[~left]] = mid[~left]
        active = active[lo[active] < hi[active]]
    return lo


def nms_reach(x1: np.ndarray, x2: np.ndarray, iou: float) -> np.ndarray:
    """Per box ``a``, an ``x`` that the ``x1`` of every box ``b`` with ``x1_b >= x1_a`` and IoU(a, b) > ``iou``
    lies strictly left of: ``x2_a - iou * w_a``, less a margin far above rounding (1e-6 of ``iou * w_a``
    and 1e-9 of the coordinates). Why: the intersection is at most ``(x2_a - x1_b) * h_a`` and the union
    at least ``w_a * h_a``, so IoU > ``iou`` needs ``x2_a - x1_b > iou * w_a``. At ``iou`` 0 it is ``x2_a``
    (plus the margin): the boxes that overlap ``a`` along x.

    >>> nms_reach(np.array([0.0, 10.0]), np.array([10.0, 30.0]), 0.5).round(6).tolist()
    [5.000005, 20.00001]
    """
    return x2 - iou * np.maximum(x2 - x1, 0.0) * (1 - 1e-6) + 1e-9 * (np.abs(x1) + np.abs(x2) + 1.0)


def nms(groups: np.ndarray, boxes: np.ndarray, scores: np.ndarray, *, iou: float,
        max_pairs: int = MAX_PAIRS) -> np.ndarray:
    """Greedy non-maximum suppression within each group; returns a keep mask ``(N,)``.

    Within a group, boxes are visited by the tie rule (score descending, then
    lower original index first); a visited box that is still kept suppresses
    every later box of its group whose IoU with it is **strictly greater** than
    ``iou`` (torchvision's and Ultralytics' convention; ``iou`` in ``[0, 1]``). Boxes of
    different groups never suppress each other (pass ``image * C + class`` for the
    served same-class NMS). Empty input gives an empty mask. ``max_pairs``
    bounds memory, not the result.

    Vectorised over groups: only pairs of a group that can exceed ``iou`` are formed: with a group's
    boxes in ``x1`` order, a box ``a`` and each later one ``b`` whose ``x1`` is strictly left of
    :func:`nms_reach` of ``a`` (:func:`x_overlap_ends`; any other pair has IoU at most ``iou``), so
    dense groups cost about their overlaps, not the square of their size. Step ``r`` applies the
    suppressions of every group's rank-``r`` box at once, so the Python loop runs (at most) the
    size of the largest group.
    """
    if not 0.0 <= iou <= 1.0:
        raise ValueError(f"nms iou must lie in [0, 1], got {iou!r}")
    boxes = as_boxes(boxes)
    n = len(boxes)
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep
    order = rank_order(groups, scores)
    g = np.asarray(groups, dtype=np.int64)[order]
    b = boxes[order]
    rank, end = within_group_ranks(g)
    by_x = rank_order(g, -b[:, 0])            # the same groups, each in x1 order (positions in ``order``)
    bx = b[by_x]                              # the boxes in ``by_x`` order: pairs gather from nearby rows
    cols, area = [np.ascontiguousarray(bx[:, k]) for k in range(4)], box_area(bx)
    pos = np.arange(n)
    ends = x_overlap_ends(cols[0], nms_reach(cols[0], cols[2], iou), pos - rank, end)   # groups: the same
    cnt = np.maximum(ends - pos - 1, 0)                                                 # positions in both orders
    cum = np.cumsum(cnt)
    kept = np.ones(n, dtype=bool)
    start = 0
    while start < n:
        base = int(cum[start - 1]) if start else 0
        stop = int(np.searchsorted(cum, base + max_pairs, side="right"))
        stop = max(stop, start + 1)
        if stop < n:
            stop = int(end[stop - 1])        # whole groups per chunk (the same positions in both orders)
        c = cnt[start:stop]
        k = int(c.sum())
        if k:
            xa = np.repeat(pos[start:stop], c)
            xb = xa + 1 + (np.arange(k) - np.repeat(np.cumsum(c) - c, c))
            hit = column_iou([c[xa] for c in cols], [c[xb] for c in cols], area[xa], area[xb]) > iou  # symmetric
            xa, xb = by_x[xa[hit]], by_x[xb[hit]]
            ia, ib = np.minimum(xa, xb), np.maximum(xa, xb)       # positions in ``order``, earlier rank first
            if len(ia):
                by_rank = np.argsort(rank[ia], kind="stable")
                ia, ib = ia[by_rank], ib[by_rank]
                bounds = np.flatnonzero(np.diff(rank[ia])) + 1
                for sa, sb in zip(np.split(ia, bounds), np.split(ib, bounds)):
                    kept[sb[kept[sa]]] = False
        start = stop
    keep[order] = kept
    return keep
