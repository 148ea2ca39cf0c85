"""candor_eval.common.rounding: every stored rate, bound and price is a Python float rounded to
``DECIMALS`` = 6 decimals (``None`` stays ``None``); a ratio over a zero denominator is ``None``,
never a division error or NaN."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from candor_eval.common.rounding import DECIMALS, ratio, rounded


def test_six_decimals():
    assert DECIMALS == 6


@pytest.mark.parametrize("x, expected", [
    (1 / 3, 0.333333), (-2 / 3, -0.666667), (1234.5678912, 1234.567891), (1e-7, 0.0), (0.0000006, 0.000001),
    (3, 3.0), (None, None),
])
def test_rounded_by_hand(x, expected):
    assert rounded(x) == expected


def test_rounded_is_a_plain_float_whatever_came_in():
    """numpy scalars come out as Python floats (they write to JSON); a float32's noise is gone."""
    for x in (np.float64(0.25), np.float32(0.1), np.int64(2), True):
        assert type(rounded(x)) is float
    assert rounded(np.float32(0.1)) == 0.1 and json.dumps(rounded(np.float32(0.1))) == "0.1"


def test_the_order_of_a_sum_no_longer_shows():
    """The reason for rounding: a float sum's last bits depend on its order; six decimals do not."""
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1
    assert rounded(0.1 + 0.2 + 0.3) == rounded(0.3 + 0.2 + 0.1) == 0.6


@given(st.floats(min_value=-1e6, max_value=1e6))
def test_rounded_is_idempotent_and_within_half_a_unit_of_the_last_decimal(x):
    r = rounded(x)
    assert rounded(r) == r
    assert abs(r - x) <= 0.5e-6 + 1e-9


@pytest.mark.parametrize("num, den, expected", [
    (1, 3, 0.333333), (2, 3, 0.666667), (2, 4, 0.5), (0, 7, 0.0), (7, 7, 1.0), (0, 0, None), (5, 0, None),
])
def test_ratio_by_hand_and_a_zero_denominator_is_none(num, den, expected):
    assert ratio(num, den) == expected


@given(st.integers(0, 10**6), st.integers(1, 10**6))
def test_ratio_is_the_rounded_quotient(num, den):
    assert ratio(num, den) == rounded(num / den)
