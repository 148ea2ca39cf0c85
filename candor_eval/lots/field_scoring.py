"""Field scoring: the golden set's field-expectation cases against a candidate's answers.

Pure, no I/O. Higher field and case rates are better. One case over its runs is scored by the
rule of :mod:`candor_eval.lots.fields` (paths, normalisation, a hit); this module scores the *set*
and writes its records. It is a module of its own, not part of :mod:`candor_eval.lots.fields`,
because it reads the golden set (:mod:`candor_eval.lots.golden`), which itself imports the field
rules to validate its cases. Identification is scored by :mod:`candor_eval.lots.identification_scoring`.

Units (docs/lots.md, "Units"): the **(case, field)** (one expectation, named by its position: a
case may repeat a path) is *met* when ``hits * 2 > total`` (a strict majority of its answered
runs); the **case** is met when each of its scored expectations is. An expectation with
``total == 0`` (every run failed) is not scored; nor is a case without a scored expectation.
A field's ``hits/total`` stays in the metrics as a descriptive per-run count with no entry in
the ``counts`` block (:mod:`candor_eval.common.counts`), hence no interval; rates of an empty group
are None; scores are stored with 6 decimals (:mod:`candor_eval.common.rounding`).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from candor_eval.common.counts import KEY, Count, clusters_of, counts_block
from candor_eval.common.majority import strict_majority
from candor_eval.common.rounding import ratio, rounded
from candor_eval.lots.answers import Answer
from candor_eval.lots.fields import CaseScore, FieldScore, overall_score, score_case
from candor_eval.lots.golden import Golden


def field_scores(golden: Golden, answers: Sequence[Answer], *, answered_only: bool = False) -> list[CaseScore]:
    """Field scores of every case of the golden set, sorted by case; ``answered_only`` leaves out
    the cases without an answer (a by-hand run of a few cases)."""
    runs: dict[str, list] = {}
    for a in answers:
        runs.setdefault(a.case, []).append(a.run_answer())
    return [score_case(c.name, c.expectation_list(), runs.get(c.name, [])) for c in golden.cases
            if c.name in runs or not answered_only]


def field_met(f: FieldScore) -> bool | None:
    """A (case, field) is met when a strict majority of its answered runs hit (None: not scored)."""
    return strict_majority(f.hits, f.total) if f.total else None


def case_met(c: CaseScore) -> bool | None:
    """A case is met when each scored expectation is (None: no scored expectation)."""
    met = [m for m in map(field_met, c.fields) if m is not None]
    return all(met) if met else None


def field_json(f: FieldScore) -> dict[str, Any]:
    """One expectation's score as stored: position, field, expected, hits, total (runs,
    descriptive), score (6 decimals), met (majority of runs)."""
    return {"position": f.position, "field": f.field, "expected": list(f.expected), "hits": f.hits,
            "total": f.total, "score": rounded(f.score), "met": field_met(f)}


def fields_json(candidate: str, cases: Sequence[CaseScore]) -> dict[str, Any]:
    """``metrics/fields/<candidate>.json``: the mean of the case scores (``overall``, descriptive),
    the share of (case, field) met and of cases met, per-case field scores, notes and provider
    errors (no model text), then the counts block (``fields_met.rate``, unit ``(case, field)``
    clustered by case: the fields of one case are answered from one image in the same runs;
    ``cases_met.rate``, unit ``case``)."""
    per_case = [[m for m in map(field_met, c.fields) if m is not None] for c in cases]
    fmet = [m for met in per_case for m in met]
    cmet = [m for m in map(case_met, cases) if m is not None]
    return {
        "candidate": candidate, "overall": rounded(overall_score(cases)),
        "fields_met": {"met": sum(fmet), "n": len(fmet), "rate": ratio(sum(fmet), len(fmet))},
        "cases_met": {"met": sum(cmet), "n": len(cmet), "rate": ratio(sum(cmet), len(cmet))},
        "cases": {c.case: {"score": rounded(c.score), "met": case_met(c), "runs": c.runs,
                           "fields": [field_json(f) for f in c.fields],
                           "notes": list(c.notes), "errors": list(c.errors)} for c in cases},
        KEY: counts_block({"fields_met.rate": Count(k=sum(fmet), n=len(fmet), unit="(case, field)",
                                                    clusters=clusters_of(((sum(m), len(m)) for m in per_case),
                                                                         name="case")),
                           "cases_met.rate": Count(k=sum(cmet), n=len(cmet), unit="case")}),
    }


def field_rows(candidate: str, cases: Sequence[CaseScore]) -> list[dict[str, Any]]:
    """One ``fields.csv`` row per expectation (case, position) of one candidate."""
    return [{"case": c.case, "candidate": candidate, "position": f.position, "field": f.field, "hits": f.hits,
             "total": f.total} for c in cases for f in c.fields]
