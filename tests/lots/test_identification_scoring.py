"""Identification scoring of a set (:mod:`candor_eval.lots.identification_scoring`): the lot as unit,
a strict majority of its scored runs as its outcome, hedged and consistent lots, provider errors
left out, rates of an empty group None. Every expected figure is counted by hand in the test."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.answers import Answer
from candor_eval.lots.golden import Golden, Lot
from candor_eval.lots.identification_scoring import (
    RunScore,
    check_labels,
    identification_json,
    provider_errors,
    score_runs,
    summarise_identification,
)
from candor_eval.lots.tokens import TokenRules

RULES = TokenRules(spec_words=("gb",), form_factors=("sff",), generation_prefixes=(), min_number_digits=3,
                   hedge_markers=("e.g.", " or "))


def lot(id: str, model: str, *, tier: str = "held", count: int | None = None) -> Lot:
    return Lot(id=id, make="Dell", model=model, count=count, category="Computers", tier=tier, valuation=False)


def answer(case: str, run: int, model: str | None, *, status: str = "ok", count: int | None = None) -> Answer:
    return Answer(case=case, run=run, status=status, make=None, model=model, count=count, category=None,
                  fields=None, error="HTTP 500" if status == "error" else None)


def run(lot_id: str, n: int, outcome: str, *, tier: str = "held", hedged: bool = False,
        exact: bool | None = None) -> RunScore:
    return RunScore(lot=lot_id, tier=tier, run=n, outcome=outcome, hedged=hedged, count_exact=exact)


GOLDEN = Golden(root=Path("g"), lots=(lot("L1", "OptiPlex 7090", count=2), lot("L2", "OptiPlex 3080", tier="photo")),
                cases=())


def test_score_runs_skips_cases_and_failed_calls_and_marks_hedges():
    answers = [answer("L1", 1, "Dell OptiPlex 7090 SFF", count=2), answer("L1", 2, "e.g. 7090", count=3),
               answer("L1", 3, None, status="error"), answer("drill", 1, "x"), answer("L2", 1, "OptiPlex 7090"),
               answer("L2", 2, None, status="unparseable")]
    got = [(r.lot, r.run, r.outcome, r.hedged, r.count_exact) for r in score_runs(GOLDEN, answers, rules=RULES)]
    assert got == [("L1", 1, "hit", False, True), ("L1", 2, "abstain", True, False),
                   ("L2", 1, "wrong", False, None), ("L2", 2, "abstain", False, None)]


def test_provider_errors_count_lots_only_per_tier():
    answers = [answer("L1", 1, None, status="error"), answer("L2", 1, None, status="error"),
               answer("L2", 2, None, status="error"), answer("drill", 1, None, status="error")]
    assert provider_errors(GOLDEN, answers) == {"all": 3, "held": 1, "photo": 2}


def test_lot_outcomes_hedged_split_and_consistent_by_hand():
    runs = [run("A", 1, "hit"), run("A", 2, "hit"), run("A", 3, "wrong"),           # hit, not consistent
            run("B", 1, "abstain", hedged=True), run("B", 2, "abstain", hedged=True),  # abstain, hedged, consistent
            run("C", 1, "hit", tier="photo"), run("C", 2, "wrong", tier="photo"),      # split
            run("D", 1, "wrong", tier="photo", exact=True)]                            # wrong, consistent
    summary, counts = summarise_identification(runs, errors={"all": 1, "photo": 1})
    s = summary["all"]
    assert (s["lots"], s["hit"], s["abstain"], s["wrong"], s["split"], s["hedged"], s["consistent"]) == (4, 1, 1, 1, 1,
                                                                                                        1, 2)
    assert s["hit"] + s["abstain"] + s["wrong"] + s["split"] == s["lots"]
    assert (s["hit_rate"], s["consistent_rate"]) == (0.25, 0.5)
    assert s["runs"] == {"n": 8, "hit": 3, "abstain": 2, "wrong": 3, "hedged": 2}
    assert (s["errors"], summary["held"]["errors"]) == (1, 0)
    assert summary["photo"]["lots"] == 2 and summary["photo"]["split"] == 1
    assert summary["count"]["all"] == {"lots": 1, "exact": 1, "exact_rate": 1.0, "runs": {"n": 1, "exact": 1}}
    assert counts["all.hit_rate"].k == 1 and counts["all.hit_rate"].n == 4 and counts["all.hit_rate"].unit == "lot"
    assert counts["count.held.exact_rate"].n == 0


def test_an_empty_group_has_rates_none():
    summary, _ = summarise_identification([], errors={})
    assert summary["held"]["lots"] == 0 and summary["held"]["hit_rate"] is None
    assert summary["count"]["photo"]["exact_rate"] is None


def test_rates_are_rounded_to_six_decimals():
    summary, _ = summarise_identification([run("A", 1, "hit"), run("B", 1, "wrong"), run("C", 1, "wrong")], errors={})
    assert summary["all"]["hit_rate"] == 0.333333 and summary["all"]["wrong_rate"] == 0.666667


def test_identification_json_keys_the_counts_by_candidate():
    doc = identification_json({"p": summarise_identification([run("A", 1, "hit")], errors={})})
    assert doc["identification"]["p"]["all"]["hit"] == 1
    assert "identification.p.all.hit_rate" in doc["counts"]


def test_a_label_without_a_distinctive_token_is_refused_naming_the_row():
    golden = Golden(root=Path("g"), lots=(lot("L9", "Desktop Computer"),), cases=())
    with pytest.raises(InputError) as err:
        check_labels(golden, RULES)
    assert "g/lots.csv: lot L9.model" in str(err.value)
    check_labels(GOLDEN, RULES)   # every lot of GOLDEN has a model number
