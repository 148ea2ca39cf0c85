"""Scoring the normalised answers against the golden set: identification, count, fields.

Pure, no I/O. Higher hit rate, exact-count rate and field score are better; lower
wrong rate is better.

Scoring units: one (lot, run) is one scored identification (unit ``run``). Runs whose
provider call failed are left out of ``n`` and of the outcome table (counted in
``errors``); an unparseable answer named nothing and is an abstention, and its count is
not exact. Rates of an empty group are None (``n`` is 0). Tiers: ``all``, ``held``,
``photo`` (:class:`candor.lots.golden.Lot`). Identification outcomes and the count check
are :mod:`candor.lots.identification`; field scores are :mod:`candor.lots.fields` (``k`` =
hits of ``n`` = answered runs of the case).

Every metrics document built here carries a ``counts`` block (:mod:`candor.common.counts`)
naming ``k``, ``n`` and the unit of each rate it holds.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from candor.common.counts import KEY, Count, counts_block
from candor.common.errors import InputError, Problem
from candor.lots.answers import Answer
from candor.lots.fields import CaseScore, FieldScore, overall_score, score_case
from candor.lots.golden import Golden
from candor.lots.identification import OUTCOMES, count_exact, identification_outcome, label_tokens
from candor.lots.tokens import TokenRules

TIERS = ("all", "held", "photo")
DIGITS = 6
UNIT = "run"


def r6(x: float | None) -> float | None:
    """``x`` rounded to the 6 decimals of every stored metric (None stays None)."""
    return None if x is None else round(x, DIGITS)


def check_labels(golden: Golden, rules: TokenRules) -> None:
    """Every lot must have something to identify it by (pinned tokens or a distinctive token)."""
    bad = [Problem(f"{(golden.root / 'lots.csv').as_posix()}: lot {lot.id}.model",
                   "no distinctive model token under the lots token rules",
                   expected="a model number with a digit, or model_tokens pinned", got=lot.model)
           for lot in golden.lots if not label_tokens(lot.model, lot.model_tokens, rules=rules)]
    if bad:
        raise InputError(bad, hint="pin the identifying words in the model_tokens column")


def identification_rows(golden: Golden, answers: Sequence[Answer], *, candidate: str,
                        rules: TokenRules) -> list[dict[str, Any]]:
    """One ``identification.csv`` row per scored (lot, run), in answer order (case answers are skipped)."""
    lots = {lot.id: lot for lot in golden.lots}
    rows = []
    for a in answers:
        lot = lots.get(a.case)
        if lot is None or a.status == "error":
            continue
        ok = a.status == "ok"
        outcome = identification_outcome(lot.model, a.model if ok else None, pinned=lot.model_tokens, rules=rules)
        exact = count_exact(lot.count, a.count if ok else None)
        rows.append({"lot": lot.id, "tier": lot.tier, "candidate": candidate, "run": a.run, "outcome": outcome,
                     "count_exact": "" if exact is None else int(exact)})
    return rows


def provider_errors(golden: Golden, answers: Sequence[Answer]) -> dict[str, int]:
    """Failed provider calls per tier (lots only; ``all`` and each tier with a failure)."""
    tiers = {lot.id: lot.tier for lot in golden.lots}
    errors: dict[str, int] = {}
    for a in answers:
        if a.status == "error" and a.case in tiers:
            errors["all"] = errors.get("all", 0) + 1
            errors[tiers[a.case]] = errors.get(tiers[a.case], 0) + 1
    return errors


def summarise(rows: Sequence[Mapping[str, Any]], *,
              errors: Mapping[str, int]) -> tuple[dict[str, Any], dict[str, Count]]:
    """Per tier: counts and rates of hit/abstain/wrong, then the exact-count rate separately;
    and the :class:`Count` of each rate, keyed by its path below the candidate (``all.hit_rate``)."""
    out: dict[str, Any] = {}
    counts: dict[str, Count] = {}
    for tier in TIERS:
        sel = [r for r in rows if tier == "all" or r["tier"] == tier]
        n = len(sel)
        k = {o: sum(r["outcome"] == o for r in sel) for o in OUTCOMES}
        out[tier] = {"n": n, **k, **{f"{o}_rate": r6(k[o] / n) if n else None for o in OUTCOMES},
                     "errors": errors.get(tier, 0)}
        counts.update({f"{tier}.{o}_rate": Count(k=k[o], n=n, unit=UNIT) for o in OUTCOMES})
    count: dict[str, Any] = {}
    for tier in TIERS:
        sel = [r for r in rows if (tier == "all" or r["tier"] == tier) and r["count_exact"] != ""]
        exact = sum(r["count_exact"] == 1 for r in sel)
        count[tier] = {"n": len(sel), "exact": exact, "exact_rate": r6(exact / len(sel)) if sel else None}
        counts[f"count.{tier}.exact_rate"] = Count(k=exact, n=len(sel), unit=UNIT)
    out["count"] = count
    return out, counts


def identification_json(summaries: Mapping[str, tuple[dict[str, Any], dict[str, Count]]]) -> dict[str, Any]:
    """``metrics/identification.json``: the summaries per candidate, then the counts block
    (keys ``identification.<candidate>.<tier>.<outcome>_rate`` and ``...count.<tier>.exact_rate``)."""
    return {"identification": {cand: s for cand, (s, _) in summaries.items()},
            KEY: counts_block({f"identification.{cand}.{key}": c
                               for cand, (_, counts) in summaries.items() for key, c in counts.items()})}


def field_scores(golden: Golden, answers: Sequence[Answer], *, answered_only: bool = False) -> list[CaseScore]:
    """Field scores of every case of the golden set, sorted by case; ``answered_only`` leaves out
    the cases without an answer (a by-hand run of a few cases)."""
    runs: dict[str, list] = {}
    for a in answers:
        runs.setdefault(a.case, []).append(a.run_answer())
    return [score_case(c.name, c.expectation_list(), runs.get(c.name, [])) for c in golden.cases
            if c.name in runs or not answered_only]


def field_json(f: FieldScore) -> dict[str, Any]:
    """One field's score as stored: field, expected, hits, total, score (6 decimals)."""
    return {"field": f.field, "expected": list(f.expected), "hits": f.hits, "total": f.total, "score": r6(f.score)}


def fields_json(candidate: str, cases: Sequence[CaseScore]) -> dict[str, Any]:
    """``metrics/fields/<candidate>.json``: overall and per-case field scores, notes and provider
    errors (no model text), then the counts block (``cases.<case>.fields.<field>.score``, unit run)."""
    return {
        "candidate": candidate, "overall": r6(overall_score(cases)),
        "cases": {c.case: {"score": r6(c.score), "runs": c.runs, "fields": [field_json(f) for f in c.fields],
                           "notes": list(c.notes), "errors": list(c.errors)} for c in cases},
        KEY: counts_block({f"cases.{c.case}.fields.{f.field}.score": Count(k=f.hits, n=f.total, unit=UNIT)
                           for c in cases for f in c.fields}),
    }


def field_rows(candidate: str, cases: Sequence[CaseScore]) -> list[dict[str, Any]]:
    """One ``fields.csv`` row per (case, field) of one candidate."""
    return [{"case": c.case, "candidate": candidate, "field": f.field, "hits": f.hits, "total": f.total}
            for c in cases for f in c.fields]


def format_summary(candidate: str, summary: Mapping[str, Any]) -> str:
    """The console summary of one candidate's identification."""
    lines = [f"{candidate} — identification (scored runs; provider errors excluded)"]
    for tier in TIERS:
        s = summary[tier]
        if not s["n"]:
            continue
        lines.append(f"  {tier:<5} n={s['n']:<3} hit {s['hit']:>3} ({s['hit_rate']:.3f})  "
                     f"abstain {s['abstain']:>3} ({s['abstain_rate']:.3f})")
        lines.append(f"  {'':<5} {'':<5} wrong {s['wrong']:>3} ({s['wrong_rate']:.3f})")
    c = summary["count"]["all"]
    if c["n"]:
        lines.append(f"  count exact {c['exact']}/{c['n']} ({c['exact_rate']:.3f})")
    return "\n".join(lines)
