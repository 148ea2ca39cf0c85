"""Identification scoring: the golden set's lots against a candidate's normalised answers, by lot.

Pure, no I/O. Higher hit rate, exact-count rate and run consistency are better; lower wrong
rate is better. One run's outcome is the rule of :mod:`candor_eval.lots.identification`; this module
scores the *set*: runs grouped by lot, tiers, rates and their counts. Field expectations are
scored by :mod:`candor_eval.lots.field_scoring`, valuations by :mod:`candor_eval.lots.valuation_scoring` (each
module is named after what it scores).

Unit (docs/lots.md, "Units"): the **lot**. Runs of one lot are repeated looks at the same lot,
not independent observations, so every rate that gets an interval counts lots. Each scored run
has an outcome (hit/abstain/wrong) and a *state*: its outcome, or ``hedged`` for a hedged
abstention. A lot's outcome is the **strict majority** of its scored runs' outcomes (2 of 3;
with an even number of runs a tie is no majority); a lot with none is ``split``. So
``hit + abstain + wrong + split = lots``. ``hedged`` counts the lots whose strict majority of
runs are hedged (a subset of ``abstain``). A lot is **consistent** when every scored run has
the same state (a lot with one scored run is consistent). The exact-count rate counts lots
with a count label whose strict majority of runs count exactly. The stats stage's paired
units use the same majority (:mod:`candor_eval.stats.units`).

Per-run figures stay in the metrics as descriptive counts (``runs: {n, hit, ...}``) with no
entry in the ``counts`` block, hence no interval. Runs whose provider call failed are left out
(counted in ``errors``); an unparseable answer named nothing and is an abstention, and its
count is not exact. Rates of an empty group are None (:func:`candor_eval.common.rounding.ratio`).
Tiers: ``all``, ``held``, ``photo`` (:class:`candor_eval.lots.golden.Lot`).

The metrics document carries a ``counts`` block (:mod:`candor_eval.common.counts`) naming ``k``,
``n`` and the unit of each rate it holds.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from candor_eval.common.counts import KEY, Count, counts_block
from candor_eval.common.errors import InputError, Problem
from candor_eval.common.majority import majority_value
from candor_eval.common.rounding import ratio
from candor_eval.lots.answers import Answer
from candor_eval.lots.golden import Golden
from candor_eval.lots.identification import OUTCOMES, Outcome, count_exact, identification_outcome
from candor_eval.lots.tokens import TokenRules, label_keys

TIERS = ("all", "held", "photo")
State = Literal["hit", "abstain", "wrong", "hedged"]


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


def summarise_identification(runs: Sequence[RunScore], *,
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
        outcome = [majority_value([r.outcome for r in rs]) for rs in lots.values()]
        k: dict[str, int] = {o: outcome.count(o) for o in OUTCOMES}
        k["hedged"] = sum(majority_value([r.hedged for r in rs]) is True for rs in lots.values())
        consistent = sum(len({r.state for r in rs}) == 1 for rs in lots.values())
        sel = [r for rs in lots.values() for r in rs]
        out[tier] = {"lots": n, **k, "split": outcome.count(None), "consistent": consistent,
                     **{f"{o}_rate": ratio(k[o], n) for o in k}, "consistent_rate": ratio(consistent, n),
                     "runs": {"n": len(sel), **{o: sum(r.outcome == o for r in sel) for o in OUTCOMES},
                              "hedged": sum(r.hedged for r in sel)},
                     "errors": errors.get(tier, 0)}
        counts.update({f"{tier}.{o}_rate": Count(k=k[o], n=n, unit="lot") for o in k})
        counts[f"{tier}.consistent_rate"] = Count(k=consistent, n=n, unit="lot")
        labelled = {lot: [r.count_exact for r in rs if r.count_exact is not None] for lot, rs in lots.items()}
        labelled = {lot: flags for lot, flags in labelled.items() if flags}
        exact = sum(majority_value(flags) is True for flags in labelled.values())
        count[tier] = {"lots": len(labelled), "exact": exact, "exact_rate": ratio(exact, len(labelled)),
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
