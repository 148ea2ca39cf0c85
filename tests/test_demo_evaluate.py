"""Hand-computed cases for the demo tools' quick evaluator (tools/demo/evaluate.py)."""
from __future__ import annotations

import numpy as np
import pytest

from tools.demo.evaluate import iou_matrix, match, nms, prf


def test_iou_matrix_hand_computed():
    a = np.array([[0, 0, 10, 10]], float)
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 0, 0]], float)
    assert iou_matrix(a, b).tolist() == [[1.0, pytest.approx(50 / 150), 0.0, 0.0]]


def test_nms_keeps_best_and_disjoint():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [20, 0, 30, 10]], float)
    assert nms(boxes, np.array([0.5, 0.9, 0.4]), 0.5).tolist() == [1, 2]


@pytest.mark.parametrize("truth,pred,scores,expected", [
    # one label, a duplicate pair: the higher-scored one matches, the other is an FP
    ([[0, 0, 10, 10]], [[0, 0, 10, 10], [1, 1, 10, 10]], [0.4, 0.9], (1, 1, 0)),
    # IoU exactly 0.5 counts as a hit
    ([[0, 0, 10, 10]], [[0, 0, 10, 5]], [0.9], (1, 0, 0)),
    # IoU below 0.5 is a miss and a false positive
    ([[0, 0, 10, 10]], [[0, 0, 10, 4]], [0.9], (0, 1, 1)),
    ([], [[0, 0, 1, 1]], [0.5], (0, 1, 0)),
    ([[0, 0, 1, 1]], [], [], (0, 0, 1)),
])
def test_match_greedy_one_to_one(truth, pred, scores, expected):
    t = np.array(truth, float).reshape(-1, 4)
    p = np.array(pred, float).reshape(-1, 4)
    assert match(t, p, np.array(scores, float)) == expected


def test_prf_zero_division_is_zero():
    assert prf(0, 0, 0)["f1"] == 0.0
    assert prf(3, 1, 2) == {"tp": 3, "fp": 1, "fn": 2, "precision": 0.75, "recall": 0.6, "f1": 0.6667}
