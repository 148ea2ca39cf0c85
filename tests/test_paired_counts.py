"""candor/stats/paired_counts.py: the sign test on per-frame counts, by hand."""
from __future__ import annotations

import pytest

from candor.stats.paired_counts import PairedCounts, compare_counts


def frames(counts: list[int]) -> dict[tuple[str], int]:
    return {(f"f{i}",): c for i, c in enumerate(counts)}


def test_six_frames_all_fewer_for_b_is_significant():
    # B has fewer false positives on 6 frames, A on none, 2 ties: p = 2 * 0.5**6 = 0.03125
    r = compare_counts(frames([3, 1, 2, 1, 5, 1, 0, 2]), frames([0, 0, 1, 0, 0, 0, 0, 2]), unit="frame", alpha=0.05)
    assert (r.n, r.a_fewer, r.b_fewer, r.a_total, r.b_total) == (8, 0, 6, 15, 3)
    assert r.p == pytest.approx(0.03125) and r.verdict == "B better"
    assert r.explanation.startswith("B better: B fewer on 6 frames, A fewer on 0, equal on 2")


def test_totals_are_not_tested_one_bad_frame_is_one_frame():
    """A: one frame with 20 FPs; B: one FP on each of five other frames. Totals favour B; frames do not."""
    a, b = frames([20, 0, 0, 0, 0, 0]), frames([0, 1, 1, 1, 1, 1])
    r = compare_counts(a, b, unit="frame", alpha=0.05)
    assert (r.a_total, r.b_total, r.a_fewer, r.b_fewer) == (20, 5, 5, 1)
    assert r.p == pytest.approx(0.21875) and r.verdict == "no detectable difference"   # 2 * 7/64


def test_round_trip_and_cases_on_one_side():
    r = compare_counts(frames([1, 2]), {("f0",): 1, ("x",): 4}, unit="frame", alpha=0.05)
    assert (r.n, r.only_in_a, r.only_in_b, r.p) == (1, 1, 1, 1.0)
    assert PairedCounts.from_json(r.as_json(), where="s.json") == r
