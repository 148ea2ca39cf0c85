"""score-valuation stage: value ratio, band, comps fit per candidate, and the audit comparison.

    candor score-valuation --values build/values --lots data/lots/lots.csv \\
        --comps data/comps --audit data/audit --metrics metrics/valuation.json \\
        --outcomes metrics/outcomes/valuation.csv --audit-metrics metrics/audit.json

Inputs
    ``--values``   ``<candidate>.csv`` per candidate of ``identify.candidates`` (the value
                   stage's output: one row per valuation lot, the representative run). A missing
                   or bad file exits 2 with the ``candor value`` command that writes it, with
                   this run's flags (its answers where identify writes them by default,
                   ``build/answers/<candidate>.jsonl``).
    ``--lots``     ``lots.csv``: the human-verified value of every valuation lot.
    ``--comps``    ``relevance.csv`` and ``listings.csv`` (:mod:`candor_eval.lots.listings`).
    ``--audit``    ``audit.csv`` and ``root_causes.csv`` (:mod:`candor_eval.lots.audit`).
    params         ``identify.candidates``, ``comps.band``.

Outputs (deterministic: sorted rows, floats rounded to 6 decimals, no timestamps)
    ``metrics/valuation.json``  per candidate: lots, estimated, no_estimate, hedged, in_band,
        in_band_rate, median_ratio, worst_error, worst_lot, and ``comps`` {tp, fp, fn,
        precision, recall} (definitions in :mod:`candor_eval.lots.valuation_scoring`); then the ``counts``
        block: k, n and unit of ``<candidate>.in_band_rate`` (unit lot); comps precision and
        recall are descriptive (their (lot, listing) pairs are not independent).
    ``metrics/outcomes/valuation.csv``  ``lot,candidate,estimate,ratio,in_band,hedged,
        comps_precision,comps_recall`` (docs/CONVENTIONS.md): in_band/hedged 1/0 (no
        estimate: in_band 0, estimate and ratio empty); an undefined precision/recall is empty.
    ``metrics/audit.json``  :class:`candor_eval.lots.audit.AuditSummary`, the guard of every root cause,
                            the ``counts`` of its rates over lots and their Wilson ``intervals`` (the
                            lot as the unit).

Exit codes: 0 ok; 2 bad input or configuration (the file and row or field named; nothing written).
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.atomic import write_json, write_text
from candor_eval.common.errors import EXIT_OK, run_main
from candor_eval.common.params import section
from candor_eval.lots.audit import audit_counts, audit_json, read_audit, summarise_audit
from candor_eval.lots.golden import read_lots
from candor_eval.lots.listings import read_listings, read_relevance
from candor_eval.lots.params import CompsParams
from candor_eval.lots.valuation_scoring import (
    fmt,
    outcome_rows,
    score_values,
    summarise_valuation,
    summary_json,
    valuation_json,
)
from candor_eval.lots.values import read_values
from candor_eval.stages.cli_lots import candidates, command, given, stage_parser
from candor_eval.stats.outcomes import outcome_text
from candor_eval.stats.rates import wilson

log = logging.getLogger("candor.score_valuation")


def build_parser() -> argparse.ArgumentParser:
    ap = stage_parser("candor score-valuation", __doc__)
    ap.add_argument("--values", required=True, help="folder with <candidate>.csv from the value stage")
    ap.add_argument("--lots", required=True, help="the golden set's lots.csv")
    ap.add_argument("--comps", required=True, help="folder with listings.csv and relevance.csv")
    ap.add_argument("--audit", required=True, help="folder with audit.csv and root_causes.csv")
    ap.add_argument("--metrics", required=True, help="output: metrics/valuation.json")
    ap.add_argument("--outcomes", required=True, help="output: metrics/outcomes/valuation.csv")
    ap.add_argument("--audit-metrics", required=True, help="output: metrics/audit.json")
    return ap


def rebuild_command(args: argparse.Namespace, candidate: str) -> str:
    """The command that writes ``candidate``'s values file where this run reads it: value with this run's
    ``--lots`` and ``--comps`` (and ``--params`` when given), on the answers where identify writes them by
    default."""
    return command("value", ("--candidate", candidate), ("--answers", f"build/answers/{candidate}.jsonl"),
                   ("--lots", args.lots), ("--comps", args.comps), *given(build_parser(), args, ("--params",)),
                   ("--out", Path(args.values) / f"{candidate}.csv"))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    band = section(CompsParams, "comps", path=args.params).band
    # read_lots gives every valuation lot a verified value (an InputError otherwise)
    verified = {lot.id: lot.verified_value for lot in read_lots(args.lots)
                if lot.valuation and lot.verified_value is not None}
    listings = read_listings(Path(args.comps) / "listings.csv")
    relevance = read_relevance(Path(args.comps) / "relevance.csv", lots=verified, listings=listings)
    audit_lots, causes = read_audit(args.audit)
    summaries = {}
    rows = []
    console = []
    for cand in candidates(args.params):
        values = read_values(Path(args.values) / f"{cand}.csv", lots=set(verified),
                             rebuild=rebuild_command(args, cand))
        scores = score_values(verified, values, relevance=relevance, band=band)
        s = summarise_valuation(scores)
        summaries[cand] = summary_json(s, scores)
        rows.extend(outcome_rows(cand, scores))
        console.append(f"{cand:<12} in band {s.in_band}/{s.lots}  median ratio {fmt(s.median_ratio)[:5]:>5}  "
                       f"worst {fmt(s.worst_error)[:5]:>5}x ({s.worst_lot})  no estimate {s.no_estimate}  "
                       f"comps P {fmt(s.comps_precision)[:4]} R {fmt(s.comps_recall)[:4]}")
    rows.sort(key=lambda r: (r[0], r[1]))
    summary = summarise_audit(audit_lots)
    audit = audit_json(summary, causes)
    intervals = {name: wilson(c.k, c.n, unit=c.unit) for name, c in audit_counts(summary).items()}
    audit["intervals"] = {name: r.as_json() for name, r in intervals.items()}
    write_json(args.metrics, valuation_json(summaries))
    write_text(args.outcomes, outcome_text("valuation.csv", rows))
    write_json(args.audit_metrics, audit)
    print("\n".join(console))
    def ci(name: str) -> str:
        r = intervals[name]
        return "" if r.rate is None else f" ({r.rate:.3f} [{r.lo:.3f}, {r.hi:.3f}] of lots)"
    print(f"audit: {audit['verdicts_changed']}/{audit['lots']} verdicts changed{ci('verdicts_changed')}, actionable "
          f"{audit['actionable_before']} -> {audit['actionable_after']}, ceilings {audit['ceiling_change_pct']}%, "
          f"buys that stayed buys {audit['buys_stayed_buys']}/{audit['buys_before']}{ci('buys_stayed_buys')}")
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(run_main(main))
