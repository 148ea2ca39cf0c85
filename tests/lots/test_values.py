"""Lot values per candidate (:mod:`candor_eval.lots.values`): every run valued, the representative run (median by lot
value) standing for the lot, its ceiling and verdict; the values file written and read back exactly, every
valuation lot once. Figures are computed by hand in each test."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.answers import Answer
from candor_eval.lots.ceiling import CeilingRules
from candor_eval.lots.comps import Listing
from candor_eval.lots.golden import Lot
from candor_eval.lots.params import CompsParams
from candor_eval.lots.values import VALUE_COLUMNS, ValueRow, read_values, value_lots, values_text
from candor_eval.lots.vocabulary import read_key_words
from tests.conftest import VOCABULARY, committed_token_rules

RULES = CompsParams().rules(tokens=committed_token_rules(), accessory_words=("power supply",),
                            words=read_key_words(VOCABULARY / "comps-words.yaml"))
CEILING = CeilingRules()      # fees 13 %, margin 25 %, shipping 25.00, premium 15 %, headroom 20 %
LISTINGS = [Listing(f"X{i}", "Dell OptiPlex 7090 SFF", Decimal(p)) for i, p in enumerate(("100", "120", "140"))]
LISTINGS += [Listing("P", "Dell OptiPlex 7090 power supply", Decimal("20"))]
V1 = Lot(id="V1", make="Dell", model="OptiPlex 7090", category="c", tier="held", valuation=True,
         verified_value=Decimal("250.00"), current_price=Decimal("50.00"))
KW = dict(rules=RULES, ceiling=CEILING, units="lot_item")
V0 = Lot(id="V0", make="Dell", model="OptiPlex 7090", category="c", tier="held", valuation=False)


def answer(run: int, count: int | None, *, model: str | None = "OptiPlex 7090", status: str = "ok") -> Answer:
    return Answer(case="V1", run=run, status=status, make="Dell", model=model, count=count, category=None,
                  fields=None, error="boom" if status == "error" else None)


def test_the_median_run_stands_for_the_lot_with_its_ceiling_and_verdict():
    """Unit value: median of 100, 120, 140 (the power supply is out) = 120.00. Runs: count 2 -> 240.00, count 4
    -> 480.00, failed -> none. Of two estimates the lower, run 1: ceiling (240 x 0.62 - 25) / 1.15 = 107.652...
    -> 107.65; 50.00 <= 107.65 x 0.8 = 86.12 and not hedged -> buy."""
    [v] = value_lots([V1, V0], [answer(2, 4), answer(1, 2), answer(3, None, model=None, status="error")], LISTINGS,
                     **KW)
    assert (v.lot, v.run, v.runs_estimated) == ("V1", 1, 2)
    assert (v.estimate.unit_value, v.estimate.lot_value, v.estimate.comps) == (Decimal("120.00"), Decimal("240.00"),
                                                                               ("X0", "X1", "X2"))
    assert (v.ceiling, v.verdict) == (Decimal("107.65"), "buy")


def test_a_hedged_answer_is_watched_and_no_estimate_passes():
    [hedged] = value_lots([V1], [answer(1, 2, model="e.g. OptiPlex 7090")], LISTINGS, **KW)
    assert hedged.estimate.hedged and hedged.verdict == "watch"
    [none] = value_lots([V1], [answer(1, 2, model=None)], LISTINGS, **KW)
    assert (none.estimate.lot_value, none.ceiling, none.verdict, none.estimate.reason) == (None, None, "pass",
                                                                                           "no_model")


def test_a_valuation_lot_without_an_answer_names_the_answers_file():
    with pytest.raises(InputError, match="a.jsonl: no answer for valuation lot") as err:
        value_lots([V1], [], LISTINGS, **KW, answers_file="a.jsonl")
    assert err.value.hint == "the answers must come from the same golden set; rebuild them with the identify stage"
    with pytest.raises(InputError) as err:
        value_lots([V1], [], LISTINGS, **KW, answers_file="a.jsonl", rebuild="cmd")
    assert err.value.hint == "the answers must come from the same golden set; rebuild them: `cmd`"


def test_the_values_file_round_trips(tmp_path: Path):
    values = value_lots([V1], [answer(1, 2), answer(2, 4)], LISTINGS, **KW)
    text = values_text(values)
    assert text.splitlines() == [",".join(VALUE_COLUMNS),
                                 "V1,1,2,Dell,OptiPlex 7090,0,2,120.00,240.00,107.65,50.00,buy,ok,X0;X1;X2"]
    f = tmp_path / "c.csv"
    f.write_text(text)
    assert read_values(f, lots={"V1"}) == {"V1": ValueRow(lot="V1", estimate=Decimal("240.00"), hedged=False,
                                                          comps=frozenset({"X0", "X1", "X2"}))}


def test_a_bad_values_file_lists_every_problem(tmp_path: Path):
    head = ",".join(VALUE_COLUMNS)
    rows = ["V1,1,0,,,2,,,,,50.00,pass,no_model,", "V1,1,0,,,0,,,,,50.00,pass,no_model,",
            "V9,1,0,,,0,,,,,50.00,pass,no_model,", "V2,1,1,,,0,,,-3,,50.00,pass,ok,"]
    f = tmp_path / "c.csv"
    f.write_text("\n".join([head, *rows]) + "\n")
    with pytest.raises(InputError) as err:
        read_values(f, lots={"V1", "V2", "V3"})
    assert [(p.where.rpartition(":")[2], p.what) for p in err.value.problems] == [
        ("row 2.hedged", "not a flag"), ("row 3.lot", "duplicate lot (first on row 2)"),
        ("row 4.lot", "not a valuation lot of lots.csv"),
        ("row 5.value", "not an amount"), (str(f).rpartition(":")[2], "no row for valuation lot(s) V3")]
    assert err.value.hint == "rebuild it with the value stage"
    with pytest.raises(InputError) as err:
        read_values(f, lots={"V1", "V2", "V3"}, rebuild="candor value --candidate c")
    assert err.value.hint == "rebuild it: `candor value --candidate c`"


def test_a_missing_values_file_gives_the_command_that_writes_it(tmp_path: Path):
    with pytest.raises(InputError) as err:
        read_values(tmp_path / "none.csv", lots={"V1"}, rebuild="candor value --candidate c")
    assert "none.csv: file not found" in str(err.value) and err.value.hint == "rebuild it: `candor value --candidate c`"


def test_accessories_in_a_container_are_not_units_unless_all_items_is_asked():
    """Container: 2 x OptiPlex 7090 and 3 x "OptiPlex 7090 power supply" (an accessory word of RULES). Unit value
    120.00 (test above); lot_item: 2 units -> 240.00; all_items: 5 units -> 600.00."""
    fields = {"type": "container", "container": {"containerItems": [
        {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090", "quantity": 2},
        {"itemName": "OptiPlex 7090 power supply", "itemModel": "OptiPlex 7090", "quantity": 3}]}}
    a = answer(1, 5).model_copy(update={"fields": fields})
    [lot_item] = value_lots([V1], [a], LISTINGS, **KW)
    [all_items] = value_lots([V1], [a], LISTINGS, rules=RULES, ceiling=CEILING, units="all_items")
    assert (lot_item.estimate.count, lot_item.estimate.lot_value) == (2, Decimal("240.00"))
    assert (all_items.estimate.count, all_items.estimate.lot_value) == (5, Decimal("600.00"))
