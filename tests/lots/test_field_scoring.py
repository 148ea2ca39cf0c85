"""Field scoring of a set (:mod:`candor_eval.lots.field_scoring`): a (case, field) is met when a strict
majority of its answered runs hit (``2 * hits > total``), a case when each scored field is; a
field with no answered run is not scored; the stored records. Figures are counted by hand."""
from __future__ import annotations

from pathlib import Path

from candor_eval.lots.answers import Answer
from candor_eval.lots.field_scoring import case_met, field_json, field_met, field_rows, field_scores, fields_json
from candor_eval.lots.fields import CaseScore, FieldScore
from candor_eval.lots.golden import Case, ExpectationSpec, Golden


def fs(hits: int, total: int, position: int = 0) -> FieldScore:
    return FieldScore(position=position, field="item.itemType", expected=("Drill",), hits=hits, total=total,
                      unresolved=0)


def cs(name: str, *fields: FieldScore) -> CaseScore:
    return CaseScore(case=name, fields=fields, notes=(), errors=(), runs=3)


def test_a_field_is_met_by_a_strict_majority_of_answered_runs():
    assert [field_met(fs(2, 3)), field_met(fs(1, 2)), field_met(fs(0, 1)), field_met(fs(0, 0))] == [True, False,
                                                                                                    False, None]


def test_a_case_is_met_when_each_scored_field_is():
    assert case_met(cs("a", fs(2, 3), fs(3, 3, 1))) is True
    assert case_met(cs("b", fs(2, 3), fs(1, 3, 1))) is False
    assert case_met(cs("c", fs(2, 3), fs(0, 0, 1))) is True     # the unscored field is left out
    assert case_met(cs("d", fs(0, 0))) is None


def test_field_json_stores_six_decimals_and_the_majority():
    assert field_json(fs(1, 3)) == {"position": 0, "field": "item.itemType", "expected": ["Drill"], "hits": 1,
                                    "total": 3, "score": 0.333333, "met": False}


def test_fields_json_by_hand():
    cases = [cs("a", fs(2, 3), fs(3, 3, 1)), cs("b", fs(0, 3)), cs("c", fs(0, 0))]
    doc = fields_json("p", cases)
    # fields met: a0, a1 of (a0, a1, b0) -> 2/3; cases met: a of (a, b) -> 1/2; overall = mean(5/6, 0) = 5/12
    assert doc["fields_met"] == {"met": 2, "n": 3, "rate": 0.666667}
    assert doc["cases_met"] == {"met": 1, "n": 2, "rate": 0.5}
    assert doc["overall"] == 0.416667
    assert doc["cases"]["c"]["met"] is None and doc["cases"]["c"]["score"] is None
    block = doc["counts"]
    assert block["fields_met.rate"]["unit"] == "(case, field)" and block["cases_met.rate"]["n"] == 2


def test_an_empty_set_has_rates_none():
    doc = fields_json("p", [])
    assert doc["fields_met"]["rate"] is None and doc["cases_met"]["rate"] is None and doc["overall"] is None


def test_field_rows_one_per_expectation():
    assert field_rows("p", [cs("a", fs(2, 3), fs(1, 3, 1))]) == [
        {"case": "a", "candidate": "p", "position": 0, "field": "item.itemType", "hits": 2, "total": 3},
        {"case": "a", "candidate": "p", "position": 1, "field": "item.itemType", "hits": 1, "total": 3}]


def test_field_scores_of_every_case_or_only_the_answered_ones():
    spec = ExpectationSpec(field="item.itemType", expected=("Cordless Drill",))
    golden = Golden(root=Path("g"), lots=(), cases=(Case(name="drill", image="x.png", expectations=(spec,)),
                                                    Case(name="saw", image="y.png", expectations=(spec,))))
    ans = Answer(case="drill", run=1, status="ok", make=None, model=None, count=None, category=None,
                 fields={"type": "item", "item": {"itemType": "cordless drill"}}, error=None)
    every = field_scores(golden, [ans])
    assert [(c.case, c.fields[0].hits, c.fields[0].total) for c in every] == [("drill", 1, 1), ("saw", 0, 0)]
    assert [c.case for c in field_scores(golden, [ans], answered_only=True)] == ["drill"]
