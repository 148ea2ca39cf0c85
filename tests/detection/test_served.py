"""Tests for candor_eval/detection/served.py: the one keep rule (``score >= threshold`` of the box's class,
the boundary kept) and when a served NMS lets every threshold be read off one pass."""
from __future__ import annotations

import numpy as np

from candor_eval.detection.served import Served, ServedNms


def test_a_box_at_its_class_threshold_is_kept_and_one_below_is_not():
    served = Served(np.array([0.3, 0.5]), ServedNms(0.5))
    score = np.array([0.3, np.nextafter(0.3, 0), 0.5, 0.49, 0.9])
    cls = np.array([0, 0, 1, 1, 0])
    assert served.keeps(score, cls).tolist() == [True, False, True, False, True]


def test_thresholds_are_read_by_class_index_and_kept_as_float64():
    served = Served([0.9, 0.1], ServedNms(0.5))               # a list becomes a float64 array
    assert served.thresholds.dtype == np.float64
    assert served.keeps(np.array([0.5, 0.5]), np.array([0, 1])).tolist() == [False, True]


def test_minus_infinity_keeps_every_box_and_at_serves_no_nms():
    served = Served.at(np.full(2, -np.inf), match_iou=0.7)
    assert served.keeps(np.array([0.0, 1e-9]), np.array([1, 0])).all()
    assert served.nms == ServedNms(None) and served.match_iou == 0.7


def test_only_a_same_class_uncapped_nms_is_per_class():
    assert ServedNms(0.5).per_class and ServedNms(None).per_class
    assert not ServedNms(0.5, max_det=1).per_class
    assert not ServedNms(0.5, agnostic=True).per_class
