"""Tests for candor_eval/detection/scoring/reinference.py: pairing fresh boxes with canonical ones, by hand-built
files."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.detection.detections_file import RawDetections
from candor_eval.detection.scoring.reinference import Pair, Tolerance, changed_rows, compare_boxes, threshold_crossings

TOL = Tolerance(box_px=0.01, score=1e-4)
HEADER = {"format": "candor-detections/1", "model": "m", "onnx_sha256": "a" * 64, "classes": ["deer", "sheep"],
          "input_size": [64, 64], "layout": "ultralytics", "floor": 0.05}


def raw(rows: list[tuple[int, list[float]]], *, frames=("f1", "f2"), header=None, sizes=None) -> RawDetections:
    """A file of ``rows``: (frame index, [x1, y1, x2, y2, score, class])."""
    arr = np.array([r for _, r in rows], dtype=np.float64).reshape(-1, 6)
    return RawDetections(header=header or HEADER, frames=tuple(frames),
                         sizes=sizes or {f: (100, 80) for f in frames},
                         frame=np.array([f for f, _ in rows], dtype=np.int64), cls=arr[:, 5].astype(np.int64),
                         boxes=arr[:, :4], score=arr[:, 4])


BASE = [(0, [10, 10, 50, 50, 0.8, 0]), (0, [12, 10, 52, 50, 0.6, 0]), (1, [1, 2, 3, 4, 0.3, 1])]


def test_identical_files_pair_every_box_bit_for_bit():
    c = compare_boxes(raw(BASE), raw(BASE), tol=TOL)
    assert c.ok and len(c.pairs) == 3 and c.identical_pairs == 3
    assert (c.max_box_px, c.max_score) == (0.0, 0.0) and c.unpaired == ()


def test_differences_within_tolerance_pair_and_are_measured():
    fresh = [(0, [10.004, 10, 50, 50, 0.80003, 0]), (0, [12, 10, 52, 49.999, 0.6, 0]), (1, [1, 2, 3, 4, 0.3, 1])]
    c = compare_boxes(raw(BASE), raw(fresh), tol=TOL)
    assert c.ok and len(c.pairs) == 3 and c.identical_pairs == 1
    assert c.max_box_px == pytest.approx(0.004) and c.max_score == pytest.approx(3e-5)


def test_a_difference_of_exactly_the_tolerance_agrees():
    c = compare_boxes(raw([(0, [10, 10, 50, 50, 0.8, 0])]), raw([(0, [10.01, 10, 50, 50, 0.8001, 0])]), tol=TOL)
    assert c.ok and len(c.pairs) == 1


@pytest.mark.parametrize("fresh_row", [
    [10.02, 10, 50, 50, 0.8, 0],     # a coordinate 0.02 px off
    [10, 10, 50, 50, 0.8002, 0],     # score 2e-4 off
])
def test_beyond_tolerance_is_a_disagreement_on_both_sides(fresh_row):
    c = compare_boxes(raw([(0, [10, 10, 50, 50, 0.8, 0])]), raw([(0, fresh_row)]), tol=TOL)
    assert not c.ok and [u.side for u in c.unpaired] == ["canonical", "fresh"]
    assert all(u.why is None for u in c.unpaired)
    assert "f1: canonical box of class deer [10.0, 10.0, 50.0, 50.0] score 0.8 has no twin" in c.disagreements


def test_the_same_box_under_another_class_is_a_class_flip():
    c = compare_boxes(raw([(0, [10, 10, 50, 50, 0.8, 0])]), raw([(0, [10, 10, 50, 50.005, 0.80002, 1])]), tol=TOL)
    assert c.ok and [(u.side, u.cls, u.why) for u in c.unpaired] == [("canonical", "deer", "class flip"),
                                                                       ("fresh", "sheep", "class flip")]
    far = compare_boxes(raw([(0, [10, 10, 50, 50, 0.8, 0])]), raw([(1, [10, 10, 50, 50, 0.8, 1])]), tol=TOL)
    assert not far.ok                  # another frame is never a flip


def test_a_missing_box_is_a_disagreement_unless_it_crossed_the_floor():
    extra_near_floor = (1, [5, 5, 9, 9, 0.05004, 0])
    extra_high = (1, [5, 5, 9, 9, 0.4, 0])
    ok = compare_boxes(raw(BASE + [extra_near_floor]), raw(BASE), tol=TOL)
    assert ok.ok and [(u.frame, u.cls, u.why) for u in ok.unpaired] == [("f2", "deer", "floor")]
    bad = compare_boxes(raw(BASE), raw(BASE + [extra_high]), tol=TOL)
    assert not bad.ok and [(u.side, u.frame, u.why) for u in bad.unpaired] == [("fresh", "f2", None)]


def test_pairing_takes_the_closest_agreeing_box():
    canonical = [(0, [10, 10, 20, 20, 0.5, 0]), (0, [10.008, 10, 20, 20, 0.5, 0])]
    fresh = [(0, [10.009, 10, 20, 20, 0.5, 0]), (0, [10.001, 10, 20, 20, 0.5, 0])]
    c = compare_boxes(raw(canonical), raw(fresh), tol=TOL)
    # the first canonical box (stable order on equal scores) takes fresh 1 (0.001 away), not fresh 0 (0.009)
    assert c.ok and c.pairs == (Pair(0, 1), Pair(1, 0))
    assert c.max_box_px == pytest.approx(0.001)


@pytest.mark.parametrize("change, problem", [
    (dict(header=HEADER | {"onnx_sha256": "b" * 64}), "header onnx_sha256"),
    (dict(header=HEADER | {"floor": 0.1}), "header floor"),
    (dict(frames=("f2", "f1")), "same frames, another order"),
    (dict(frames=("f1", "f3")), "canonical only ['f2'], fresh only ['f3']"),
    (dict(sizes={"f1": (100, 80), "f2": (100, 81)}), "f2: size canonical (100, 80), fresh (100, 81)"),
])
def test_incomparable_files_are_disagreements(change, problem):
    c = compare_boxes(raw(BASE), raw([], **change), tol=TOL)
    assert not c.ok and any(problem in line for line in c.disagreements), c.disagreements


def test_empty_files_agree():
    c = compare_boxes(raw([]), raw([]), tol=TOL)
    assert c.ok and c.pairs == () and (c.max_box_px, c.max_score) == (0.0, 0.0)


def test_threshold_crossings_name_the_frame_class_and_scores():
    canonical, fresh = raw(BASE), raw([(0, [10, 10, 50, 50, 0.79995, 0]), *BASE[1:]])
    c = compare_boxes(canonical, fresh, tol=TOL)
    got = threshold_crossings(canonical, fresh, c.pairs, class_thresholds=np.array([0.8, 0.35]))
    assert got == [("f1", "deer", 0.8, 0.8, 0.79995)]
    assert threshold_crossings(canonical, fresh, c.pairs, class_thresholds=np.array([0.5, 0.35])) == []


def test_changed_rows_by_key_columns():
    a = [("f1", "m", 1, 0, 2), ("f2", "m", 0, 0, 0), ("f3", "m", 1, 1, 1)]
    b = [("f1", "m", 1, 0, 2), ("f2", "m", 1, 0, 0), ("f4", "m", 0, 0, 0)]
    assert changed_rows(a, b, key=2) == [(("f2", "m", 0, 0, 0), ("f2", "m", 1, 0, 0)),
                                         (("f3", "m", 1, 1, 1), None), (None, ("f4", "m", 0, 0, 0))]
    assert changed_rows(a, a, key=2) == []
