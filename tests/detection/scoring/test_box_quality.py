"""TP box quality (candor_eval/detection/scoring/box_quality.py): hand-computed IoU, edge error and percentiles."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.detection.scoring.box_quality import quality_block, quality_by_class, tp_box_errors


def test_edge_error_is_in_model_input_pixels():
    det = np.array([[10.0, 10, 30, 30], [0, 0, 10, 10]])
    lab = np.array([[12.0, 10, 30, 34], [0, 0, 10, 10]])
    iou, edge = tp_box_errors(det, lab, np.array([0.5, 2.0]))
    # first: |2| + |0| + |0| + |4| = 6 px / 4 edges = 1.5 original px, at scale 0.5: 0.75 input px
    assert edge.tolist() == [0.75, 0.0]
    assert iou[0] == pytest.approx(18 * 20 / (20 * 20 + 18 * 24 - 18 * 20)) and iou[1] == 1.0


def test_percentiles_interpolate_linearly():
    q = quality_block(np.array([0.6, 0.7, 0.8, 0.9, 1.0]), np.array([1.0, 1.0, 2.0, 2.0, 4.0]))
    # 10th percentile at rank 0.4 between 0.6 and 0.7; median the middle value
    assert q == {"tp": 5, "iou_median": 0.8, "iou_p10": 0.64, "edge_error_px": 2.0}


def test_by_class_reads_only_found_labels():
    iou = np.array([0.9, np.nan, 0.7, 0.5])
    edge = np.array([1.0, np.nan, 3.0, 5.0])
    micro, per = quality_by_class(iou, edge, np.array([0, 0, 1, 1]), classes=("a", "b", "c"))
    assert micro["tp"] == 3 and micro["iou_median"] == 0.7 and micro["edge_error_px"] == 3.0
    assert per["a"] == {"tp": 1, "iou_median": 0.9, "iou_p10": 0.9, "edge_error_px": 1.0}
    assert per["b"]["iou_median"] == 0.6 and per["c"] == {"tp": 0, "iou_median": None, "iou_p10": None,
                                                           "edge_error_px": None}


def test_percentiles_are_numpys_bit_for_bit_for_every_run_at_once():
    """The runs' percentiles equal ``np.percentile`` of each (method linear) to the last bit: runs of 1 to
    300 values, ties, values closer than 1e-12, the 10th and 50th percentiles (and the ends)."""
    from candor_eval.detection.scoring.box_quality import _sorted_percentile

    rng = np.random.default_rng(6)
    runs = [rng.random(int(n)) for n in rng.integers(1, 300, 200)]
    runs += [np.round(rng.random(int(n)), 2) for n in rng.integers(1, 40, 100)]
    runs += [0.5 + rng.random(int(n)) * 1e-12 for n in rng.integers(1, 9, 50)] + [np.array([0.3])]
    counts = np.array([len(r) for r in runs])
    starts = np.cumsum(counts) - counts
    values = np.concatenate([np.sort(r) for r in runs])
    for q in (0, 10, 50, 90, 100):
        got = _sorted_percentile(values, starts, counts, q)
        assert got.tobytes() == np.array([np.percentile(r, q) for r in runs]).tobytes(), q


def test_by_class_equals_each_class_on_its_own():
    rng = np.random.default_rng(7)
    iou = np.round(rng.uniform(0.5, 1, 500), 3)
    iou[rng.random(500) < 0.2] = np.nan
    edge = rng.uniform(0, 9, 500)
    cls = rng.integers(0, 5, 500)
    micro, per = quality_by_class(iou, edge, cls, classes=("a", "b", "c", "d", "e", "f"))
    found = ~np.isnan(iou)
    for i, name in enumerate("abcdef"):
        mine = found & (cls == i)
        ref = {"tp": 0, "iou_median": None, "iou_p10": None, "edge_error_px": None} if not mine.any() else {
            "tp": int(mine.sum()), "iou_median": round(float(np.percentile(iou[mine], 50)), 6),
            "iou_p10": round(float(np.percentile(iou[mine], 10)), 6),
            "edge_error_px": round(float(edge[mine].mean()), 6)}
        assert per[name] == ref, name
    assert micro["tp"] == int(found.sum()) and micro["iou_median"] == round(float(np.percentile(iou[found], 50)), 6)
