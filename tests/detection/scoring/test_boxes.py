"""Tests for candor_eval/detection/scoring/boxes.py: IoU, group pairs, NMS (ties, duplicates, groups)."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.detection.scoring.boxes import (
    box_area,
    box_iou,
    descending_order,
    iter_group_pairs,
    key_chunks,
    nms,
    nms_reach,
    paired_crowd_iou,
    paired_iou,
    rank_order,
    stable_key_order,
    within_group_ranks,
    x_overlap_ends,
)


@pytest.mark.parametrize("a, b, expected", [
    ([0, 0, 10, 10], [0, 0, 10, 10], 1.0),
    ([0, 0, 10, 10], [0, 0, 10, 5], 0.5),            # exactly one half
    ([0, 0, 10, 10], [5, 0, 15, 10], 50 / 150),
    ([0, 0, 10, 10], [10, 0, 20, 10], 0.0),          # touching edges
    ([0, 0, 0, 0], [0, 0, 0, 0], 0.0),               # empty union: defined as 0
    ([0, 0, 10, 10], [20, 20, 30, 30], 0.0),
])
def test_paired_iou_hand_cases(a, b, expected):
    got = paired_iou(np.array([a], float), np.array([b], float))
    assert got.tolist() == [pytest.approx(expected, abs=1e-12)]
    # symmetric
    assert paired_iou(np.array([b], float), np.array([a], float))[0] == pytest.approx(expected, abs=1e-12)


def test_box_iou_matrix_matches_pairs_and_range():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 50, (7, 2))
    a = np.hstack([xy, xy + rng.uniform(1, 30, (7, 2))])
    m = box_iou(a, a[:3])
    assert m.shape == (7, 3)
    assert np.allclose(np.diag(m[:3]), 1.0)
    assert (m >= 0).all() and (m <= 1).all()
    assert box_iou(np.zeros((0, 4)), a).shape == (0, 7)


def test_crowd_iou_uses_detection_area():
    det = np.array([[0, 0, 10, 10]], float)
    crowd = np.array([[0, 0, 100, 100]], float)
    assert paired_crowd_iou(det, crowd).tolist() == [1.0]
    assert paired_iou(det, crowd).tolist() == [pytest.approx(0.01)]


def test_box_area_degenerate_is_zero():
    assert box_area(np.array([[5, 5, 3, 9], [0, 0, 2, 3]], float)).tolist() == [0.0, 6.0]


def test_rank_order_ties_keep_input_order():
    groups = np.array([1, 0, 0, 0, 1])
    scores = np.array([0.5, 0.7, 0.9, 0.7, 0.5])
    assert rank_order(groups, scores).tolist() == [2, 1, 3, 0, 4]


def test_iter_group_pairs_all_pairs_and_chunks_keep_groups_whole():
    a = np.array([2, 0, 1, 0, 2, 2])
    b = np.array([0, 2, 2, 3, 0])
    expected = {(i, j) for i in range(len(a)) for j in range(len(b)) if a[i] == b[j]}
    got = set()
    for ia, ib in iter_group_pairs(a, b):
        got |= set(zip(ia.tolist(), ib.tolist()))
    assert got == expected
    chunks = list(iter_group_pairs(a, b, max_pairs=2))
    assert len(chunks) > 1
    seen_groups = [set(a[ia].tolist()) for ia, _ in chunks]
    for i, gi in enumerate(seen_groups):          # no group appears in two chunks
        for gj in seen_groups[i + 1:]:
            assert not gi & gj
    assert {p for ia, ib in chunks for p in zip(ia.tolist(), ib.tolist())} == expected
    assert list(iter_group_pairs(np.array([], int), b)) == []


@pytest.mark.parametrize("spread", [1, 10**9])          # dense keys (a count per key), sparse (binary search)
def test_iter_group_pairs_dense_and_sparse_keys_give_the_same_pairs_in_order(spread):
    rng = np.random.default_rng(2)
    a, b = rng.integers(-5, 30, 400) * spread, rng.integers(-5, 30, 90) * spread
    got = [(int(i), int(j)) for ia, ib in iter_group_pairs(a, b) for i, j in zip(ia, ib)]
    # by a's group, then a in input order, then b in input order
    expected = [(i, j) for i in np.argsort(a, kind="stable").tolist() for j in range(len(b)) if a[i] == b[j]]
    assert got == expected


def nms_reference(groups, boxes, scores, iou):
    """The definition, box by box: visit each group by (score desc, index), keep a box unless a kept
    one overlaps it with IoU > iou."""
    keep = np.ones(len(boxes), bool)
    for g in np.unique(groups):
        alive = []
        for i in sorted(np.flatnonzero(groups == g), key=lambda i: (-scores[i], i)):
            if all(paired_iou(boxes[[i]], boxes[[j]])[0] <= iou for j in alive):
                alive.append(i)
            else:
                keep[i] = False
    return keep


def test_nms_suppresses_duplicate_keeps_other_group():
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 10.5], [0, 0, 10, 10], [50, 50, 60, 60]], float)
    scores = np.array([0.9, 0.8, 0.95, 0.3])
    groups = np.array([0, 0, 1, 0])          # box 2 is the same place but another class
    assert nms(groups, boxes, scores, iou=0.5).tolist() == [True, False, True, True]


def test_nms_chain_is_greedy_not_transitive():
    # A suppresses B; B would suppress C but B is gone, and A-C overlap is low: C survives.
    boxes = np.array([[0, 0, 10, 10], [4, 0, 14, 10], [8, 0, 18, 10]], float)
    scores = np.array([0.9, 0.8, 0.7])
    iou_ab = paired_iou(boxes[:1], boxes[1:2])[0]
    assert iou_ab > 0.4
    assert nms(np.zeros(3, int), boxes, scores, iou=0.4).tolist() == [True, False, True]


def test_nms_tie_lower_index_wins_and_iou_equal_threshold_not_suppressed():
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 5]], float)
    scores = np.array([0.5, 0.5, 0.4])
    keep = nms(np.zeros(3, int), boxes, scores, iou=0.5)
    # equal scores: index 0 is visited first and suppresses 1; box 2 has IoU exactly 0.5 -> kept
    assert keep.tolist() == [True, False, True]


def test_nms_order_invariant_and_chunked_equals_whole():
    rng = np.random.default_rng(3)
    n = 300
    xy = rng.uniform(0, 100, (n, 2))
    boxes = np.hstack([xy, xy + rng.uniform(5, 30, (n, 2))])
    scores = np.round(rng.uniform(0, 1, n), 2)      # many ties
    groups = rng.integers(0, 7, n)
    keep = nms(groups, boxes, scores, iou=0.45)
    ref = nms_reference(groups, boxes, scores, 0.45)
    assert keep.tolist() == ref.tolist()
    assert nms(groups, boxes, scores, iou=0.45, max_pairs=50).tolist() == ref.tolist()
    perm = rng.permutation(n)   # shuffling the input permutes the result only (up to score ties)
    untied = scores + np.arange(n) * 1e-9
    k1 = nms(groups, boxes, untied, iou=0.45)
    k2 = nms(groups[perm], boxes[perm], untied[perm], iou=0.45)
    assert k2.tolist() == k1[perm].tolist()
    assert nms(np.zeros(0, int), np.zeros((0, 4)), np.zeros(0), iou=0.5).tolist() == []


def test_x_overlap_ends_counts_keys_strictly_left_of_each_x2():
    rng = np.random.default_rng(5)
    g = np.sort(rng.integers(0, 6, 400))
    x1 = np.round(rng.uniform(0, 50, 400))                 # many ties, and x2 == some x1 (touching)
    x2 = x1 + np.round(rng.uniform(-3, 12, 400))            # some boxes with w <= 0
    by_x = np.lexsort((x1, g))
    g, x1, x2 = g[by_x], x1[by_x], x2[by_x]
    rank, end = within_group_ranks(g)
    ends = x_overlap_ends(x1, x2, np.arange(len(g)) - rank, end)
    want = [int(np.sum((g < g[i]) | ((g == g[i]) & (x1 < x2[i])))) for i in range(len(g))]
    assert ends.tolist() == want
    assert x_overlap_ends(np.zeros(0), np.zeros(0), np.zeros(0, int), np.zeros(0, int)).tolist() == []


@pytest.mark.parametrize("iou", [0.0, 0.3, 0.7, 1.0])
def test_nms_matches_the_definition_on_dense_touching_and_degenerate_boxes(iou):
    """Pairs are formed only where boxes overlap along x: touching edges (x1 == other's x2), boxes of
    zero or negative width, equal x1 and dense groups must still give the definition's result."""
    rng = np.random.default_rng(int(iou * 10) + 17)
    n = 500
    xy = np.round(rng.uniform(0, 60, (n, 2)))
    wh = np.round(rng.uniform(-2, 15, (n, 2)))
    boxes = np.hstack([xy, xy + wh])
    scores = np.round(rng.uniform(0, 1, n), 1)
    groups = rng.integers(0, 4, n)
    assert nms(groups, boxes, scores, iou=iou).tolist() == nms_reference(groups, boxes, scores, iou).tolist()
    expected = nms_reference(groups, boxes, scores, iou).tolist()
    assert nms(groups, boxes, scores, iou=iou, max_pairs=7).tolist() == expected
    touching = np.array([[0, 0, 10, 10], [10, 0, 20, 10], [5, 0, 5, 10]], float)   # IoU 0 with each other
    assert nms(np.zeros(3, int), touching, np.array([0.9, 0.8, 0.7]), iou=iou).all()


@pytest.mark.parametrize("iou", [0.0, 0.25, 0.5, 0.7, 1.0])
def test_every_pair_above_the_iou_starts_left_of_the_reach(iou):
    """nms_reach bounds the pairs NMS forms: every box b at or right of a's x1 whose IoU with a exceeds
    ``iou`` starts strictly left of a's reach, so no suppression is lost; on a grid of halves many IoUs
    equal ``iou`` exactly (not suppressed) and the result stays the definition's."""
    rng = np.random.default_rng(int(iou * 100) + 3)
    xy = rng.integers(0, 12, (300, 2)) * 0.5
    boxes = np.hstack([xy, xy + rng.integers(0, 9, (300, 2)) * 0.5])
    reach = nms_reach(boxes[:, 0], boxes[:, 2], iou)
    a, b = np.nonzero(box_iou(boxes, boxes) > iou)
    right = boxes[b, 0] >= boxes[a, 0]
    assert right.any() or iou == 1.0
    assert (boxes[b, 0][right] < reach[a][right]).all()
    groups, scores = rng.integers(0, 2, 300), rng.integers(0, 4, 300) / 4
    assert nms(groups, boxes, scores, iou=iou).tolist() == nms_reference(groups, boxes, scores, iou).tolist()


def test_nms_refuses_an_iou_outside_the_unit_interval():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        nms(np.zeros(1, int), np.zeros((1, 4)), np.zeros(1), iou=-0.1)


def test_rank_order_equals_stable_lexsort_and_group_ranks():
    rng = np.random.default_rng(11)
    groups = rng.integers(-3, 40, 2000)
    scores = np.round(rng.uniform(0, 1, 2000), 2)       # many ties
    order = rank_order(groups, scores)
    assert order.tolist() == np.lexsort((np.arange(2000), -scores, groups)).tolist()
    assert rank_order(groups[order], scores[order]).tolist() == list(range(2000))   # sorted fast path
    for spread in (2**40, 2**62):                   # several radix passes; the lexsort fallback
        big = groups * (spread // 40)
        assert rank_order(big, scores).tolist() == order.tolist()
    rank, end = within_group_ranks(np.array([2, 2, 5, 7, 7, 7]))
    assert rank.tolist() == [0, 1, 0, 0, 1, 2] and end.tolist() == [2, 2, 3, 6, 6, 6]
    assert within_group_ranks(np.array([], int))[0].tolist() == []


def test_rank_order_of_boxes_listed_by_score_within_each_image_equals_the_lexsort():
    """Images in order, each image's boxes by score (classes interleaved, as detectors list them):
    the stable sort by group alone; with ties (also -0.0 and 0.0); one box out of place falls back."""
    rng = np.random.default_rng(12)
    frame = np.repeat(np.arange(50), 40)
    scores = np.concatenate([np.sort(np.round(rng.uniform(0, 1, 40), 1))[::-1] for _ in range(50)])
    scores[scores == 0.0] = np.where(rng.random(int((scores == 0.0).sum())) < 0.5, -0.0, 0.0)
    groups = frame * 7 + rng.integers(0, 7, len(frame))
    expected = np.lexsort((np.arange(len(frame)), -scores, groups)).tolist()
    assert rank_order(groups, scores).tolist() == expected
    scores[5], scores[6], groups[6] = 0.0, 1.0, groups[5]   # a higher score after a lower one in a group
    assert rank_order(groups, scores).tolist() == np.lexsort((np.arange(len(frame)), -scores, groups)).tolist()


def test_stable_key_order_hand_case_and_equals_stable_argsort():
    assert stable_key_order(np.array([2, 0, 2, 1, 0])).tolist() == [1, 4, 3, 0, 2]
    assert stable_key_order(np.array([], int)).tolist() == []
    assert stable_key_order(np.array([0, 0, 3, 70_000])).tolist() == [0, 1, 2, 3]     # already grouped
    rng = np.random.default_rng(5)
    # below 2**16: one uint16 counting sort; then keys packed with their index; 2**60: four 16-bit radix passes
    for top in (3, 2**16, 2**16 + 1, 70_000, 2**40, 2**60):
        keys = rng.integers(0, top, 3000)
        keys[::7] = keys[0]                 # ties must keep input order
        keys[1] = top - 1                   # the largest key decides the method
        assert stable_key_order(keys).tolist() == np.argsort(keys, kind="stable").tolist()
    with pytest.raises(ValueError):
        stable_key_order(np.array([1, -1]))


def test_key_chunks_hand_case_whole_keys_in_stable_order():
    # detections per key: 0 -> [1, 4], 1 -> [3], 2 -> [0, 2]; labels: key 0 -> [2], 1 -> [0], 2 -> [1]
    chunks = list(key_chunks(np.array([2, 0, 2, 1, 0]), np.array([1, 2, 0]), n_keys=3, max_dets=2))
    assert [(d.tolist(), lab.tolist()) for d, lab in chunks] == [([1, 4], [2]), ([3], [0]), ([0, 2], [1])]
    # a key with more detections than max_dets is one chunk of its own; keys without boxes still appear
    chunks = list(key_chunks(np.array([1, 1, 1]), np.array([0, 2]), n_keys=3, max_dets=1))
    assert [(d.tolist(), lab.tolist()) for d, lab in chunks] == [([], [0]), ([0, 1, 2], []), ([], [1])]


def test_key_chunks_cover_everything_once_in_key_order():
    rng = np.random.default_rng(9)
    dk, lk = rng.integers(0, 50, 800), rng.integers(0, 50, 120)
    for max_dets in (1, 16, 100, 10_000):
        chunks = list(key_chunks(dk, lk, n_keys=50, max_dets=max_dets))
        d = np.concatenate([c[0] for c in chunks])
        lab = np.concatenate([c[1] for c in chunks])
        assert d.tolist() == np.argsort(dk, kind="stable").tolist()
        assert lab.tolist() == np.argsort(lk, kind="stable").tolist()
        for (d1, l1), (d2, l2) in zip(chunks, chunks[1:]):     # consecutive, disjoint key ranges
            assert max(dk[d1].tolist() + lk[l1].tolist(), default=-1) < min(dk[d2].tolist() + lk[l2].tolist(),
                                                                            default=99)
        assert all(len(c[0]) <= max_dets or len(set(dk[c[0]].tolist())) == 1 for c in chunks)


@pytest.mark.parametrize("dk,lk", [([0, 3], [0]), ([0], [-1])])
def test_key_chunks_rejects_keys_outside_the_range(dk, lk):
    with pytest.raises(ValueError, match=r"must lie in \[0, 3\)"):
        list(key_chunks(np.array(dk), np.array(lk), n_keys=3, max_dets=2))


def test_descending_order_equals_the_stable_comparison_sort():
    """Ties (many, as rounded scores have), signed zeros, negatives and a given starting order."""
    rng = np.random.default_rng(3)
    v = np.round(rng.normal(size=5000), 2)
    v[:50] = 0.0
    v[50:100] = -0.0
    v[100:110] = np.inf
    start = rng.permutation(len(v))
    assert descending_order(v).tolist() == np.argsort(-v, kind="stable").tolist()
    assert descending_order(v, start).tolist() == start[np.argsort(-v[start], kind="stable")].tolist()
    with_nan = np.array([0.5, np.nan, 0.7])
    assert descending_order(with_nan).tolist() == np.argsort(-with_nan, kind="stable").tolist()
