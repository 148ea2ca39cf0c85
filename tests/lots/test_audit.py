"""Audit arithmetic on a hand-computed example."""
from __future__ import annotations

from decimal import Decimal

from candor_eval.lots.audit import AuditLot, audit_counts, audit_json, percent_change, summarise_audit


def A(lot, pv, pc, av, ac, cause=""):
    return AuditLot(lot, pv, Decimal(pc), av, Decimal(ac), cause)


def test_hand_computed_audit():
    lots = [
        A("a", "buy", "1000.00", "pass", "120.00", "screen_dimension_as_quantity"),
        A("b", "buy", "500.00", "buy", "450.00", "title_model_differs_from_plate"),
        A("c", "watch", "300.00", "watch", "300.00"),
        A("d", "pass", "10.00", "watch", "80.00", "title_model_differs_from_plate"),
        A("e", "watch", "200.00", "pass", "0.00", "priced_off_trading_cards"),
    ]
    s = summarise_audit(lots)
    assert s.lots == 5
    assert s.verdicts_changed == 3                    # a, d, e
    assert (s.actionable_before, s.actionable_after) == (4, 3)  # a b c e / b c d
    # before: a 1000 + b 500 + c 300 + e 200 = 2000.00 (d was a pass: its 10.00 does not count)
    assert s.ceiling_sum_before == Decimal("2000.00")
    # after: b 450 + c 300 + d 80 = 830.00 (a and e are passes now)
    assert s.ceiling_sum_after == Decimal("830.00")
    assert s.ceiling_change_pct == Decimal("-58.50")  # (830 - 2000) / 2000 = -58.5 %
    assert (s.buys_before, s.buys_stayed_buys) == (2, 1)
    assert s.root_causes == {"priced_off_trading_cards": 1, "screen_dimension_as_quantity": 1,
                             "title_model_differs_from_plate": 2}


def test_actionable_after_counts_buy_and_watch():
    s = summarise_audit([A("a", "pass", "0", "buy", "5"), A("b", "pass", "0", "watch", "5"),
                         A("c", "pass", "0", "pass", "5")])
    assert (s.actionable_before, s.actionable_after, s.ceiling_sum_after) == (0, 2, Decimal("10"))
    assert s.ceiling_change_pct is None  # nothing actionable before: no percentage


def test_percent_change_rounds_half_up():
    assert percent_change(Decimal("3"), Decimal("1")) == Decimal("-66.67")
    assert percent_change(Decimal("8"), Decimal("8.0004")) == Decimal("0.01")  # 0.005 -> 0.01
    assert percent_change(Decimal("0"), Decimal("1")) is None


def test_empty_audit():
    s = summarise_audit([])
    assert (s.lots, s.verdicts_changed, s.ceiling_change_pct, s.root_causes) == (0, 0, None, {})


def test_the_audit_rates_are_counted_over_lots():
    """verdicts changed, actionable before/after of all lots, buys that stayed buys of the buys: k of n
    lots, in the counts block (ceiling sums are amounts: not there)."""
    lots = [AuditLot("a", "buy", Decimal(1), "buy", Decimal(1)), AuditLot("b", "buy", Decimal(1), "pass", Decimal(0)),
            AuditLot("c", "pass", Decimal(0), "watch", Decimal(2))]
    s = summarise_audit(lots)
    assert {k: (c.k, c.n, c.unit) for k, c in audit_counts(s).items()} == {
        "verdicts_changed": (2, 3, "lot"), "actionable_before": (2, 3, "lot"), "actionable_after": (2, 3, "lot"),
        "buys_stayed_buys": (1, 2, "lot")}
    assert audit_json(s, {})["counts"]["buys_stayed_buys"] == {"k": 1, "n": 2, "unit": "lot"}
