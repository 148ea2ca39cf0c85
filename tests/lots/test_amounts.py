"""USD amounts of the lots track's CSV files (:func:`candor_eval.lots.amounts.parse_amount`): digits with optional
decimals, parsed exactly; zero refused unless allowed; a Problem naming the place otherwise."""
from __future__ import annotations

from decimal import Decimal

import pytest

from candor_eval.common.errors import Problem
from candor_eval.lots.amounts import parse_amount


@pytest.mark.parametrize(("text", "value"), [("185", Decimal("185")), ("185.5", Decimal("185.5")),
                                             (" 185.00 ", Decimal("185.00")), ("0.10", Decimal("0.10"))])
def test_an_amount_is_kept_exact(text, value):
    got = parse_amount(text, where="w")
    assert got == value and isinstance(got, Decimal) and str(got) == text.strip()


@pytest.mark.parametrize("text", ["-1", "1e3", "$185", "call", "", "1.", ".5", "1,000", "١٢"])
def test_not_an_amount_is_a_problem_naming_the_place(text):
    got = parse_amount(text, where="f.csv:row 2.price", noun="price")
    assert isinstance(got, Problem)
    assert (got.where, got.what, got.got) == ("f.csv:row 2.price", "not a price", repr(text))
    assert got.expected == "a positive USD amount such as 185.00"


def test_the_article_follows_the_noun():
    got = parse_amount("x", where="w")
    assert isinstance(got, Problem) and got.what == "not an amount"


def test_zero_is_refused_unless_allowed():
    got = parse_amount("0.00", where="w", noun="value")
    assert isinstance(got, Problem) and got.what == "value must be positive"
    assert parse_amount("0.00", where="w", allow_zero=True) == Decimal("0")
    bad = parse_amount("-0", where="w", allow_zero=True)
    assert isinstance(bad, Problem) and bad.expected == "a non-negative USD amount such as 185.00"
