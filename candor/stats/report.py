"""The human report (Markdown) of ``metrics/stats.json`` and ``metrics/gate.json``, and the gate's check text.

Pure: no I/O. Both files are read through their record types
(:class:`candor.stats.stats_file.StatsFile`, :class:`candor.stats.gate.GateResult`), never by
key strings. Every comparison is shown with both rates, their Wilson intervals, the discordant
counts, the exact McNemar p and the verdict in words; every rate with its counts, unit and
interval. Never a bare leaderboard: on a small bench, differences inside each other's intervals
are not rankings.
"""
from __future__ import annotations

from candor.stats.gate import Criterion, GateResult
from candor.stats.rates import Rate
from candor.stats.stats_file import StatsFile


def fmt_interval(r: Rate) -> str:
    """``0.500 [0.150, 0.850]``; ``n/a`` when nothing was measured."""
    return "n/a" if r.rate is None else f"{r.rate:.3f} [{r.lo:.3f}, {r.hi:.3f}]"


def fmt_count(r: Rate) -> str:
    """``2/8 = 0.250 [0.071, 0.591]``; ``n/a (0 <unit>s)`` when nothing was measured."""
    return f"n/a (0 {r.unit}s)" if r.rate is None else f"{r.k}/{r.n} = {fmt_interval(r)}"


def _numbers(c: Criterion) -> str:
    """A criterion's numbers for a table cell."""
    parts = [c.note] if c.note else []
    for side, value, rate in (("reference", c.reference, c.reference_rate),
                              ("candidate", c.candidate, c.candidate_rate)):
        if rate is not None:
            parts.append(f"{side}: {fmt_count(rate)} {rate.unit}s")
        elif value is not None:
            parts.append(f"{side}: {value:g}")
    if c.limit is not None:
        parts.append(f"limit: {c.limit:g} ms")
    parts += [f"{k}: {v}" for k, v in c.tally.items()]
    if c.classes:
        parts.append("classes: " + ", ".join(f"{n} {r.status}" for n, r in c.classes.items()))
    return "; ".join(parts)


def render_check(gate: GateResult) -> str:
    """The gate for a terminal: each criterion with its numbers, then PASSED or FAILED."""
    lines = [f"release gate (predeclared in params.yaml:gate): {gate.candidate} vs {gate.reference} on {gate.split}"]
    lines += [f"  {'pass' if c.passed else 'FAIL'}  {name} {_numbers(c)}".rstrip() for name, c in gate.criteria.items()]
    lines.append("PASSED" if gate.passed else "FAILED: " + ", ".join(gate.failed))
    return "\n".join(lines) + "\n"


def render_report(stats: StatsFile, gate: GateResult | None, *, forest: str | None) -> str:
    """The human report (Markdown); ``forest``: the forest plot's path relative to the report."""
    out = ["# candor: rates, paired comparisons and the release gate", "",
           f"Every rate carries its Wilson {stats.confidence:.0%} interval; every comparison is paired on the same "
           f"cases and tested with the exact McNemar test on the discordant cases (alpha {stats.alpha:g}). "
           f"A k-0 split needs k >= {stats.min_k0} to reach alpha at all, so small benches detect "
           "regressions and find failures; they do not rank close candidates. There is no leaderboard here "
           "on purpose.", ""]
    if stats.absent:
        out += ["**Not measured** (input absent): " + ", ".join(f"`{p}`" for p in stats.absent), ""]
    if forest:
        out += [f"![rates with intervals per candidate]({forest})", "",
                "(The figure is rendered locally by `make figures`; PNGs are not committed because their bytes "
                "depend on the matplotlib build.)", ""]
    out += ["## Paired comparisons (reference A vs candidate B)", "",
            "| metric | A | B | rate A [interval] | rate B [interval] | n | unit | A only | B only | p | verdict |",
            "|---|---|---|---|---|---:|---|---:|---:|---:|---|"]
    unpaired = []
    for metric, comp in stats.paired.items():
        for cand, c in comp.candidates.items():
            out.append(f"| {metric} | {comp.reference} | {cand} | {fmt_interval(c.a)} | {fmt_interval(c.b)} | "
                       f"{c.n} | {c.a.unit} | {c.a_only} | {c.b_only} | {c.p:.4g} | {c.explanation} |")
            if c.only_in_a or c.only_in_b:
                unpaired.append(f"{metric} [{cand}]: {len(c.only_in_a)} only in {comp.reference}, "
                                f"{len(c.only_in_b)} only in {cand}")
    if unpaired:
        out += ["", "Cases present on one side only (not compared): " + "; ".join(unpaired)]
    out += [""]
    if gate is not None:
        verdict = "PASSED" if gate.passed else "FAILED (" + ", ".join(gate.failed) + ")"
        out += ["## Release gate (predeclared in `params.yaml: gate`)", "",
                f"{gate.candidate} vs {gate.reference} on the `{gate.split}` split: **{verdict}**", "",
                "| criterion | result | numbers |", "|---|---|---|"]
        out += [f"| {name} | {'pass' if c.passed else 'FAIL'} | {_numbers(c)} |" for name, c in gate.criteria.items()]
        out += ["", "Per class on its own labels (unqualified: support under `match.min_support`, "
                "never called improved):", "",
                "| class | support | status | recall A [interval] | recall B [interval] | A only | B only | p |",
                "|---|---:|---|---|---|---:|---:|---:|"]
        for name, k in gate.per_class.items():
            p = k.paired
            cells = ("n/a | n/a | | | |" if p is None else
                     f"{fmt_interval(p.a)} | {fmt_interval(p.b)} | {p.a_only} | {p.b_only} | {p.p:.4g} |")
            out.append(f"| {name} | {k.support} | {k.status} | {cells}")
        out += [""]
    out += ["## Rates in the metrics files (counted by their scorers)", "",
            "| rate | k / n | unit | rate [interval] |", "|---|---:|---|---|"]
    out += [f"| {key} | {r.k} / {r.n} | {r.unit} | {fmt_interval(r)} |" for key, r in stats.rates.items()]
    return "\n".join(out) + "\n"
