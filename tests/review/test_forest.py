"""candor_eval/review/forest.py: the forest plot's rows (per metric of a group, headline and FP test, its reference
once, then each candidate with its verdict, a side without paired units left out) and its PNG."""
from __future__ import annotations

import io

import pytest

from candor_eval.review.forest import (
    HEAD_INCHES,
    ROW_INCHES,
    WIDTH_INCHES,
    ForestRow,
    forest_png,
    forest_rows,
    forest_title,
)
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
    interval once, then every candidate's with its verdict and p; metrics outside the headline are
    not drawn."""
    stats = stats_of({"valuation.in_band": {"c1": sign_test(5)},
                      "identification.hit": {"c1": sign_test(6), "c2": sign_test(5)},
                      "identification.tier1.hit": {"c1": sign_test(6)}})
    rows = forest_rows(stats, "lots")
    assert [(r.metric, r.side, r.verdict, r.p) for r in rows] == [
        ("identification.hit", "ref", None, None), ("identification.hit", "c1", "B better", 0.03125),
        ("identification.hit", "c2", "no detectable difference", 0.0625),
        ("valuation.in_band", "ref", None, None), ("valuation.in_band", "c1", "no detectable difference", 0.0625)]
    _, _, rate, lo, hi, *_ = rows[0]
    assert rate == 0.25 and lo == pytest.approx(A_LO, abs=1e-6) and hi == pytest.approx(A_HI, abs=1e-6)
    _, _, rate, lo, hi, *_ = rows[1]
    assert (rate, hi) == (1.0, 1.0) and lo == pytest.approx(B_LO, abs=1e-6)
    # sign_test(5): A 2 of 7 lots, B 7 of 7
    assert rows[2][2] == 1.0 and rows[3][2] == pytest.approx(2 / 7)


def test_a_side_without_paired_units_is_left_out():
    """A candidate compared on no unit draws no row; the reference is drawn from the first candidate
    that has paired units."""
    stats = stats_of({"identification.hit": {"empty": no_units(), "c1": sign_test(6)}})
    assert [s for _, s, *_ in forest_rows(stats, "lots")] == ["ref", "c1"]
    assert forest_rows(stats_of({"identification.hit": {"empty": no_units()}}), "lots") == []


def test_a_detection_group_draws_its_own_set_metrics():
    """``detection.<set>`` draws ``test.label_found``, ``test.frame_error_free`` and the false-positive
    test ``test.false_positives`` of that set only, the last one a mean per frame."""
    stats = stats_of({"detection.night.test.frame_error_free": {"n1": sign_test(5)},
                      "detection.night.test.label_found": {"n1": sign_test(6)},
                      "detection.night.test.false_positives": {"n1": sign_test(6)},
                      "detection.day.test.label_found": {"d1": sign_test(6)}})
    rows = forest_rows(stats, "detection.night")
    assert [(m, s) for m, s, *_ in rows] == [
        ("detection.night.test.label_found", "ref"), ("detection.night.test.label_found", "n1"),
        ("detection.night.test.frame_error_free", "ref"), ("detection.night.test.frame_error_free", "n1"),
        ("detection.night.test.false_positives", "ref"), ("detection.night.test.false_positives", "n1")]
    assert forest_rows(stats, "lots") == []
    assert forest_title(stats, "detection.night") == "detection.night: candidates against ref"


def png_size(data: bytes) -> tuple[int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG"
        return im.size


@pytest.mark.parametrize("n", [0, 1, 10])
def test_the_figure_grows_by_a_row_height_per_row(n):
    """11 in wide, :data:`HEAD_INCHES` plus :data:`ROW_INCHES` per row high (one row's height with no row), at
    100 dpi; 0.8 in more when means per unit get their own panel."""
    rows = [ForestRow("m", f"c{i}", 0.5, 0.25, 0.75, verdict="B worse", p=0.01) for i in range(n)]
    w, h = png_size(forest_png(rows, confidence=0.95))
    assert w == 100 * WIDTH_INCHES and h == round(100 * (HEAD_INCHES + ROW_INCHES * max(n, 1)))
    if n:
        mean = ForestRow("fp", "c", 12.0, 9.0, 15.0, estimate="mean", unit="frame")
        _, h2 = png_size(forest_png([*rows, mean], confidence=0.95))
        assert h2 == round(100 * (HEAD_INCHES + ROW_INCHES * (n + 1) + 0.8))


def test_verdicts_are_drawn_in_their_colour():
    """A worse candidate is drawn red and a better one green (pixels of those colours appear), the
    reference black; a grey-only figure has neither."""
    from PIL import Image

    def colours(verdict):
        rows = [ForestRow("m", "ref", 0.5, 0.3, 0.7), ForestRow("m", "c", 0.4, 0.2, 0.6, verdict=verdict, p=0.01)]
        with Image.open(io.BytesIO(forest_png(rows, confidence=0.95))) as im:
            return {c for _, c in im.convert("RGB").getcolors(1 << 20)}

    red, green = (214, 39, 40), (44, 160, 44)                 # tab:red, tab:green
    assert red in colours("B worse") and green not in colours("B worse")
    assert green in colours("B better") and red not in colours("B better")
    assert red not in colours("no detectable difference") and green not in colours("no detectable difference")


def test_the_figure_is_deterministic():
    """The same rows give the same bytes (no timestamp, no software tag)."""
    rows = forest_rows(stats_of({"identification.hit": {"c1": sign_test(6)}}), "lots")
    first = forest_png(rows, confidence=0.9)
    assert first == forest_png(rows, confidence=0.9) and first != forest_png(rows[:1], confidence=0.9)
    assert b"Software" not in first and b"matplotlib" not in first
