"""score-lots stage: identification, count and field expectations, kept apart (seeds 000, 001).

    python -m stages.score_lots [--lots data/lots] [--answers build/answers] [--metrics metrics]

Reads the golden set and ``<answers>/<candidate>.jsonl`` for every candidate in
``identify.candidates``; the token rules come from params ``lots``
(:class:`LotsParams`, see :mod:`candor.lots.tokens`). Writes:

* ``<metrics>/identification.json``: per candidate and per tier (``all``,
  ``held``, ``photo``): ``n`` scored runs, ``hit``/``abstain``/``wrong`` counts
  and rates (the wrong rate on its own key), ``errors`` (provider failures,
  not scored); and the exact-count rate under ``count`` per tier, separately;
* ``<metrics>/fields/<candidate>.json``: field scores per case and overall, with
  notes and provider errors; no model text;
* ``<metrics>/outcomes/identification.csv`` (``lot,tier,candidate,run,outcome,
  count_exact``) and ``<metrics>/outcomes/fields.csv`` (``case,candidate,field,
  hits,total``), per docs/CONVENTIONS.md, for paired comparisons;
* a console summary per candidate and a table per case like seed 001's.

Scoring units: one (lot, run) is one scored identification. Runs whose provider
call failed are left out of ``n`` and of the outcome table (counted in
``errors``); an unparseable answer named nothing and is an abstention, and its
count is not exact. Rates of an empty group are None (``n`` is 0).
"""
from __future__ import annotations

import argparse
import csv
import io
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from candor.common.atomic import write_json, write_text
from candor.common.errors import EXIT_OK, InputError, Problem, fail, run_main
from candor.lots.fields import CaseScore, RunAnswer, format_case_table, overall_score, score_case
from candor.lots.golden import Golden, load_golden
from candor.lots.identification import OUTCOMES, count_exact, identification_outcome, label_tokens
from candor.common.params import DEFAULT_PARAMS, CandidatesView, section
from candor.lots.recording import parse_case_runs
from candor.lots.tokens import LotsParams, TokenRules

log = logging.getLogger("candor.score_lots")
TIERS = ("all", "held", "photo")
DIGITS = 6


class Answer(BaseModel):
    """One normalised answer line (the identify stage's output)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str
    run: int = Field(ge=1)
    status: Literal["ok", "unparseable", "error"]
    make: str | None
    model: str | None
    hedged: bool
    count: int | None
    category: str | None
    fields: dict[str, Any] | None
    error: str | None


def load_answers(path: Path) -> list[Answer]:
    """Read and validate an answers file; errors name file, line and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail(path.as_posix(), "answers not found", hint="run the identify stage first: dvc repro identify") \
            from None
    return parse_case_runs(text.splitlines(), Answer, file=path.as_posix())


def _rate(k: int, n: int) -> float | None:
    return round(k / n, DIGITS) if n else None


def identification_rows(golden: Golden, answers: Sequence[Answer], *, candidate: str,
                        rules: TokenRules) -> list[dict[str, Any]]:
    """One outcome row per scored (lot, run): lot, tier, candidate, run, outcome, count_exact."""
    lots = {lot.id: lot for lot in golden.lots}
    rows = []
    for a in answers:
        lot = lots.get(a.case)
        if lot is None or a.status == "error":
            continue
        outcome = identification_outcome(lot.model, a.model if a.status == "ok" else None,
                                         pinned=lot.model_tokens, rules=rules)
        exact = count_exact(lot.count, a.count if a.status == "ok" else None)
        rows.append({"lot": lot.id, "tier": lot.tier, "candidate": candidate, "run": a.run, "outcome": outcome,
                     "count_exact": "" if exact is None else int(exact)})
    return rows


def summarise(rows: Sequence[dict[str, Any]], *, errors: dict[str, int]) -> dict[str, Any]:
    """Per tier: counts and rates of hit/abstain/wrong, then the exact-count rate separately."""
    out: dict[str, Any] = {}
    for tier in TIERS:
        sel = [r for r in rows if tier == "all" or r["tier"] == tier]
        n = len(sel)
        counts = {o: sum(r["outcome"] == o for r in sel) for o in OUTCOMES}
        out[tier] = {"n": n, **counts, "hit_rate": _rate(counts["hit"], n),
                     "abstain_rate": _rate(counts["abstain"], n), "wrong_rate": _rate(counts["wrong"], n),
                     "errors": errors.get(tier, 0)}
    count: dict[str, Any] = {}
    for tier in TIERS:
        sel = [r for r in rows if (tier == "all" or r["tier"] == tier) and r["count_exact"] != ""]
        exact = sum(r["count_exact"] == 1 for r in sel)
        count[tier] = {"n": len(sel), "exact": exact, "exact_rate": _rate(exact, len(sel))}
    out["count"] = count
    return out


def field_scores(golden: Golden, answers: Sequence[Answer]) -> list[CaseScore]:
    """Seed 001 field scores of every case (cases without answers are an error upstream)."""
    by_case: dict[str, list[RunAnswer]] = {}
    for a in answers:
        by_case.setdefault(a.case, []).append(RunAnswer(run=a.run, status=a.status, data=a.fields, error=a.error))
    return [score_case(c.name, c.expectation_list(), by_case.get(c.name, [])) for c in golden.cases]


def fields_report(candidate: str, cases: Sequence[CaseScore]) -> dict[str, Any]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, DIGITS)

    overall = overall_score(cases)
    return {"candidate": candidate, "overall": r(overall), "cases": {
        c.case: {"score": r(c.score), "runs": c.runs,
                 "fields": [{"field": f.field, "expected": list(f.expected), "hits": f.hits, "total": f.total,
                             "score": r(f.score)} for f in c.fields],
                 "notes": list(c.notes), "errors": list(c.errors)} for c in cases}}


def to_csv(header: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([row[h] for h in header])
    return buf.getvalue()


def check_labels(golden: Golden, rules: TokenRules) -> None:
    """Every lot must have something to identify it by (pinned tokens or a distinctive token)."""
    bad = [Problem(f"{(golden.root / 'lots.csv').as_posix()}: lot {lot.id}.model",
                   "no distinctive model token under the lots token rules",
                   expected="a model number with a digit, or model_tokens pinned", got=lot.model)
           for lot in golden.lots if not label_tokens(lot.model, lot.model_tokens, rules=rules)]
    if bad:
        raise InputError(bad, hint="pin the identifying words in the model_tokens column")


def format_summary(candidate: str, summary: dict[str, Any]) -> str:
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stages.score_lots", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lots", default="data/lots", help="golden-set folder (default: data/lots)")
    p.add_argument("--answers", default="build/answers", help="folder of <candidate>.jsonl (default: build/answers)")
    p.add_argument("--metrics", default="metrics", help="metrics folder (default: metrics)")
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: params.yaml)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    rules = section(LotsParams, "lots", path=args.params).rules()
    candidates = section(CandidatesView, "identify", path=args.params).candidates
    golden = load_golden(args.lots)
    check_labels(golden, rules)
    tiers = {lot.id: lot.tier for lot in golden.lots}
    ident: dict[str, Any] = {}
    id_rows: list[dict[str, Any]] = []
    field_rows: list[dict[str, Any]] = []
    reports: dict[str, dict[str, Any]] = {}
    console: list[str] = []
    for cand in candidates:
        answers = load_answers(Path(args.answers) / f"{cand}.jsonl")
        rows = identification_rows(golden, answers, candidate=cand, rules=rules)
        errors: dict[str, int] = {}
        for a in answers:
            if a.status == "error" and a.case in tiers:
                errors["all"] = errors.get("all", 0) + 1
                errors[tiers[a.case]] = errors.get(tiers[a.case], 0) + 1
        ident[cand] = summarise(rows, errors=errors)
        id_rows.extend(rows)
        cases = field_scores(golden, answers)
        reports[cand] = fields_report(cand, cases)
        field_rows.extend({"case": c.case, "candidate": cand, "field": f.field, "hits": f.hits, "total": f.total}
                          for c in cases for f in c.fields)
        console.append(format_summary(cand, ident[cand]))
        console.extend(format_case_table(c) for c in cases)
        console.append(f"{cand} — field overall {reports[cand]['overall']}")
    metrics = Path(args.metrics)
    id_rows.sort(key=lambda r: (r["lot"], r["candidate"], r["run"]))
    field_rows.sort(key=lambda r: (r["case"], r["candidate"], r["field"]))
    write_json(metrics / "identification.json", {"identification": ident})
    fields_dir = metrics / "fields"
    for stale in fields_dir.glob("*.json") if fields_dir.is_dir() else ():
        if stale.stem not in reports:
            stale.unlink()
    for cand, report in reports.items():
        write_json(fields_dir / f"{cand}.json", report)
    write_text(metrics / "outcomes" / "identification.csv",
               to_csv(("lot", "tier", "candidate", "run", "outcome", "count_exact"), id_rows))
    write_text(metrics / "outcomes" / "fields.csv", to_csv(("case", "candidate", "field", "hits", "total"), field_rows))
    print("\n".join(console))
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(run_main(main))
