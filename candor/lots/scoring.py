"""Scoring the normalised answers against the golden set: identification, count, fields.

Pure, no I/O. Higher hit rate, exact-count rate, run consistency and field rates are better;
lower wrong rate is better.

Units (docs/lots.md, "Units"). Runs of one lot are repeated looks at the same lot, not
independent observations, so every rate that gets an interval counts independent units:

* identification: the **lot**. Each scored run has an outcome (hit/abstain/wrong,
  :mod:`candor.lots.identification`) and a *state*: its outcome, or ``hedged`` for a hedged
  abstention. A lot's outcome is the **strict majority** of its scored runs' outcomes (2 of 3;
  with an even number of runs a tie is no majority); a lot with none is ``split``. So
  ``hit + abstain + wrong + split = lots``. ``hedged`` counts the lots whose strict majority of
  runs are hedged (a subset of ``abstain``). A lot is **consistent** when every scored run has
  the same state (a lot with one scored run is consistent). The exact-count rate counts lots
  with a count label whose strict majority of runs count exactly. The stats stage's paired
  units use the same majority (:mod:`candor.stats.units`).
* fields: the **(case, field)** (one expectation, named by its position: a case may repeat a
  path) is *met* when ``hits * 2 > total`` (a strict majority of its answered runs); the
  **case** is met when each of its scored expectations is. An expectation with ``total == 0``
  (every run failed) is not scored; nor is a case without a scored expectation.

Per-run figures stay in the metrics as descriptive counts (``runs: {n, hit, ...}``, a field's
``hits/total``) with no entry in the ``counts`` block, hence no interval. Runs whose provider
call failed are left out (counted in ``errors``); an unparseable answer named nothing and is
an abstention, and its count is not exact. Rates of an empty group are None. Tiers: ``all``,
``held``, ``photo`` (:class:`candor.lots.golden.Lot`).

Every metrics document built here carries a ``counts`` block (:mod:`candor.common.counts`)
naming ``k``, ``n`` and the unit of each rate it holds.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from candor.common.counts import KEY, Count, clusters_of, counts_block
from candor.common.errors import InputError, Problem
from candor.lots.answers import Answer
from candor.lots.fields import CaseScore, FieldScore, overall_score, score_case
from candor.lots.golden import Golden
from candor.lots.identification import OUTCOMES, Outcome, count_exact, identification_outcome
from candor.lots.tokens import TokenRules, label_keys

TIERS = ("all", "held", "photo")
DIGITS = 6
State = Literal["hit", "abstain", "wrong", "hedged"]


def r6(x: float | None) -> float | None:
    """``x`` rounded to the 6 decimals of every stored metric (None stays None)."""
    return None if x is None else round(x, DIGITS)


def _rate(k: int, n: int) -> float | None:
    return r6(k / n) if n else None


def majority(values: Sequence[object]) -> object | None:
    """The value held by a strict majority of ``values`` (more than half), else None.

    >>> majority(["hit", "hit", "wrong"]), majority(["hit", "wrong"]), majority([])
    ('hit', None, None)
    """
    for v in dict.fromkeys(values):
        if 2 * values.count(v) > len(values):
            return v
    return None


def check_labels(golden: Golden, rules: TokenRules) -> None:
    """Every lot must have something to identify it by (pinned tokens or a distinctive token)."""
    bad = [Problem(f"{(golden.root / 'lots.csv').as_posix()}: lot {lot.id}.model",
                   "no distinctive model token under the lots token rules",
                   expected="a model number with a digit, or model_tokens pinned", got=lot.model)
           for lot in golden.lots if not label_keys(lot.model, lot.model_tokens, rules=rules)]
    if bad:
        raise InputError(bad, hint="pin the identifying words in the model_tokens column")


@dataclass(frozen=True)
class RunScore:
    """One scored (lot, run): its outcome, whether it was a hedged abstention, the count check."""

    lot: str
    tier: str
    run: int
    outcome: Outcome
    hedged: bool
    count_exact: bool | None

    @property
    def state(self) -> State:
        return "hedged" if self.hedged else self.outcome

    def row(self, candidate: str) -> dict[str, Any]:
        """The ``identification.csv`` row (docs/CONVENTIONS.md)."""
        return {"lot": self.lot, "tier": self.tier, "candidate": candidate, "run": self.run,
                "outcome": self.outcome, "count_exact": "" if self.count_exact is None else int(self.count_exact)}


def score_runs(golden: Golden, answers: Sequence[Answer], *, rules: TokenRules) -> list[RunScore]:
    """One :class:`RunScore` per scored (lot, run), in answer order (case answers and failed
    provider calls are skipped)."""
    lots = {lot.id: lot for lot in golden.lots}
    out = []
    for a in answers:
        lot = lots.get(a.case)
        if lot is None or a.status == "error":
            continue
        model = a.model if a.status == "ok" else None
        out.append(RunScore(lot=lot.id, tier=lot.tier, run=a.run,
                            outcome=identification_outcome(lot.model, model, pinned=lot.model_tokens, rules=rules),
                            hedged=bool(model) and rules.is_hedged(model),
                            count_exact=count_exact(lot.count, a.count if a.status == "ok" else None)))
    return out


def provider_errors(golden: Golden, answers: Sequence[Answer]) -> dict[str, int]:
    """Failed provider calls per tier (lots only; ``all`` and each tier with a failure)."""
    tiers = {lot.id: lot.tier for lot in golden.lots}
    errors: dict[str, int] = {}
    for a in answers:
        if a.status == "error" and a.case in tiers:
            errors["all"] = errors.get("all", 0) + 1
            errors[tiers[a.case]] = errors.get(tiers[a.case], 0) + 1
    return errors


def _by_lot(runs: Sequence[RunScore]) -> dict[str, list[RunScore]]:
    out: dict[str, list[RunScore]] = {}
    for r in runs:
        out.setdefault(r.lot, []).append(r)
    return out


def summarise(runs: Sequence[RunScore], *,
              errors: Mapping[str, int]) -> tuple[dict[str, Any], dict[str, Count]]:
    """Per tier: lot outcomes (majority), hedged, split and consistent lots and their rates (unit
    lot), per-run counts (descriptive), provider errors; then the exact-count rate per tier (unit
    lot); and the :class:`Count` of each rate, keyed by its path below the candidate."""
    out: dict[str, Any] = {}
    counts: dict[str, Count] = {}
    count: dict[str, Any] = {}
    for tier in TIERS:
        lots = _by_lot([r for r in runs if tier == "all" or r.tier == tier])
        n = len(lots)
        outcome = [majority([r.outcome for r in rs]) for rs in lots.values()]
        k: dict[str, int] = {o: outcome.count(o) for o in OUTCOMES}
        k["hedged"] = sum(majority([r.hedged for r in rs]) is True for rs in lots.values())
        consistent = sum(len({r.state for r in rs}) == 1 for rs in lots.values())
        sel = [r for rs in lots.values() for r in rs]
        out[tier] = {"lots": n, **k, "split": outcome.count(None), "consistent": consistent,
                     **{f"{o}_rate": _rate(k[o], n) for o in k}, "consistent_rate": _rate(consistent, n),
                     "runs": {"n": len(sel), **{o: sum(r.outcome == o for r in sel) for o in OUTCOMES},
                              "hedged": sum(r.hedged for r in sel)},
                     "errors": errors.get(tier, 0)}
        counts.update({f"{tier}.{o}_rate": Count(k=k[o], n=n, unit="lot") for o in k})
        counts[f"{tier}.consistent_rate"] = Count(k=consistent, n=n, unit="lot")
        labelled = {lot: [r.count_exact for r in rs if r.count_exact is not None] for lot, rs in lots.items()}
        labelled = {lot: flags for lot, flags in labelled.items() if flags}
        exact = sum(majority(flags) is True for flags in labelled.values())
        count[tier] = {"lots": len(labelled), "exact": exact, "exact_rate": _rate(exact, len(labelled)),
                       "runs": {"n": sum(map(len, labelled.values())),
                                "exact": sum(sum(flags) for flags in labelled.values())}}
        counts[f"count.{tier}.exact_rate"] = Count(k=exact, n=len(labelled), unit="lot")
    out["count"] = count
    return out, counts


def identification_json(summaries: Mapping[str, tuple[dict[str, Any], dict[str, Count]]]) -> dict[str, Any]:
    """``metrics/identification.json``: the summaries per candidate, then the counts block
    (keys ``identification.<candidate>.<tier>.<outcome>_rate``, ``...consistent_rate`` and
    ``...count.<tier>.exact_rate``, unit lot)."""
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


def field_met(f: FieldScore) -> bool | None:
    """A (case, field) is met when a strict majority of its answered runs hit (None: not scored)."""
    return 2 * f.hits > f.total if f.total else None


def case_met(c: CaseScore) -> bool | None:
    """A case is met when each scored expectation is (None: no scored expectation)."""
    met = [m for m in map(field_met, c.fields) if m is not None]
    return all(met) if met else None


def field_json(f: FieldScore) -> dict[str, Any]:
    """One expectation's score as stored: position, field, expected, hits, total (runs,
    descriptive), score (6 decimals), met (majority of runs)."""
    return {"position": f.position, "field": f.field, "expected": list(f.expected), "hits": f.hits,
            "total": f.total, "score": r6(f.score), "met": field_met(f)}


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
        "candidate": candidate, "overall": r6(overall_score(cases)),
        "fields_met": {"met": sum(fmet), "n": len(fmet), "rate": _rate(sum(fmet), len(fmet))},
        "cases_met": {"met": sum(cmet), "n": len(cmet), "rate": _rate(sum(cmet), len(cmet))},
        "cases": {c.case: {"score": r6(c.score), "met": case_met(c), "runs": c.runs,
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


def format_summary(candidate: str, summary: Mapping[str, Any]) -> str:
    """The console summary of one candidate's identification (per lot; runs in brackets)."""
    lines = [f"{candidate} — identification (lots: majority of runs; provider errors excluded)"]
    for tier in TIERS:
        s = summary[tier]
        if not s["lots"]:
            continue
        lines.append(f"  {tier:<5} lots={s['lots']:<3} hit {s['hit']:>3} ({s['hit_rate']:.3f})  "
                     f"abstain {s['abstain']:>3} ({s['abstain_rate']:.3f})  wrong {s['wrong']:>3} "
                     f"({s['wrong_rate']:.3f})  hedged {s['hedged']:>3}  split {s['split']:>3}  "
                     f"consistent {s['consistent']}/{s['lots']}  [runs {s['runs']['hit']}/{s['runs']['n']} hit]")
    c = summary["count"]["all"]
    if c["lots"]:
        lines.append(f"  count exact {c['exact']}/{c['lots']} lots ({c['exact_rate']:.3f})")
    return "\n".join(lines)
