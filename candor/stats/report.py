"""The human report (Markdown) of ``metrics/stats.json`` and ``metrics/gate.json``, and the gate's check text.

Pure: no I/O. Both files are read through their record types
(:class:`candor.stats.stats_file.StatsFile`, :class:`candor.stats.gate.GateResult`), never by
key strings. Every comparison is shown with both rates, their Wilson intervals, the discordant
counts, the exact McNemar p and the verdict in words; every rate with its counts, unit and
interval. Never a bare leaderboard: on a small bench, differences inside each other's intervals
are not rankings.
"""
from __future__ import annotations

from candor.stats.error_kinds import report_lines
from candor.stats.gate import Criterion, GateResult
from candor.stats.headline import dig, headline
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
    lines = [f"release gate (predeclared in params.yaml:gate): {gate.candidate} vs {gate.reference} on set "
             f"{gate.set}, split {gate.split}"]
    lines += [f"  {'pass' if c.passed else 'FAIL'}  {name} {_numbers(c)}".rstrip() for name, c in gate.criteria.items()]
    lines.append("PASSED" if gate.passed else "FAILED: " + ", ".join(gate.failed))
    return "\n".join(lines) + "\n"


LOTS_TRACKS = ("identification", "fields", "valuation")
HEADLINE_METRICS = {"lots": ("identification.hit", "identification.not_wrong", "fields.majority", "valuation.in_band"),
                    "detection": ("test.label_found", "test.frame_error_free")}


def track_groups(stats: StatsFile) -> dict[str, str]:
    """Report group -> its reference: ``lots`` (identification, fields, valuation share one
    reference) and each ``detection.<set>``."""
    groups = {"lots": stats.reference[t] for t in LOTS_TRACKS if t in stats.reference}
    return groups | {t: r for t, r in sorted(stats.reference.items()) if t.startswith("detection.")}


def headline_metrics(group: str) -> tuple[str, ...]:
    """The paired metrics of a report group's one-screen summary and forest plot."""
    if group == "lots":
        return HEADLINE_METRICS["lots"]
    return tuple(f"{group}.{m}" for m in HEADLINE_METRICS["detection"])


def candidates_of(stats: StatsFile, group: str) -> list[str]:
    """Every candidate compared in a group (sorted), without its reference."""
    return sorted({c for m in headline_metrics(group) if m in stats.paired for c in stats.paired[m].candidates})


def _cell(stats: StatsFile, metric: str, cand: str) -> str:
    comp = stats.paired.get(metric)
    if comp is None or cand not in comp.candidates:
        return "n/a"
    c = comp.candidates[cand]
    mark = {"B better": " **better**", "B worse": " **worse**"}.get(c.verdict, "")
    return f"{fmt_interval(c.b)} vs {fmt_interval(c.a) if c.a.rate is not None else 'n/a'}; {c.a_only}-{c.b_only}, p={c.p:.3g}{mark}"


def detail_name(group: str, cand: str) -> str:
    """The file name of one candidate's details."""
    return f"{group}--{cand}.md"


def summary(stats: StatsFile, gate: GateResult | None) -> list[str]:
    """The one-screen summary: per group, one row per candidate against the reference on the
    headline metrics (its rate [interval] vs the reference's, discordant A-B, exact p, verdict)."""
    out = ["## Summary: each candidate against its reference (headline tests, not adjusted)", ""]
    for group, reference in track_groups(stats).items():
        metrics = headline_metrics(group)
        cands = candidates_of(stats, group)
        if not cands:
            continue
        unit = next((stats.paired[m].candidates[cands[0]].a.unit for m in metrics
                     if m in stats.paired and cands[0] in stats.paired[m].candidates), "case")
        out += [f"**{group}** (reference {reference}; cells: candidate [interval] vs reference, A-B discordant, "
                f"exact p; unit of the first: {unit})", "",
                "| candidate | " + " | ".join(metrics) + " | details |", "|---" * (len(metrics) + 2) + "|"]
        out += [f"| {c} | " + " | ".join(_cell(stats, m, c) for m in metrics) + f" | [details](details/{detail_name(group, c)}) |"
                for c in cands]
        counts = stats.paired_counts.get(f"{group}.test.false_positives") if group != "lots" else None
        if counts:
            out += ["", "False positives per test frame (fewer is better; exact sign test on frames that differ): " +
                    "; ".join(f"{c}: {k.explanation}, p={k.p:.3g}" for c, k in counts.candidates.items())]
        out += [""]
    if gate is not None:
        verdict = "PASSED" if gate.passed else "FAILED (" + ", ".join(gate.failed) + ")"
        out += [f"**Release gate** (predeclared): {gate.candidate} vs {gate.reference} on set `{gate.set}`, split "
                f"`{gate.split}`: **{verdict}** (criteria below)", ""]
    return out


def details(stats: StatsFile, group: str, cand: str) -> str:
    """One candidate's details: every paired comparison with the raw and, in a family, the Holm-adjusted
    p (the verdict follows the adjusted one), the count comparisons, and every rate of the candidate."""
    reference = track_groups(stats)[group]
    tracks = LOTS_TRACKS if group == "lots" else (group,)
    out = [f"# {cand} against {reference} ({group})", "",
           "Per-class and per-tier tests form families; their verdict reads the Holm-adjusted p (docs/stats.md, "
           "\"Multiple comparisons\"). Headline tests are single tests and are not adjusted.", "",
           "| metric | rate A [interval] | rate B [interval] | n | unit | A only | B only | p | p (Holm) | verdict |",
           "|---|---|---|---:|---|---:|---:|---:|---:|---|"]
    for metric, comp in stats.paired.items():
        if cand not in comp.candidates or not metric.startswith(tuple(t + "." for t in tracks)):
            continue
        c, holm_p = comp.candidates[cand], comp.p_holm.get(cand)
        said = c.explanation if holm_p is None else (
            (c.verdict if holm_p <= c.alpha else "no detectable difference") + " (Holm)")
        out.append(f"| {metric} | {fmt_interval(c.a)} | {fmt_interval(c.b)} | {c.n} | {c.a.unit} | {c.a_only} | "
                   f"{c.b_only} | {c.p:.4g} | {'' if holm_p is None else f'{holm_p:.4g}'} | {said} |")
    counts = [(m, k.candidates[cand]) for m, k in stats.paired_counts.items()
              if cand in k.candidates and m.startswith(tuple(t + "." for t in tracks))]
    if counts:
        out += ["", "| counts (fewer is better) | total A | total B | A fewer | B fewer | p (sign test) | verdict |",
                "|---|---:|---:|---:|---:|---:|---|"]
        out += [f"| {m} | {k.a_total} | {k.b_total} | {k.a_fewer} | {k.b_fewer} | {k.p:.4g} | {k.verdict} |"
                for m, k in counts]
    rates = [(key, r) for key, r in stats.rates.items()
             if f".{cand}." in f".{key}." and key.startswith(tuple(t + "." for t in tracks))]
    out += ["", f"## Rates of {cand} (counted by their scorers)", "", "| rate | k / n | unit | rate [interval] |",
            "|---|---:|---|---|"]
    out += [f"| {key} | {r.k} / {r.n} | {r.unit} | {fmt_interval(r)} |" for key, r in rates]
    return "\n".join(out) + "\n"


def render_report(stats: StatsFile, gate: GateResult | None, *, forest: str | None) -> tuple[str, dict[str, str]]:
    """The human report (Markdown) and its detail files (name -> text, under ``details/``): a
    one-screen summary, the gate, then a link per candidate. ``forest``: the folder of the forest
    plots (``forest-<group>.png``) relative to the report."""
    out = ["# candor: rates, paired comparisons and the release gate", "",
           f"Every rate carries its Wilson {stats.confidence:.0%} interval; every comparison is paired on the same "
           f"cases and tested with the exact McNemar test on the discordant cases (alpha {stats.alpha:g}). "
           f"A k-0 split needs k >= {stats.min_k0} to reach alpha at all, so small benches detect "
           "regressions and find failures; they do not rank close candidates. There is no leaderboard here "
           "on purpose.", ""]
    if stats.absent:
        out += ["**Not measured** (input absent): " + ", ".join(f"`{p}`" for p in stats.absent), ""]
    out += summary(stats, gate)
    if forest:
        out += ["Forest plots of the headline rates (rendered locally by `make figures`; PNG bytes depend on the "
                "matplotlib build, so they are not committed): " +
                ", ".join(f"[{g}]({forest}/forest-{g}.png)" for g in track_groups(stats)), ""]
    if gate is not None:
        out += ["## Release gate (predeclared in `params.yaml: gate`)", "",
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
    files = {}
    for group, reference in track_groups(stats).items():
        for cand in [reference, *candidates_of(stats, group)]:
            files[detail_name(group, cand)] = details(stats, group, cand)
    out += ["## Details per candidate", "", ", ".join(f"[{n[:-3]}](details/{n})" for n in files), ""]
    return "\n".join(out) + "\n", files


def review(stats: StatsFile, gate: GateResult | None, docs: dict, *, sets: dict[str, list[str]],
           forest: str | None) -> tuple[dict, str, dict[str, str]]:
    """What a reviewer reads: the headline metrics (:func:`candor.stats.headline.headline`, the
    numbers ``dvc metrics diff`` lists), the report text and its detail files
    (:func:`render_report`), from the stats, the gate (None: not measured), the metrics files
    ``docs`` (:func:`candor.stats.collect.read_metrics`) and the detection ``sets``. The lots
    candidates are those of the identification metrics, of the stats and the reference."""
    reference = stats.reference.get("identification", "")
    lots = sorted(set(dig(docs.get("identification", ("", None))[1], "identification") or {})
                  | set(candidates_of(stats, "lots")) | ({reference} if reference else set()))
    head = headline(stats, gate, docs, sets=sets, candidates=lots, reference=reference)
    text, details = render_report(stats, gate, forest=forest)
    for name, lines in report_lines(docs, sets).items():       # what kind of error changed: descriptive
        text += "\n".join(lines) + "\n"
        for cand in sets[name][1:]:
            key = detail_name(f"detection.{name}", cand)
            if key in details:
                details[key] += "\n" + "\n".join(lines) + "\n"
    return head, text, details
