"""candor_eval/review/forest.py: the forest plot's rows (per headline metric of a group, its reference
once, then each candidate, a side without paired units left out) and its PNG (size by rows)."""
from __future__ import annotations

import io

import pytest

from candor_eval.review.forest import ROW_INCHES, forest_png, forest_rows
from candor_eval.review.stats_file import Comparisons, StatsFile
from candor_eval.stats.paired import compare_paired
from tests.review.test_headline import sign_test

# sign_test(6): A succeeds on 2 of 8 lots, B on 8 of 8; Wilson 95% by hand (z = 1.96):
# 2/8 -> [0.0715, 0.5907], 8/8 -> [0.6756, 1]
A_LO, A_HI, B_LO = 0.071479, 0.590725, 0.675592


def stats_of(paired: dict[str, dict]) -> StatsFile:
    return StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={}, inputs={}, rates={},
                     paired={m: Comparisons("ref", c) for m, c in paired.items()})


def no_units():
    """A comparison on no common unit: neither side has a rate."""
    return compare_paired({}, {}, unit="lot", alpha=0.05, confidence=0.95)


def test_rows_are_reference_once_then_each_candidate_per_headline_metric():
    """Each headline metric of ``lots`` present, in the headline order: the reference's rate and
    interval once, then every candidate's with its p; metrics outside the headline are not drawn."""
    stats = stats_of({"valuation.in_band": {"c1": sign_test(5)},
                      "identification.hit": {"c1": sign_test(6), "c2": sign_test(5)},
                      "identification.tier1.hit": {"c1": sign_test(6)}})
    rows = forest_rows(stats, "lots")
    assert [(m, s) for m, s, *_ in rows] == [
        ("identification.hit", "ref"), ("identification.hit", "c1 (p=0.0312)"), ("identification.hit", "c2 (p=0.0625)"),
        ("valuation.in_band", "ref"), ("valuation.in_band", "c1 (p=0.0625)")]
    _, _, rate, lo, hi = rows[0]
    assert rate == 0.25 and lo == pytest.approx(A_LO, abs=1e-6) and hi == pytest.approx(A_HI, abs=1e-6)
    _, _, rate, lo, hi = rows[1]
    assert (rate, hi) == (1.0, 1.0) and lo == pytest.approx(B_LO, abs=1e-6)
    # sign_test(5): A 2 of 7 lots, B 7 of 7
    assert rows[2][2] == 1.0 and rows[3][2] == pytest.approx(2 / 7)


def test_a_side_without_paired_units_is_left_out():
    """A candidate compared on no unit draws no row; the reference is drawn from the first candidate
    that has paired units."""
    stats = stats_of({"identification.hit": {"empty": no_units(), "c1": sign_test(6)}})
    assert [s for _, s, *_ in forest_rows(stats, "lots")] == ["ref", "c1 (p=0.0312)"]
    assert forest_rows(stats_of({"identification.hit": {"empty": no_units()}}), "lots") == []


def test_a_detection_group_draws_its_own_set_metrics():
    """``detection.<set>`` draws ``test.label_found`` and ``test.frame_error_free`` of that set only."""
    stats = stats_of({"detection.night.test.frame_error_free": {"n1": sign_test(5)},
                      "detection.night.test.label_found": {"n1": sign_test(6)},
                      "detection.night.test.false_positives": {"n1": sign_test(6)},
                      "detection.day.test.label_found": {"d1": sign_test(6)}})
    rows = forest_rows(stats, "detection.night")
    assert [(m, s) for m, s, *_ in rows] == [
        ("detection.night.test.label_found", "ref"), ("detection.night.test.label_found", "n1 (p=0.0312)"),
        ("detection.night.test.frame_error_free", "ref"), ("detection.night.test.frame_error_free", "n1 (p=0.0625)")]
    assert forest_rows(stats, "lots") == []


def png_size(data: bytes) -> tuple[int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG"
        return im.size


@pytest.mark.parametrize("n", [0, 1, 10])
def test_the_figure_grows_by_a_row_height_per_row(n):
    """9 in wide, 1.2 in plus :data:`ROW_INCHES` per row high (one row's height with no row), at 100 dpi."""
    rows = [("m", f"c{i} (p=1)", 0.5, 0.25, 0.75) for i in range(n)]
    w, h = png_size(forest_png(rows, confidence=0.95))
    assert w == 900 and h == round(100 * (1.2 + ROW_INCHES * max(n, 1)))


def test_the_figure_is_deterministic():
    """The same rows give the same bytes (no timestamp, no software tag)."""
    rows = forest_rows(stats_of({"identification.hit": {"c1": sign_test(6)}}), "lots")
    first = forest_png(rows, confidence=0.9)
    assert first == forest_png(rows, confidence=0.9) and first != forest_png(rows[:1], confidence=0.9)
    assert b"Software" not in first and b"matplotlib" not in first
