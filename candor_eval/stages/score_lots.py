"""score-lots stage: identification, count and field expectations, kept apart (docs/lots.md).

    candor score-lots [--lots data/lots] [--tokens TOKENS.yaml] [--answers build/answers] [--metrics metrics]

Reads the golden set and ``<answers>/<candidate>.jsonl`` for every candidate in
``identify.candidates`` (a missing or bad one: exit 2 with the ``candor identify`` command that
writes it, with this run's flags); the token rules come from ``--tokens`` (the word lists,
:mod:`candor_eval.lots.vocabulary`; default ``<lots>/vocabulary/tokens.yaml`` when that file exists,
else candor's packaged default list) and params ``lots`` (:class:`candor_eval.lots.params.LotsParams`, see
:mod:`candor_eval.lots.tokens`). Writes:

* ``<metrics>/identification.json``: per candidate and per tier (``all``,
  ``held``, ``photo``): ``lots`` scored, lot outcomes by majority of runs
  (``hit``/``abstain``/``wrong``/``split``, ``hedged``), ``consistent`` lots and
  their rates (unit lot), per-run counts under ``runs`` (descriptive), ``errors``
  (provider failures, not scored); the exact-count rate under ``count`` per tier
  (unit lot); ``environment`` (only when the answers recorded one: params ``identify.record_env``,
  each variable's distinct values); then the ``counts`` block (k, n and unit of every rate);
* ``<metrics>/fields/<candidate>.json``: field scores per case, the share of
  (case, field) and of cases met, notes and provider errors, and the ``counts``
  block; no model text;
* ``<metrics>/outcomes/identification.csv`` (``lot,tier,candidate,run,outcome,
  count_exact``) and ``<metrics>/outcomes/fields.csv`` (``case,candidate,position,
  field,hits,total``), per docs/CONVENTIONS.md, for paired comparisons;
* a console summary per candidate and a table per case.

Scoring units and the degenerate cases: :mod:`candor_eval.lots.identification_scoring` and
:mod:`candor_eval.lots.field_scoring`.

Exit codes: 0 ok (failed runs recorded in the answers are scored, not errors of this stage); 2 bad input
or configuration (the file and row or field named; nothing written).
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from candor_eval.common.atomic import remove_others, write_json, write_text
from candor_eval.common.errors import EXIT_OK, run_main
from candor_eval.lots.answers import environment_of, read_answers
from candor_eval.lots.field_scoring import field_rows, field_scores, fields_json
from candor_eval.lots.fields import format_case_table
from candor_eval.lots.golden import load_golden
from candor_eval.lots.identification_scoring import (
    check_labels,
    format_summary,
    identification_json,
    provider_errors,
    score_runs,
    summarise_identification,
)
from candor_eval.stages.cli_lots import add_tokens, candidates, command, given, stage_parser, token_rules, vocabulary
from candor_eval.stats.outcomes import outcome_text

log = logging.getLogger("candor.score_lots")


def build_parser() -> argparse.ArgumentParser:
    p = stage_parser("candor score-lots", __doc__)
    p.add_argument("--lots", default="data/lots", help="golden-set folder (default: data/lots)")
    add_tokens(p)
    p.add_argument("--answers", default="build/answers", help="folder of <candidate>.jsonl (default: build/answers)")
    p.add_argument("--metrics", default="metrics", help="metrics folder (default: metrics)")
    return p


def rebuild_command(args: argparse.Namespace, candidate: str) -> str:
    """The command that writes ``candidate``'s answers where this run reads them, with the flags of this run
    that identify shares (``--params``, ``--lots``, ``--tokens``) that were given."""
    return command("identify", ("--candidate", candidate),
                   *given(build_parser(), args, ("--params", "--lots", "--tokens")),
                   ("--answers", Path(args.answers) / f"{candidate}.jsonl"))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    rules = token_rules(vocabulary(args.tokens, "tokens.yaml", lots=args.lots), params=args.params)
    golden = load_golden(args.lots)
    check_labels(golden, rules)
    summaries = {}
    id_rows: list[dict[str, Any]] = []
    f_rows: list[dict[str, Any]] = []
    reports: dict[str, dict[str, Any]] = {}
    console: list[str] = []
    for cand in candidates(args.params):
        answers = read_answers(Path(args.answers) / f"{cand}.jsonl", rebuild=rebuild_command(args, cand))
        runs = score_runs(golden, answers, rules=rules)
        summaries[cand] = summarise_identification(runs, errors=provider_errors(golden, answers))
        if environment := environment_of(answers):           # the recorded mode switches (identify.record_env)
            summaries[cand][0]["environment"] = environment
        id_rows.extend(r.row(cand) for r in runs)
        cases = field_scores(golden, answers)
        reports[cand] = fields_json(cand, cases)
        f_rows.extend(field_rows(cand, cases))
        console.append(format_summary(cand, summaries[cand][0]))
        console.extend(format_case_table(c, failure="recorded failure (read from the answers; this stage calls "
                                                      "nothing)") for c in cases)
        console.append(f"{cand} — field overall {reports[cand]['overall']}")
    metrics = Path(args.metrics)
    id_rows.sort(key=lambda r: (r["lot"], r["candidate"], r["run"]))
    f_rows.sort(key=lambda r: (r["case"], r["candidate"], r["position"]))
    write_json(metrics / "identification.json", identification_json(summaries))
    fields_dir = metrics / "fields"
    for cand, report in reports.items():
        write_json(fields_dir / f"{cand}.json", report)
    remove_others(fields_dir, keep=[f"{cand}.json" for cand in reports])    # a candidate since removed
    write_text(metrics / "outcomes" / "identification.csv", outcome_text("identification.csv", id_rows))
    write_text(metrics / "outcomes" / "fields.csv", outcome_text("fields.csv", f_rows))
    print("\n".join(console))
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(run_main(main))
