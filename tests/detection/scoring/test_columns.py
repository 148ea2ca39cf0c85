"""Tests for candor_eval/detection/scoring/columns.py: the shared table helpers."""
from __future__ import annotations

import numpy as np

from candor_eval.detection.scoring.columns import EDGE_TOLERANCE, inside_image, lookup, xywh_to_xyxy


def test_inside_image_tolerates_rounding_only():
    sizes = np.array([[100, 50]] * 4)
    boxes = np.array([[0, 0, 100, 50], [-EDGE_TOLERANCE * 100, 0, 10, 10], [-0.2, 0, 10, 10], [0, 0, 10, 50.1]])
    assert inside_image(boxes, sizes).tolist() == [True, True, False, False]


def test_xywh_to_xyxy_and_lookup():
    assert xywh_to_xyxy(np.array([[1.0, 2.0, 3.0, 4.0]])).tolist() == [[1, 2, 4, 6]]
    assert lookup(np.array([], dtype=np.int64), {}).tolist() == []
    assert lookup(np.array([1]), {}) is None
    assert lookup(np.array([5, 2]), {2: 1, 5: 0}).tolist() == [0, 1]
