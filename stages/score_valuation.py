"""score-valuation stage: value ratio, band, comps fit per candidate, and the audit comparison.

    python -m stages.score_valuation --values build/values --lots data/lots/lots.csv \\
        --comps data/comps --audit data/audit --metrics metrics/valuation.json \\
        --outcomes metrics/outcomes/valuation.csv --audit-metrics metrics/audit.json

Inputs
    ``--values``   ``<candidate>.csv`` per candidate of ``identify.candidates`` (the value
                   stage's output: one row per valuation lot, the representative run).
    ``--lots``     ``lots.csv``: the human-verified value of every valuation lot.
    ``--comps``    ``relevance.csv`` (``lot,listing``: the listings a careful human accepts
                   as comps for the lot) and ``listings.csv`` (every relevant id must exist).
    ``--audit``    ``audit.csv`` (``lot, description, pipeline_verdict, pipeline_ceiling,
                   audited_verdict, audited_ceiling, root_cause``) and ``root_causes.csv``
                   (``root_cause, description, guard``: the golden-set lot(s) or test(s) that
                   keep the cause from returning; every cause used must be listed).
    params         ``identify.candidates``, ``comps.band``.

Outputs (deterministic: sorted rows, floats rounded to 6 decimals, no timestamps)
    ``metrics/valuation.json``  per candidate: lots, estimated, no_estimate, hedged, in_band,
        in_band_rate, median_ratio, worst_error, worst_lot, and ``comps`` {tp, fp, fn,
        precision, recall} (definitions in :mod:`candor.lots.valuation`).
    ``metrics/outcomes/valuation.csv``  ``lot,candidate,estimate,ratio,in_band,hedged,
        comps_precision,comps_recall`` (docs/CONVENTIONS.md): in_band/hedged 1/0 (no
        estimate: in_band 0, estimate and ratio empty); an undefined precision/recall is empty.
    ``metrics/audit.json``  :class:`candor.lots.audit.AuditSummary` and the guard of every root cause.
"""
from __future__ import annotations

import argparse
import csv
import io
import logging
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from candor.common.atomic import write_json, write_text
from candor.lots.audit import AuditLot, AuditSummary, summarize_audit
from candor.lots.ceiling import VERDICTS
from candor.common.errors import InputError, Problem, fail, run_main
from candor.common.params import DEFAULT_PARAMS, CandidatesView, section
from candor.lots.valuation import LotScore, Summary, score_lot, summarize
from stages.value import AMOUNT, OUTPUT_COLUMNS, CompsParams, load_lots, read_text

log = logging.getLogger("candor.score_valuation")

DIGITS = 6
OUTCOME_COLUMNS = ("lot", "candidate", "estimate", "ratio", "in_band", "hedged", "comps_precision", "comps_recall")
AUDIT_COLUMNS = ("lot", "description", "pipeline_verdict", "pipeline_ceiling", "audited_verdict", "audited_ceiling",
                 "root_cause")
CAUSE_COLUMNS = ("root_cause", "description", "guard")


def read_csv(path: Path, columns: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """(row number, row) of a CSV whose header must be exactly ``columns`` (header is row 1)."""
    reader = csv.DictReader(io.StringIO(read_text(path)))
    got = tuple(reader.fieldnames or ())
    if got != tuple(columns):
        raise fail(f"{path}:row 1", "wrong header", expected=",".join(columns), got=",".join(got) or "an empty file")
    rows = []
    for rowno, row in enumerate(reader, start=2):
        if None in row or any(v is None for v in row.values()):
            raise fail(f"{path}:row {rowno}", "wrong number of fields", expected=f"{len(columns)} fields")
        rows.append((rowno, row))
    return rows


def money(text: str, where: str, problems: list[Problem], *, allow_zero: bool = False) -> Decimal | None:
    s = text.strip()
    if not AMOUNT.match(s) or (Decimal(s) == 0 and not allow_zero):
        problems.append(Problem(where, "not an amount", expected="a non-negative USD amount such as 185.00"
                                if allow_zero else "a positive USD amount such as 185.00", got=repr(text)))
        return None
    return Decimal(s)


def read_relevance(comps: Path, *, lots: set[str]) -> dict[str, set[str]]:
    """lot -> relevant listing ids; unknown lots or listing ids are errors."""
    listing_ids = {r["id"].strip() for _, r in read_csv(comps / "listings.csv",
                                                         ("id", "title", "price", "sold_date", "quantity", "category"))}
    out: dict[str, set[str]] = {lot: set() for lot in lots}
    problems = []
    path = comps / "relevance.csv"
    for rowno, row in read_csv(path, ("lot", "listing")):
        lot, lid = row["lot"].strip(), row["listing"].strip()
        if lot not in lots:
            problems.append(Problem(f"{path}:row {rowno}.lot", "not a valuation lot", got=repr(lot)))
        elif lid not in listing_ids:
            problems.append(Problem(f"{path}:row {rowno}.listing", "no such listing in listings.csv", got=repr(lid)))
        else:
            out[lot].add(lid)
    if problems:
        raise InputError(problems)
    return out


def read_values(path: Path, *, lots: set[str]) -> dict[str, dict[str, Any]]:
    """lot -> {estimate, hedged, comps} from one candidate's value CSV (every valuation lot once)."""
    problems: list[Problem] = []
    out: dict[str, dict[str, Any]] = {}
    for rowno, row in read_csv(path, OUTPUT_COLUMNS):
        where = f"{path}:row {rowno}"
        lot = row["lot"].strip()
        if lot not in lots:
            problems.append(Problem(f"{where}.lot", "not a valuation lot of lots.csv", got=repr(lot)))
            continue
        if lot in out:
            problems.append(Problem(f"{where}.lot", "duplicate lot", got=repr(lot)))
            continue
        est = None if not row["value"].strip() else money(row["value"], f"{where}.value", problems)
        if row["hedged"] not in ("0", "1"):
            problems.append(Problem(f"{where}.hedged", "not a flag", expected="1 or 0", got=repr(row["hedged"])))
        out[lot] = {"estimate": est, "hedged": row["hedged"] == "1",
                    "comps": {c for c in row["comps"].split(";") if c}}
    missing = sorted(lots - set(out))
    if missing:
        problems.append(Problem(str(path), f"no row for valuation lot(s) {', '.join(missing)}"))
    if problems:
        raise InputError(problems, hint="rebuild it: dvc repro value")
    return out


def read_audit(folder: Path) -> tuple[list[AuditLot], dict[str, dict[str, Any]]]:
    """The audited lots and the root-cause table; every cause used must be in the table."""
    problems: list[Problem] = []
    causes_path = folder / "root_causes.csv"
    causes: dict[str, dict[str, Any]] = {}
    for rowno, row in read_csv(causes_path, CAUSE_COLUMNS):
        name = row["root_cause"].strip()
        guards = [g.strip() for g in row["guard"].split(";") if g.strip()]
        if not name or name in causes:
            problems.append(Problem(f"{causes_path}:row {rowno}.root_cause", "empty or duplicate", got=repr(name)))
        elif not guards or any(not g.startswith(("lot:", "test:")) for g in guards):
            problems.append(Problem(f"{causes_path}:row {rowno}.guard", "no guard",
                                    expected="';'-separated lot:<id> or test:<file>::<name>", got=repr(row["guard"])))
        else:
            causes[name] = {"description": row["description"].strip(), "guards": guards}
    path = folder / "audit.csv"
    lots: list[AuditLot] = []
    seen: set[str] = set()
    for rowno, row in read_csv(path, AUDIT_COLUMNS):
        where = f"{path}:row {rowno}"
        lot = row["lot"].strip()
        if not lot or lot in seen:
            problems.append(Problem(f"{where}.lot", "empty or duplicate lot id", got=repr(lot)))
            continue
        seen.add(lot)
        bad = len(problems)
        for col in ("pipeline_verdict", "audited_verdict"):
            if row[col].strip() not in VERDICTS:
                problems.append(Problem(f"{where}.{col}", "not a verdict", expected="buy, watch or pass",
                                        got=repr(row[col])))
        pc = money(row["pipeline_ceiling"], f"{where}.pipeline_ceiling", problems, allow_zero=True)
        ac = money(row["audited_ceiling"], f"{where}.audited_ceiling", problems, allow_zero=True)
        cause = row["root_cause"].strip()
        if cause and cause not in causes:
            problems.append(Problem(f"{where}.root_cause", f"not in {causes_path}", got=repr(cause)))
        if len(problems) > bad or pc is None or ac is None:
            continue
        lots.append(AuditLot(lot, row["pipeline_verdict"].strip(), pc,  # type: ignore[arg-type]
                             row["audited_verdict"].strip(), ac, cause))  # type: ignore[arg-type]
    if problems:
        raise InputError(problems)
    return sorted(lots, key=lambda x: x.lot), causes


def r6(x: float | None) -> float | None:
    return None if x is None else round(x, DIGITS)


def summary_json(s: Summary, scores: Sequence[LotScore]) -> dict[str, Any]:
    tp = sum(x.fit for x in scores)
    return {
        "lots": s.lots, "estimated": s.estimated, "no_estimate": s.no_estimate, "hedged": s.hedged,
        "in_band": s.in_band, "in_band_rate": r6(s.in_band_rate), "median_ratio": r6(s.median_ratio),
        "worst_error": r6(s.worst_error), "worst_lot": s.worst_lot,
        "comps": {"tp": tp, "fp": sum(x.chosen for x in scores) - tp, "fn": sum(x.relevant for x in scores) - tp,
                  "precision": r6(s.comps_precision), "recall": r6(s.comps_recall)},
    }


def audit_json(a: AuditSummary, causes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "lots": a.lots, "verdicts_changed": a.verdicts_changed,
        "actionable_before": a.actionable_before, "actionable_after": a.actionable_after,
        "ceiling_sum_before": str(a.ceiling_sum_before), "ceiling_sum_after": str(a.ceiling_sum_after),
        "ceiling_change_pct": None if a.ceiling_change_pct is None else float(a.ceiling_change_pct),
        "buys_before": a.buys_before, "buys_stayed_buys": a.buys_stayed_buys,
        "root_causes": a.root_causes,
        "guards": {name: causes[name]["guards"] for name in sorted(causes)},
    }


def fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.{DIGITS}f}"


def outcome_rows(candidate: str, scores: Sequence[LotScore]) -> list[list[str]]:
    return [[s.lot, candidate, "" if s.estimate is None else str(s.estimate), fmt(s.ratio), str(int(s.in_band)),
             str(int(s.hedged)), fmt(s.comps_precision), fmt(s.comps_recall)] for s in scores]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stages.score_valuation", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--values", required=True, help="folder with <candidate>.csv from the value stage")
    ap.add_argument("--lots", required=True, help="the golden set's lots.csv")
    ap.add_argument("--comps", required=True, help="folder with listings.csv and relevance.csv")
    ap.add_argument("--audit", required=True, help="folder with audit.csv and root_causes.csv")
    ap.add_argument("--metrics", required=True, help="output: metrics/valuation.json")
    ap.add_argument("--outcomes", required=True, help="output: metrics/outcomes/valuation.csv")
    ap.add_argument("--audit-metrics", required=True, help="output: metrics/audit.json")
    ap.add_argument("--params", default=str(DEFAULT_PARAMS))
    args = ap.parse_args(argv)
    band = section(CompsParams, "comps", path=args.params).band
    candidates = section(CandidatesView, "identify", path=args.params).candidates
    lots = {lot.id: lot for lot in load_lots(Path(args.lots)) if lot.valuation}
    relevance = read_relevance(Path(args.comps), lots=set(lots))
    audit_lots, causes = read_audit(Path(args.audit))
    metrics: dict[str, Any] = {}
    rows: list[list[str]] = []
    console = []
    for cand in candidates:
        values = read_values(Path(args.values) / f"{cand}.csv", lots=set(lots))
        scores = []
        for lot_id in sorted(lots):
            v = values[lot_id]
            verified = lots[lot_id].verified_value
            assert verified is not None
            scores.append(score_lot(lot_id, verified, v["estimate"], relevant=relevance[lot_id], chosen=v["comps"],
                                    hedged=v["hedged"], band=band))
        s = summarize(scores)
        metrics[cand] = summary_json(s, scores)
        rows.extend(outcome_rows(cand, scores))
        console.append(f"{cand:<12} in band {s.in_band}/{s.lots}  median ratio {fmt(s.median_ratio)[:5]:>5}  "
                       f"worst {fmt(s.worst_error)[:5]:>5}x ({s.worst_lot})  no estimate {s.no_estimate}  "
                       f"comps P {fmt(s.comps_precision)[:4]} R {fmt(s.comps_recall)[:4]}")
    rows.sort(key=lambda r: (r[0], r[1]))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(OUTCOME_COLUMNS)
    w.writerows(rows)
    audit = audit_json(summarize_audit(audit_lots), causes)
    write_json(args.metrics, metrics)
    write_text(args.outcomes, buf.getvalue())
    write_json(args.audit_metrics, audit)
    print("\n".join(console))
    print(f"audit: {audit['verdicts_changed']}/{audit['lots']} verdicts changed, actionable "
          f"{audit['actionable_before']} -> {audit['actionable_after']}, ceilings {audit['ceiling_change_pct']}%, "
          f"buys that stayed buys {audit['buys_stayed_buys']}/{audit['buys_before']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
