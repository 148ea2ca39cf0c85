"""report stage: the human report of the stats and the gate (Markdown).

    python -m stages.report [--stats metrics/stats.json] [--gate metrics/gate.json]
                            [--out plots/report/report.md] [--forest plots/figures/forest.png]

Reads the stats stage's ``metrics/stats.json`` and the gate's ``metrics/gate.json``
(optional) and writes, for people rather than machines: every paired comparison with
both rates, their Wilson intervals, the discordant counts, the exact McNemar p and the
verdict in words; the gate's criteria with the numbers behind them and its per-class
table; every rate with its interval; and a link to the forest plot of the paired rates
per candidate (``--forest``), which ``make figures`` renders (:mod:`stages.figures`; PNG
bytes depend on the matplotlib build, so they are not pipeline outputs). Never a bare
leaderboard: on a small bench, differences inside each other's intervals are not rankings.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from candor.common.atomic import write_text
from candor.common.errors import fail, run_main

log = logging.getLogger("candor.report")


def _fmt(rate: float | None, lo: float | None, hi: float | None) -> str:
    if rate is None:
        return "n/a"
    return f"{rate:.3f} [{lo:.3f}, {hi:.3f}]"


def _numbers(criterion: Mapping[str, Any]) -> str:
    """A criterion's numbers for a table cell: intervals as ``rate [lo, hi]``, others ``key=value``."""
    parts = []
    for key, v in criterion.items():
        if key in ("passed", "classes"):
            continue
        if isinstance(v, Mapping) and "rate" in v:
            parts.append(f"{key}: {v['k']}/{v['n']} = {_fmt(v['rate'], v['lo'], v['hi'])}")
        elif isinstance(v, list):
            parts.append(f"{key}: {', '.join(map(str, v)) or 'none'}")
        else:
            parts.append(f"{key}: {v}")
    return "; ".join(parts)


def render_report(stats: Mapping[str, Any], gate: Mapping[str, Any] | None, *, forest: str | None) -> str:
    """The human report (Markdown): every comparison with its interval and p-value."""
    conf, alpha = stats["confidence"], stats["alpha"]
    out = ["# candor: rates, paired comparisons and the release gate", "",
           f"Every rate carries its Wilson {conf:.0%} interval; every comparison is paired on the same "
           f"cases and tested with the exact McNemar test on the discordant cases (alpha {alpha:g}). "
           f"A k-0 split needs k >= {stats['min_k0']} to reach alpha at all, so small benches detect "
           "regressions and find failures; they do not rank close candidates. There is no leaderboard here "
           "on purpose.", ""]
    absent = [p for p, state in stats["inputs"].items() if state == "absent"]
    if absent:
        out += ["**Not measured** (input absent): " + ", ".join(f"`{p}`" for p in absent), ""]
    if forest:
        out += [f"![rates with intervals per candidate]({forest})", "",
                "(The figure is rendered locally by `make figures`; PNGs are not committed because their bytes "
                "depend on the matplotlib build.)", ""]
    out += ["## Paired comparisons (reference A vs candidate B)", "",
            "| metric | A | B | rate A [interval] | rate B [interval] | n | A only | B only | p | verdict |",
            "|---|---|---|---|---|---:|---:|---:|---:|---|"]
    for metric, by_cand in stats["paired"].items():
        for cand, c in by_cand.items():
            out.append(f"| {metric} | {c['reference']} | {cand} | "
                       f"{_fmt(c['reference_rate'], c['reference_lo'], c['reference_hi'])} | "
                       f"{_fmt(c['rate'], c['lo'], c['hi'])} | {c['n']} | {c['a_only']} | {c['b_only']} | "
                       f"{c['p']:.4g} | {c['explanation']} |")
    unpaired = [(m, cand, c) for m, by in stats["paired"].items() for cand, c in by.items()
                if c["only_in_reference"] or c["only_in_candidate"]]
    if unpaired:
        out += ["", "Cases present on one side only (not compared): " + "; ".join(
            f"{m} [{cand}]: {c['only_in_reference']} only in {c['reference']}, "
            f"{c['only_in_candidate']} only in {cand}" for m, cand, c in unpaired)]
    out += [""]
    if gate is not None:
        verdict = "PASSED" if gate["passed"] else "FAILED (" + ", ".join(gate["failed"]) + ")"
        out += ["## Release gate (predeclared in `params.yaml: gate`)", "",
                f"{gate['candidate']} vs {gate['reference']} on the `{gate['split']}` split: **{verdict}**", "",
                "| criterion | result | numbers |", "|---|---|---|"]
        for name, c in gate["criteria"].items():
            out.append(f"| {name} | {'pass' if c['passed'] else 'FAIL'} | {_numbers(c)} |")
        out += ["", "Per class on its own labels (unqualified: support under `match.min_support`, "
                "never called improved):", "",
                "| class | support | status | recall A [interval] | recall B [interval] | A only | B only | p |",
                "|---|---:|---|---|---|---:|---:|---:|"]
        for name, c in gate["per_class"].items():
            out.append(f"| {name} | {c['support']} | {c['status']} | "
                       f"{_fmt(c['reference_recall'], c['reference_lo'], c['reference_hi'])} | "
                       f"{_fmt(c['candidate_recall'], c['candidate_lo'], c['candidate_hi'])} | "
                       f"{c['a_only']} | {c['b_only']} | {c['p']:.4g} |")
        out += [""]
    out += ["## Rates in the metrics files", "",
            "| rate | k / n | rate [interval] |", "|---|---:|---|"]
    for key, r in stats["rates"].items():
        out.append(f"| {key} | {r['k']} / {r['n']} | {_fmt(r['rate'], r['lo'], r['hi'])} |")
    if stats["no_interval"]:
        out += ["", "Rate-like values without an interval, and why:", ""]
        out += [f"- `{k}`: {why}" for k, why in stats["no_interval"].items()]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    stats_path = Path(args.stats)
    if not stats_path.is_file():
        raise fail(stats_path.as_posix(), "file not found", hint="run `dvc repro stats` first")
    stats = json.loads(stats_path.read_text(encoding="utf-8"))
    gate_path = Path(args.gate) if args.gate else None
    gate = json.loads(gate_path.read_text(encoding="utf-8")) if gate_path and gate_path.is_file() else None
    out = Path(args.out)
    rel = os.path.relpath(args.forest, out.parent).replace(os.sep, "/") if args.forest else None
    write_text(out, render_report(stats, gate, forest=rel))
    log.info("report -> %s", out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stages.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stats", default="metrics/stats.json", help="the stats stage's output")
    p.add_argument("--gate", default="metrics/gate.json", help="the gate stage's output (optional)")
    p.add_argument("--out", default="plots/report/report.md", help="the Markdown report")
    p.add_argument("--forest", default="plots/figures/forest.png",
                   help="where `make figures` renders the forest plot (linked from the report, not written here)")
    return p


if __name__ == "__main__":
    raise SystemExit(run_main(main))
