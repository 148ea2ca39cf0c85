"""Tests for candor_eval/detection/scoring/matching.py: the one greedy matcher (hand-computed cases)."""
from __future__ import annotations

import numpy as np

from candor_eval.detection.scoring.boxes import paired_iou
from candor_eval.detection.scoring.matching import match_detections

B = np.array


def run(labels, dets, scores, *, lg=None, dg=None, iou=0.5, crowd=None):
    labels, dets = np.array(labels, float).reshape(-1, 4), np.array(dets, float).reshape(-1, 4)
    lg = np.zeros(len(labels), int) if lg is None else np.array(lg)
    dg = np.zeros(len(dets), int) if dg is None else np.array(dg)
    return match_detections(lg, labels, dg, dets, np.array(scores, float), iou=iou,
                            label_crowd=None if crowd is None else np.array(crowd))


def test_duplicate_detection_is_one_tp_one_fp():
    m = run([[0, 0, 10, 10]], [[0, 0, 10, 10], [0, 0, 10, 10]], [0.6, 0.9])
    # the higher score (index 1) is visited first and takes the label
    assert m.det_label.tolist() == [-1, 0]
    assert m.det_fp.tolist() == [True, False]
    assert m.label_det.tolist() == [1]


def test_equal_scores_lower_index_first():
    m = run([[0, 0, 10, 10]], [[0, 0, 10, 10], [0, 0, 10, 10]], [0.5, 0.5])
    assert m.det_label.tolist() == [0, -1]


def test_iou_exactly_at_threshold_matches():
    m = run([[0, 0, 10, 10]], [[0, 0, 10, 5]], [0.5])
    assert paired_iou(B([[0., 0, 10, 10]]), B([[0., 0, 10, 5]]))[0] == 0.5
    assert m.det_tp.tolist() == [True]
    m = run([[0, 0, 10, 10]], [[0, 0, 10, 4.999]], [0.5])
    assert m.det_tp.tolist() == [False]


def test_greedy_by_confidence_not_optimal_assignment():
    # det0 (0.9) overlaps both labels, best with label1; det1 (0.8) only overlaps label1.
    labels = [[0, 0, 10, 10], [2, 0, 12, 10]]
    dets = [[1.5, 0, 11.5, 10], [3, 0, 13, 10]]
    m = run(labels, dets, [0.9, 0.8])
    # det1 has IoU with label0 of 7/13 ~ 0.54 >= 0.5, so it takes label0
    assert m.det_label.tolist() == [1, 0]
    m = run(labels, dets, [0.9, 0.8], iou=0.6)
    assert m.det_label.tolist() == [1, -1]
    assert m.label_det.tolist() == [-1, 0]


def test_iou_tie_between_labels_goes_to_lower_label_index():
    labels = [[0, 0, 10, 10], [0, 0, 10, 10]]
    m = run(labels, [[0, 0, 10, 10]], [0.7])
    assert m.det_label.tolist() == [0]


def test_groups_do_not_interact_and_unlabelled_group_is_all_fp():
    labels = [[0, 0, 10, 10]]
    dets = [[0, 0, 10, 10], [0, 0, 10, 10]]
    m = run(labels, dets, [0.9, 0.8], lg=[0], dg=[1, 0])   # det0 is another class
    assert m.det_label.tolist() == [-1, 0]
    assert m.det_fp.tolist() == [True, False]
    m = run([], dets, [0.9, 0.8])
    assert m.det_fp.tolist() == [True, True] and m.label_det.tolist() == []


def test_empty_detections_all_labels_fn():
    m = run([[0, 0, 1, 1], [2, 2, 3, 3]], [], [])
    assert m.label_found.tolist() == [False, False]
    assert m.det_label.tolist() == []


def test_crowd_label_absorbs_detections_and_is_never_fn():
    labels = [[0, 0, 100, 100], [0, 0, 10, 10]]
    dets = [[0, 0, 10, 10], [20, 20, 30, 30], [40, 40, 50, 50], [200, 200, 210, 210]]
    m = run(labels, dets, [0.9, 0.8, 0.7, 0.6], crowd=[True, False])
    assert m.det_tp.tolist() == [True, False, False, False]
    assert m.det_ignored.tolist() == [False, True, True, False]
    assert m.det_fp.tolist() == [False, False, False, True]
    assert m.label_det.tolist() == [-1, 0]


def test_threshold_suffix_property_and_input_order_invariance():
    rng = np.random.default_rng(7)
    n_img, n_lab, n_det = 6, 40, 120
    def rand_boxes(n):
        xy = rng.uniform(0, 60, (n, 2))
        return np.hstack([xy, xy + rng.uniform(8, 20, (n, 2))])
    lb, db = rand_boxes(n_lab), rand_boxes(n_det)
    lg, dg = rng.integers(0, n_img, n_lab), rng.integers(0, n_img, n_det)
    sc = rng.uniform(0, 1, n_det)
    m = match_detections(lg, lb, dg, db, sc, iou=0.3)
    # matching only the detections at or above t gives the same matches for them
    for t in (0.25, 0.5, 0.8):
        keep = np.flatnonzero(sc >= t)
        mt = match_detections(lg, lb, dg[keep], db[keep], sc[keep], iou=0.3)
        expect = m.det_label[keep]
        assert mt.det_label.tolist() == expect.tolist()
    perm = rng.permutation(n_det)
    mp = match_detections(lg, lb, dg[perm], db[perm], sc[perm], iou=0.3)
    assert mp.det_label.tolist() == m.det_label[perm].tolist()
    # reference: a plain loop
    used = set()
    ref = {}
    for d in sorted(range(n_det), key=lambda d: (-sc[d], d)):
        best, best_iou = -1, 0.3
        for j in range(n_lab):
            if lg[j] != dg[d] or j in used:
                continue
            v = paired_iou(db[[d]], lb[[j]])[0]
            if v >= best_iou and (best < 0 or v > best_iou):
                best, best_iou = j, v
        if best >= 0:
            used.add(best)
        ref[d] = best
    assert m.det_label.tolist() == [ref[d] for d in range(n_det)]


def test_match_at_ious_with_a_tie_rule_per_threshold_equals_one_call_per_rule():
    """Two labels on the same spot: the IoU tie goes to the lower label under "lower" and to the
    higher under "higher", whether the rules come in one call (one sort, sorted again only for the
    tie) or one call each; without a tie both rules give the same matches."""
    from candor_eval.detection.scoring.matching import match_at_ious

    labels = np.array([[0., 0, 10, 10], [0., 0, 10, 10], [20., 20, 30, 30]])
    dets = np.array([[0., 0, 10, 9], [20., 20, 30, 29]])
    args = (np.zeros(3, int), labels, np.zeros(2, int), dets, np.array([0.9, 0.8]))
    both = match_at_ious(*args, ious=[0.5, 0.5, 0.85], label_ties=["lower", "higher", "higher"])
    assert [m.det_label.tolist() for m in both] == [[0, 2], [1, 2], [1, 2]]
    for m, rule, iou in zip(both, ["lower", "higher", "higher"], [0.5, 0.5, 0.85]):
        alone = match_detections(*args, iou=iou, label_ties=rule)
        assert m.det_label.tolist() == alone.det_label.tolist() and m.label_det.tolist() == alone.label_det.tolist()
    no_tie = match_at_ious(np.zeros(2, int), labels[[0, 2]], *args[2:], ious=[0.5, 0.5], label_ties=["lower", "higher"])
    assert no_tie[0].det_label.tolist() == no_tie[1].det_label.tolist() == [0, 1]
