"""Bid ceiling and verdict: the arithmetic from a lot's estimated value to what to bid.

Pure, exact to the cent: every amount is a :class:`~decimal.Decimal` in USD and the one
division is done on exact fractions (:class:`fractions.Fraction`), then rounded *down* to
the cent, so no float and no 28-digit context can move a ceiling by a cent.

Definitions (params ``comps``; percentages are of the amount named)
    value V           the lot's estimated resale value (unit value x count).
    selling fees      ``sell_fee_pct`` % of V (marketplace and payment fees when reselling).
    target margin     ``margin_pct`` % of V (what the buy must leave as profit).
    shipping          ``shipping`` USD per lot (pickup or freight to resell it).
    buyer's premium   ``buyer_premium_pct`` % added by the auction house to the hammer price.

    ceiling = floor_cent( (V x (1 - (sell_fee_pct + margin_pct) / 100) - shipping)
                          / (1 + buyer_premium_pct / 100) ), and 0.00 when that is negative.

    So the most you may bid is the hammer price H at which H + premium + shipping + fees +
    margin <= V. Example: V = 1000.00, fees 13 %, margin 25 %, shipping 25.00, premium 15 %:
    (1000 x 0.62 - 25) / 1.15 = 517.391... -> 517.39.

Verdict against the lot's current price P (higher bids only ever rise)
    ``pass``  no estimate, a ceiling of 0.00, or P > ceiling.
    ``buy``   P <= ceiling x (1 - ``buy_headroom_pct`` / 100), i.e. there is room for the
              price to rise before it reaches the ceiling, and the estimate is not hedged
              (a hedged model number needs a human look before money moves).
    ``watch`` otherwise (P <= ceiling, but little headroom or a hedged estimate).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

Verdict = Literal["buy", "watch", "pass"]
VERDICTS: tuple[Verdict, ...] = ("buy", "watch", "pass")
ACTIONABLE: frozenset[str] = frozenset({"buy", "watch"})
ZERO = Decimal("0.00")


@dataclass(frozen=True)
class CeilingRules:
    """Fees, shipping, margin and the buy headroom (module docstring); amounts in USD."""

    buyer_premium_pct: Decimal = Decimal("15")
    sell_fee_pct: Decimal = Decimal("13")
    margin_pct: Decimal = Decimal("25")
    shipping: Decimal = Decimal("25.00")
    buy_headroom_pct: Decimal = Decimal("20")


def floor_cents(amount: Fraction) -> Decimal:
    """``amount`` rounded toward minus infinity to the cent, as a 2-place Decimal."""
    cents = math.floor(amount * 100)
    return (Decimal(cents) / 100).quantize(Decimal("0.01"))


def bid_ceiling(value: Decimal, *, rules: CeilingRules) -> Decimal:
    """The highest hammer bid for a lot worth ``value`` (module docstring); never negative."""
    v = Fraction(value)
    net = v * (1 - (Fraction(rules.sell_fee_pct) + Fraction(rules.margin_pct)) / 100) - Fraction(rules.shipping)
    ceiling = net / (1 + Fraction(rules.buyer_premium_pct) / 100)
    return ZERO if ceiling <= 0 else floor_cents(ceiling)


def verdict(ceiling: Decimal | None, current_price: Decimal, *, hedged: bool, rules: CeilingRules) -> Verdict:
    """``buy`` / ``watch`` / ``pass`` for a lot at ``current_price`` (module docstring).

    ``ceiling`` None means no estimate: always ``pass``.
    """
    if ceiling is None or ceiling <= 0 or current_price > ceiling:
        return "pass"
    room = Fraction(ceiling) * (1 - Fraction(rules.buy_headroom_pct) / 100)
    if Fraction(current_price) <= room and not hedged:
        return "buy"
    return "watch"
