"""The human report (Markdown) of ``metrics/stats.json`` and ``metrics/gate.json``, and the gate's check text.

Pure: no I/O. Both files are read through their record types
(:class:`candor_eval.review.stats_file.StatsFile`, :class:`candor_eval.review.gate.GateResult`), never by
key strings. Every comparison is shown with its difference and cluster interval, both rates,
the discordant split (units, and the clusters they sit in), the exact sign-flip p and the
verdict in words, and for a headline test what the bench could have detected
(:mod:`candor_eval.stats.power`); every rate with its counts, unit, cluster and interval. Never a
bare leaderboard: on a small bench, differences inside each other's intervals are not rankings.
"""
from __future__ import annotations

from candor_eval.review.error_kinds import report_lines
from candor_eval.review.gate_result import Criterion, GateResult
from candor_eval.review.gate_views import STATUS, criterion_lines, drop_cell
from candor_eval.review.headline import dig, headline
from candor_eval.review.runs import consistency_lines
from candor_eval.review.stats_file import StatsFile
from candor_eval.review.text_forest import TextRow, nice_top, text_forest
from candor_eval.stats.outcomes import LOTS_TRACKS
from candor_eval.stats.paired import Paired, fmt_diff
from candor_eval.stats.rates import Rate, fmt_bounds, fmt_count, fmt_interval


def md_text(text: str) -> str:
    """``text`` (a name or key that came from data: a class, a field, a metric key) safe in a Markdown
    table cell and in HTML: ``&``, ``<``, ``>`` as entities and ``|`` escaped, so a name can neither
    end the cell nor become markup (``<img onerror=...>``).

    >>> md_text("deer"), md_text("<img src=x onerror=alert(1)>|x")
    ('deer', '&lt;img src=x onerror=alert(1)&gt;\\\\|x')
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def power_line(c: Paired, power: dict | None) -> str:
    """What the bench could have detected with the test it runs: the exact sign-flip test over its
    own clusters, simulated at their observed discordant counts and planned with the observed
    (post-hoc) discordance (``power``: the stored :func:`candor_eval.stats.power.power_json` of the
    comparison ``c``). Either the least improvement found with 80% power, or plainly why none can be
    (too few clusters that differ to reach alpha at all; or not 80% at any improvement): never both."""
    if c.kind != "outcome" or c.n == 0 or power is None:
        return ""
    where = (f"exact sign-flip test over {power['clusters_total']} {c.cluster}s, "
             f"{power['clusters_discordant']} with a discordant {c.unit}; planned with the observed (post-hoc) "
             f"discordance {power['discordance']:.3f}")
    if power["reason"] is not None:
        return f"{power['reason']} ({where})"
    return f"{power['power']:.0%} power to detect >= {100 * power['detectable']:.1f} pp ({where})"


def _numbers(c: Criterion, name: str) -> str:
    """A criterion's numbers for a table cell (what ``candor gate check`` prints, one item after another)."""
    return "; ".join(criterion_lines(name, c))


HEADLINE_METRICS = {"lots": ("identification.hit", "identification.not_wrong", "fields.majority", "valuation.in_band"),
                    "detection": ("test.label_found", "test.frame_error_free")}


def track_groups(stats: StatsFile) -> dict[str, str]:
    """Report group -> its reference: ``lots`` (identification, fields, valuation share one
    reference) and each ``detection.<set>``."""
    lots = [stats.reference[t] for t in LOTS_TRACKS if t in stats.reference]
    groups = {"lots": lots[-1]} if lots else {}
    return groups | {t: r for t, r in sorted(stats.reference.items()) if t.startswith("detection.")}


def track_group(track: str) -> str:
    """The report group of a track: ``lots`` for the lots tracks, else the track itself."""
    return "lots" if track in LOTS_TRACKS else track


def headline_metrics(group: str) -> tuple[str, ...]:
    """The paired metrics of a report group's one-screen summary and forest plot."""
    if group == "lots":
        return HEADLINE_METRICS["lots"]
    return tuple(f"{group}.{m}" for m in HEADLINE_METRICS["detection"])


def candidates_of(stats: StatsFile, group: str) -> list[str]:
    """Every candidate compared in a group (sorted), without its reference."""
    return sorted({c for m in headline_metrics(group) if m in stats.paired for c in stats.paired[m].candidates})


def detail_name(group: str, cand: str) -> str:
    """The file name of one candidate's details."""
    return f"{group}--{cand}.md"


def summary_metrics(stats: StatsFile, group: str) -> tuple[str, ...]:
    """The paired tests of a group's summary table and one-line answer: its headline metrics, then for a
    detection set its false-positive test (false positives per test frame), when the stats hold them."""
    extra = () if group == "lots" else (f"{group}.test.false_positives",)
    return tuple(m for m in (*headline_metrics(group), *extra) if m in stats.paired)


VERDICT_WORD = {"B better": "**better**", "B worse": "**worse**",
                "no detectable difference": "no detectable difference"}


def _value(r: Rate) -> str:
    return "n/a" if r.rate is None else f"{r.rate:.3f}"


def _diff(c: Paired) -> str:
    if c.diff is None:
        return "n/a"
    ci = "" if c.diff_lo is None or c.diff_hi is None else f" [{c.diff_lo:+.3f}, {c.diff_hi:+.3f}]"
    return f"{c.diff:+.3f}{ci}"


def summary_rows(stats: StatsFile, group: str) -> list[str]:
    """A group's summary table: one row per (candidate, headline test), the numbers in columns."""
    out = ["| candidate | test | unit | B (candidate) | B interval | A (reference) | A interval | B - A [interval] "
           "| discordant A-B | p | verdict |", "|---|---|---|---:|---|---:|---|---|---|---:|---|"]
    for cand in candidates_of(stats, group):
        for metric in summary_metrics(stats, group):
            c = stats.paired[metric].candidates.get(cand)
            if c is None:
                continue
            unit = f"{c.unit}" if c.kind == "outcome" else f"per {c.unit}"
            unit += "" if c.cluster == c.unit else f", by {c.cluster}"
            out.append(f"| {md_text(cand)} | {md_text(short_metric(group, metric))} | {unit} | {_value(c.b)} "
                       f"| {fmt_bounds(c.b)} | {_value(c.a)} | {fmt_bounds(c.a)} | {_diff(c)} | {c.split} "
                       f"| {c.p:.3g} | {VERDICT_WORD.get(c.verdict, c.verdict)} |")
    return out


def short_metric(group: str, metric: str) -> str:
    """A metric key without its group's prefix: ``test.label_found`` for ``detection.d.test.label_found``."""
    return metric[len(group) + 1:] if metric.startswith(group + ".") else metric


def track_answer(stats: StatsFile, group: str) -> str:
    """The one-line answer of a group: each candidate better or worse on a headline test, with the tests
    and their p; then, together, the candidates with no detectable difference on any (each with its
    smallest p)."""
    moved, still = [], []
    for cand in candidates_of(stats, group):
        tests = [(short_metric(group, m), stats.paired[m].candidates[cand]) for m in summary_metrics(stats, group)
                 if cand in stats.paired[m].candidates]
        verdicts = [f"{VERDICT_WORD[v]} on " + ", ".join(f"{m} (p={c.p:.3g})" for m, c in tests if c.verdict == v)
                    for v in ("B worse", "B better") if any(c.verdict == v for _, c in tests)]
        if verdicts:
            moved.append(f"{md_text(cand)} is " + " and ".join(verdicts))
        else:
            still.append(f"{md_text(cand)}" + (f" (smallest p={min(c.p for _, c in tests):.3g})" if tests else ""))
    if still:
        moved.append("no detectable difference on any headline test: " + ", ".join(still))
    return f"- **{group}** (against {md_text(track_groups(stats)[group])}): " + "; ".join(moved) + "."


def gate_lines(gate: GateResult) -> list[str]:
    """The gate's verdict for the first screen: the verdict, what was compared, and the failed and
    the pending criteria, each on its own line."""
    out = [f"**Release gate: {gate.verdict}** ({gate.candidate} against {gate.reference} on set `{gate.set}`, "
           f"split `{gate.split}`; predeclared in `{gate.params_file}: gate`, criteria below)", ""]
    if gate.failed:
        out.append("- failed: " + ", ".join(f"`{n}`" for n in gate.failed))
    if gate.pending:
        out.append("- not evaluated (pending): " + ", ".join(f"`{n}`" for n in gate.pending))
    if gate.verdict == "NOT EVALUATED" and not gate.failed and not gate.pending:
        out.append("- every criterion waived: nothing was checked")
    return out + [""]


def first_screen(stats: StatsFile, gate: GateResult | None) -> list[str]:
    """What the report opens with: the gate's verdict, then the one-line answer per track."""
    out = gate_lines(gate) if gate is not None else []
    answers = [track_answer(stats, g) for g in track_groups(stats) if candidates_of(stats, g)]
    if answers:
        out += [f"**The answer per track**: each candidate against its reference on the headline tests (exact "
                f"sign-flip test over clusters, alpha {stats.alpha:g}, not adjusted; the numbers: \"Summary\" "
                "below):", "", *answers, ""]
    return out


def summary(stats: StatsFile) -> list[str]:
    """The summary tables: per group, one row per candidate and headline test (:func:`summary_rows`), then
    what a detection set's statistics rest on (:func:`bench_lines`)."""
    out = ["## Summary: each candidate against its reference (headline tests, not adjusted)", ""]
    for group, reference in track_groups(stats).items():
        if not candidates_of(stats, group):
            continue
        out += [f"**{group}** (A: the reference, {md_text(reference)}; B: each candidate; discordant A-B: the units "
                "only A got right, then those only B got right, and the clusters they sit in; for a count, the "
                "units where A, then B, has the smaller count)", "", *summary_rows(stats, group), "",
                "Details: " + ", ".join(f"[{md_text(c)}](details/{detail_name(group, c)})"
                                        for c in candidates_of(stats, group)), ""]
        out += bench_lines(stats, group)
    return out


def bench_lines(stats: StatsFile, group: str) -> list[str]:
    """What a detection set's statistics rest on: frames and sessions per split, and each session's
    micro P/R per model (intervals over frames do not cover session-to-session variation; clustered
    by session, they do)."""
    bench = stats.benches.get(group)
    if not bench:
        return []
    out = []
    for split, b in bench["splits"].items():
        sessions = b["sessions"]
        cover = ("its intervals and tests treat the sessions as the independent units, so they cover "
                 "session-to-session variation" if bench["cluster"] == "session" else
                 "its intervals do not cover session-to-session variation")
        out.append(f"Split `{split}` rests on {b['frames']} frames from {len(sessions)} capture session"
                   f"{'s' if len(sessions) != 1 else ''}, units clustered by {bench['cluster']}: {cover}. "
                   "Micro precision / recall per session: " +
                   "; ".join(f"{md_text(s)} (" + ", ".join(f"{m} {_pr(v)}" for m, v in models.items()) + ")"
                             for s, models in sessions.items()) + ".")
        out.append("")                                   # one paragraph per split
    return out


def _pr(v: dict) -> str:
    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"
    return f"{f(v['precision'])}/{f(v['recall'])}"


def details(stats: StatsFile, group: str, cand: str) -> str:
    """One candidate's details: every paired comparison with the raw and, in a family, the Holm-adjusted
    p (the verdict follows the adjusted one), the count comparisons, and every rate of the candidate."""
    reference = track_groups(stats)[group]
    tracks = LOTS_TRACKS if group == "lots" else (group,)
    power = [f"- {m}: {line}" for m in headline_metrics(group)
             if m in stats.paired and cand in stats.paired[m].candidates
             and (line := power_line(stats.paired[m].candidates[cand], stats.power.get(m, {}).get(cand)))]
    out = [f"# {cand} against {reference} ({group})", ""]
    if power:
        out += ["What this bench could have detected on its headline tests (the power of the exact sign-flip test "
                "it runs, over its own clusters, by seeded simulation; docs/stats.md, \"What a bench can detect\"):",
                "", *power, ""]
    out += ["Every test is the exact sign-flip test over independent clusters (one lot per cluster: the exact "
           "McNemar test). Per-class and per-tier tests form families; their verdict reads the Holm-adjusted p "
           "(docs/stats.md, \"Multiple comparisons\"). Headline tests are single tests and are not adjusted.", "",
           "| metric | B - A [interval] | A | B | split | p | p (Holm) | verdict |",
           "|---|---|---|---|---|---:|---:|---|"]
    for metric, comp in stats.paired.items():
        if cand not in comp.candidates or not metric.startswith(tuple(t + "." for t in tracks)):
            continue
        c = comp.candidates[cand]
        holm = "" if c.p_holm is None else f"{c.p_holm:.4g}"
        out.append(f"| {md_text(metric)} | {fmt_diff(c)} | {fmt_count(c.a)} | {fmt_count(c.b)} | {c.split} "
                   f"| {c.p:.4g} | {holm} | {c.verdict} |")
    rates = [(key, r) for key, r in stats.rates.items()
             if f".{cand}." in f".{key}." and key.startswith(tuple(t + "." for t in tracks))]
    out += ["", f"## Rates of {cand} (counted by their scorers)", "",
            "| rate | k / n | unit | cluster (clusters, design effect) | rate [interval] |", "|---|---:|---|---|---|"]
    out += [f"| {md_text(key)} | {r.k} / {r.n} | {r.unit} | {r.cluster} ({r.clusters}, {r.deff:.2f}) "
            f"| {fmt_interval(r)} |"
            for key, r in rates]
    return "\n".join(out) + "\n"


def cluster_kinds(stats: StatsFile) -> str:
    """What the units of the project's tracks cluster in, for the report's opening: ``lots`` and
    ``cases`` (the lots tracks), ``frames, or capture sessions`` (the detection sets); every kind
    when the stats file has no track."""
    groups = track_groups(stats)
    lots = "lots" in groups or not groups
    detection = any(g.startswith("detection.") for g in groups) or not groups
    return "; ".join((["lots"] if lots else []) + (["frames, or capture sessions"] if detection else [])
                     + (["cases"] if lots else []))


def forest_lines(stats: StatsFile, group: str) -> list[str]:
    """A group's headline tests drawn as a text forest plot (:mod:`candor_eval.review.text_forest`), in a
    code block: per test its reference, then each candidate marked by its verdict and p; rates on a 0..1
    axis, a mean per unit (false positives per frame) on its own axis from 0. Empty without a test."""
    blocks: dict[bool, list[tuple[str, list[TextRow]]]] = {False: [], True: []}
    for metric in summary_metrics(stats, group):
        comp = stats.paired[metric]
        rows: list[TextRow] = []
        for cand, c in sorted(comp.candidates.items()):
            if not rows and c.a.rate is not None and c.a.lo is not None and c.a.hi is not None:
                rows.append(TextRow(f"  {comp.reference} (reference)", c.a.rate, c.a.lo, c.a.hi))
            if c.b.rate is not None and c.b.lo is not None and c.b.hi is not None:
                word = {"B better": "better", "B worse": "worse"}.get(c.verdict, "no detectable difference")
                rows.append(TextRow(f"  {cand}", c.b.rate, c.b.lo, c.b.hi, f"{word}, p={c.p:.3g}"))
        if rows:
            mean = next(iter(comp.candidates.values())).a.estimate == "mean"
            unit = next(iter(comp.candidates.values())).a.unit
            blocks[mean].append((short_metric(group, metric) + (f" (per {unit}; fewer is better)" if mean else ""),
                                 rows))
    out: list[str] = []
    for mean, tests in blocks.items():
        if not tests:
            continue
        rows = [r for _, rs in tests for r in rs]
        lines = text_forest(rows, top=nice_top(max(r.hi for r in rows)) if mean else 1.0)
        drawn, at = [], 0
        for name, rs in tests:
            drawn += [name, *lines[at:at + len(rs)]]
            at += len(rs)
        out += ["```", *drawn, lines[-1], "```", ""]
    return out


def render_report(stats: StatsFile, gate: GateResult | None, *, forest: str | None) -> tuple[str, dict[str, str]]:
    """The human report (Markdown) and its detail files (name -> text, under ``details/``): first the
    gate's verdict and the one-line answer per track (:func:`first_screen`), then the summary tables,
    the headline tests drawn as text (:func:`forest_lines`), the gate's criteria and a link per
    candidate. ``forest``: the folder of the PNG forest plots (``forest-<group>.png``, drawn locally by
    ``candor figures``) relative to the report, named but not linked (the PNGs are not committed)."""
    out = ["# candor: rates, paired comparisons" + (" and the release gate" if gate is not None else ""), ""]
    out += first_screen(stats, gate)
    if stats.absent:
        out += ["**Not measured** (input absent): " + ", ".join(f"`{p}`" for p in stats.absent), ""]
    out += [f"Every rate carries its {stats.confidence:.0%} interval over independent clusters ({cluster_kinds(stats)}"
            f"): the Wilson interval, at the effective sample size where units cluster. Every "
            f"comparison is paired on the same units and tested with the exact sign-flip test over clusters "
            f"(alpha {stats.alpha:g}; with one unit per cluster, the exact McNemar test). A split of clusters all one "
            f"way needs at least {stats.min_k0} of them to reach alpha at all, so small benches detect "
            "regressions and find failures; they do not rank close candidates. There is no leaderboard here "
            "on purpose.", ""]
    out += summary(stats)
    drawn = {g: lines for g in track_groups(stats) if (lines := forest_lines(stats, g))}
    if drawn:
        out += ["## The headline tests, drawn", "",
                "Each rate with its interval (`[---o---]`: the interval and the estimate, `o`), drawn as text so "
                "that it renders wherever this file is read and its bytes are the same on every machine"
                + ("" if not forest else
                   f"; `candor figures` (`make figures`) draws the same as PNG, `{forest}/forest-<group>.png`, "
                   "locally: PNG bytes depend on the matplotlib build, so they are not committed") + ".", ""]
        for group, lines in drawn.items():
            out += [f"**{group}**", "", *lines]
    if gate is not None:
        out += [f"## Release gate (predeclared in `{gate.params_file}: gate`)", "",
                "| criterion | result | numbers |", "|---|---|---|"]
        out += [f"| {md_text(name)} | {STATUS[c.status]} | {md_text(_numbers(c, name))} |"
                for name, c in gate.criteria.items()]
        out += ["", f"Declared: improvement `{gate.improvement}`, "
                f"critical recall drop margin {gate.max_recall_drop:g}, "
                f"unqualified critical classes `{gate.unqualified}`, waived: {', '.join(gate.waive) or 'none'}. "
                "The gate rests on the served operating point; nothing else (no threshold-free figure) enters it.", "",
                "Per class on its own labels (unqualified: support under `match.min_support` or fewer clusters than "
                "the smallest split that can reach alpha; never called improved):", "",
                "| class | support | status | recall A [interval] | recall B [interval] | split | p "
                "| largest drop allowed |",
                "|---|---:|---|---|---|---|---:|---:|"]
        for name, k in gate.per_class.items():
            p = k.paired
            cells = ("n/a | n/a | | | |" if p is None else
                     f"{fmt_interval(p.a)} | {fmt_interval(p.b)} | {p.split} | {p.p:.4g} | "
                     f"{'n/a' if k.max_drop is None else drop_cell(k.max_drop)} |")
            out.append(f"| {md_text(name)} | {k.support} | {k.status} | {cells}")
        out += [""]
    files = {}
    for group, reference in track_groups(stats).items():
        for cand in [reference, *candidates_of(stats, group)]:
            files[detail_name(group, cand)] = details(stats, group, cand)
    out += ["## Details per candidate", "", ", ".join(f"[{n[:-3]}](details/{n})" for n in files), ""]
    return "\n".join(out) + "\n", files


def environment_lines(docs: dict, candidates: list[str], reference: str | None) -> list[str]:
    """The recorded mode switches of each lots candidate (``identification.<c>.environment`` of
    ``metrics/identification.json``: params ``identify.record_env``), and, for each candidate whose switches
    differ from the reference's (another value, or recorded on one side only), a warning that says which:
    its comparison is not between two codes under one environment. Empty when no candidate recorded any."""
    ident = dig(docs.get("identification", ("", None))[1], "identification") or {}
    env = {c: (ident.get(c) or {}).get("environment") or {} for c in candidates}
    if not any(env.values()):
        return []

    def shown(values: list[str | None]) -> str:
        return " or ".join("unset" if v is None else f"`{md_text(v)}`" for v in values)

    out = ["## Recorded environment (`identify.record_env`)", ""]
    out += [f"- {md_text(c)}: " + ("; ".join(f"{md_text(n)} = {shown(v)}" for n, v in e.items()) or "none recorded")
            for c, e in env.items()]
    ref = env.get(reference or "", {})
    for c in candidates:
        if c == reference:
            continue
        differ = sorted(n for n in set(ref) | set(env[c]) if ref.get(n) != env[c].get(n))
        if differ:
            out.append(f"- **{md_text(c)} against {md_text(reference or '')}: the recorded switches differ** ("
                       + ", ".join(md_text(n) for n in differ) + "): the comparison is not under one environment.")
    return out + [""]


def review(stats: StatsFile, gate: GateResult | None, docs: dict, *, sets: dict[str, list[str]],
           forest: str | None) -> tuple[dict, str, dict[str, str]]:
    """What a reviewer reads: the headline metrics (:func:`candor_eval.review.headline.headline`, the
    numbers ``dvc metrics diff`` lists), the report text and its detail files
    (:func:`render_report`), from the stats, the gate (None: not measured), the metrics files
    ``docs`` (:func:`candor_eval.review.collect.read_metrics`) and the detection ``sets``. The lots
    candidates are those of the identification metrics, of the stats and the reference; a stats
    file without a lots reference has no lots track (no lots block in the headline)."""
    reference = stats.reference.get("identification")
    lots = [] if reference is None else sorted(
        set(dig(docs.get("identification", ("", None))[1], "identification") or {})
        | set(candidates_of(stats, "lots")) | {reference})
    head = headline(stats, gate, docs, sets=sets, candidates=lots, reference=reference)
    text, details = render_report(stats, gate, forest=forest)
    sections = [environment_lines(docs, lots, reference),
                consistency_lines(docs, lots, escape=md_text),            # what the runs buy
                *report_lines(docs, sets).values()]                       # what kind of error changed: descriptive
    text += "".join(block(lines) for lines in sections)
    for name, lines in report_lines(docs, sets).items():
        for cand in sets[name][1:]:
            key = detail_name(f"detection.{name}", cand)
            if key in details:
                details[key] += "\n" + block(lines)
    return head, text, details


def block(lines: list[str]) -> str:
    """Markdown lines as a block that ends in one blank line (a table or a paragraph never runs into the
    next); empty for no lines.

    >>> block(["| a |", ""]), block(["x"]), block([])
    ('| a |\\n\\n', 'x\\n\\n', '')
    """
    while lines and not lines[-1]:
        lines = lines[:-1]
    return "\n".join(lines) + "\n\n" if lines else ""
