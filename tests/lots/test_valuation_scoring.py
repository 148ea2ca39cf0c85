"""Valuation scoring: ratio, band, worst error, no-estimate handling, comps fit."""
from __future__ import annotations

from decimal import Decimal

import pytest

from candor_eval.lots.valuation_scoring import (
    comps_fit,
    in_band,
    lot_error,
    score_lot,
    summarise_valuation,
    value_ratio,
)

BAND = (0.5, 1.5)


@pytest.mark.parametrize(("ratio", "expected"), [
    (0.5, True), (1.5, True), (0.4999, False), (1.5001, False), (1.0, True), (None, False),
])
def test_in_band_inclusive(ratio, expected):
    assert in_band(ratio, band=BAND) is expected


def test_ratio_and_error():
    assert value_ratio(Decimal("200"), Decimal("300")) == 1.5
    assert value_ratio(Decimal("200"), None) is None
    assert lot_error(0.25) == 4.0 and lot_error(3.0) == 3.0
    with pytest.raises(ValueError):
        value_ratio(Decimal("0"), Decimal("1"))


@pytest.mark.parametrize(("relevant", "chosen", "expected"), [
    ({"a", "b", "c", "d"}, {"a", "b", "x"}, (2 / 3, 0.5)),
    ({"a"}, set(), (None, 0.0)),
    (set(), {"a"}, (0.0, None)),
    (set(), set(), (None, None)),
])
def test_comps_fit(relevant, chosen, expected):
    assert comps_fit(relevant, chosen) == expected


def test_summary_hand_computed():
    scores = [
        score_lot("L1", Decimal("100"), Decimal("90"), relevant={"a", "b"}, chosen={"a", "b"}, hedged=False, band=BAND),
        score_lot("L2", Decimal("100"), Decimal("400"), relevant={"c"}, chosen={"c", "x", "y"}, hedged=True, band=BAND),
        score_lot("L3", Decimal("100"), None, relevant={"d"}, chosen=set(), hedged=False, band=BAND),
        score_lot("L4", Decimal("200"), Decimal("50"), relevant={"e"}, chosen={"z"}, hedged=False, band=BAND),
    ]
    s = summarise_valuation(scores)
    assert (s.lots, s.estimated, s.no_estimate, s.hedged, s.in_band) == (4, 3, 1, 1, 1)
    assert s.in_band_rate == 0.25                 # the abstention stays in the denominator
    assert s.median_ratio == 0.9                  # median of 0.9, 4.0, 0.25
    assert (s.worst_error, s.worst_lot) == (4.0, "L2")  # L2 4.0 and L4 0.25 are both 4x: first lot id
    assert s.comps_precision == 3 / 6 and s.comps_recall == 3 / 5


def test_summary_of_nothing():
    s = summarise_valuation([])
    assert (s.lots, s.in_band_rate, s.median_ratio, s.worst_error, s.comps_precision) == (0, None, None, None, None)


def test_all_abstentions():
    s = summarise_valuation([score_lot("L1", Decimal("10"), None, relevant=set(), chosen=set(), hedged=False,
                                       band=BAND)])
    assert (s.no_estimate, s.in_band_rate, s.median_ratio, s.worst_error) == (1, 0.0, None, None)
