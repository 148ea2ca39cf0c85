"""Bid ceiling arithmetic exact to the cent, and the verdict rules."""
from __future__ import annotations

import math
from decimal import Decimal

import pytest

from candor_eval.lots.ceiling import CeilingRules, bid_ceiling, verdict

R = CeilingRules(buyer_premium_pct=Decimal("15"), sell_fee_pct=Decimal("13"), margin_pct=Decimal("25"),
                 shipping=Decimal("25.00"), buy_headroom_pct=Decimal("20"))


@pytest.mark.parametrize(("value", "expected"), [
    # (1000 * 0.62 - 25) / 1.15 = 517.3913... -> 517.39 (rounded down)
    ("1000.00", "517.39"),
    # (185 * 0.62 - 25) / 1.15 = 89.7 / 1.15 = 78.0000 exactly
    ("185.00", "78.00"),
    # (100 * 0.62 - 25) / 1.15 = 37 / 1.15 = 32.1739... -> 32.17
    ("100.00", "32.17"),
    # net negative: 40 * 0.62 - 25 = -0.2 -> 0.00
    ("40.00", "0.00"),
    # exactly zero net: 25 / 0.62 is not in cents; 40.33 * 0.62 = 25.0046 -> 0.0046/1.15 = 0.004 -> 0.00
    ("40.33", "0.00"),
])
def test_ceiling_hand_computed(value, expected):
    assert bid_ceiling(Decimal(value), rules=R) == Decimal(expected)
    assert str(bid_ceiling(Decimal(value), rules=R)) == expected


def test_ceiling_is_exact_where_floats_are_not():
    # 0.1 + 0.2 style trap: fees 0 %, margin 0 %, no shipping, premium 0 % -> ceiling == value exactly
    zero = CeilingRules(buyer_premium_pct=Decimal(0), sell_fee_pct=Decimal(0), margin_pct=Decimal(0),
                        shipping=Decimal(0), buy_headroom_pct=Decimal(0))
    for v in ("0.30", "1234567.89", "0.01"):
        assert bid_ceiling(Decimal(v), rules=zero) == Decimal(v)
    # premium 1 %: 241.39 / 1.01 = 239.00 exactly; float division floors to 238.99
    p1 = CeilingRules(buyer_premium_pct=Decimal(1), sell_fee_pct=Decimal(0), margin_pct=Decimal(0),
                      shipping=Decimal(0))
    assert math.floor(241.39 / 1.01 * 100) == 23899
    assert bid_ceiling(Decimal("241.39"), rules=p1) == Decimal("239.00")


def test_ceiling_covers_costs():
    """At the ceiling, hammer + premium + shipping + fees + margin never exceeds the value."""
    for cents in range(5000, 500000, 7919):
        v = Decimal(cents) / 100
        c = bid_ceiling(v, rules=R)
        cost = c * Decimal("1.15") + Decimal("25.00") + v * Decimal("0.38")
        assert cost <= v
        nxt = (c + Decimal("0.01")) * Decimal("1.15") + Decimal("25.00") + v * Decimal("0.38")
        assert nxt > v  # one cent more would overbid


@pytest.mark.parametrize(("ceiling", "price", "hedged", "expected"), [
    ("100.00", "80.00", False, "buy"),     # 80 <= 100 * 0.8
    ("100.00", "80.01", False, "watch"),   # a cent above the headroom line
    ("100.00", "100.00", False, "watch"),  # at the ceiling
    ("100.00", "100.01", False, "pass"),
    ("100.00", "10.00", True, "watch"),    # hedged never buys
    ("0.00", "0.00", False, "pass"),       # nothing to bid
    (None, "1.00", False, "pass"),         # no estimate
])
def test_verdict(ceiling, price, hedged, expected):
    c = None if ceiling is None else Decimal(ceiling)
    assert verdict(c, Decimal(price), hedged=hedged, rules=R) == expected
