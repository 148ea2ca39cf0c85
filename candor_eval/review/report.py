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
from candor_eval.review.gate_views import STATUS, criterion_lines, verdict_line
from candor_eval.review.headline import dig, headline
from candor_eval.review.runs import consistency_lines
from candor_eval.review.stats_file import StatsFile
from candor_eval.stats.outcomes import LOTS_TRACKS
from candor_eval.stats.paired import Paired, fmt_diff
from candor_eval.stats.rates import fmt_count, fmt_interval


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


def _cell(stats: StatsFile, metric: str, cand: str) -> str:
    comp = stats.paired.get(metric)
    if comp is None or cand not in comp.candidates:
        return "n/a"
    c = comp.candidates[cand]
    mark = {"B better": " **better**", "B worse": " **worse**"}.get(c.verdict, "")
    return (f"{fmt_interval(c.b)} vs {fmt_interval(c.a) if c.a.rate is not None else 'n/a'}; {c.split}, "
            f"p={c.p:.3g}{mark}")


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
        first = next((stats.paired[m].candidates[cands[0]] for m in metrics
                      if m in stats.paired and cands[0] in stats.paired[m].candidates), None)
        unit = "case" if first is None else first.unit + ("" if first.cluster == first.unit else
                                                          f", clustered by {first.cluster}")
        out += [f"**{group}** (reference {reference}; cells: candidate [interval] vs reference, A-B discordant, "
                f"exact sign-flip p over clusters; unit of the first: {unit})", "",
                "| candidate | " + " | ".join(metrics) + " | details |", "|---" * (len(metrics) + 2) + "|"]
        out += [f"| {c} | " + " | ".join(_cell(stats, m, c) for m in metrics)
                + f" | [details](details/{detail_name(group, c)}) |"
                for c in cands]
        counts = stats.paired.get(f"{group}.test.false_positives") if group != "lots" else None
        if counts:
            out += ["", "False positives per test frame (fewer is better; exact sign-flip test over clusters): " +
                    "; ".join(f"{c}: {k.explanation}" for c, k in counts.candidates.items())]
        out += bench_lines(stats, group) + [""]
    if gate is not None:
        out += [f"**Release gate** (predeclared): {gate.candidate} vs {gate.reference} on set `{gate.set}`, split "
                f"`{gate.split}`: **{verdict_line(gate)}** (criteria below)", ""]
    return out


def bench_lines(stats: StatsFile, group: str) -> list[str]:
    """What a detection set's statistics rest on: frames and sessions per split, and each session's
    micro P/R per model (intervals over frames do not cover session-to-session variation; clustered
    by session, they do)."""
    bench = stats.benches.get(group)
    if not bench:
        return []
    out = [""]
    for split, b in bench["splits"].items():
        sessions = b["sessions"]
        cover = ("its intervals and tests treat the sessions as the independent units, so they cover "
                 "session-to-session variation" if bench["cluster"] == "session" else
                 "its intervals do not cover session-to-session variation")
        out.append(f"Split `{split}` rests on {b['frames']} frames from {len(sessions)} capture session"
                   f"{'s' if len(sessions) != 1 else ''}, units clustered by {bench['cluster']}: {cover}. "
                   "Micro precision / recall per session: " +
                   "; ".join(f"{md_text(s)} (" + ", ".join(f"{m} {_pr(v)}" for m, v in models.items()) + ")"
                             for s, models in sessions.items()))
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


def render_report(stats: StatsFile, gate: GateResult | None, *, forest: str | None) -> tuple[str, dict[str, str]]:
    """The human report (Markdown) and its detail files (name -> text, under ``details/``): a
    one-screen summary, the gate, then a link per candidate. ``forest``: the folder of the forest
    plots (``forest-<group>.png``) relative to the report."""
    out = ["# candor: rates, paired comparisons" + (" and the release gate" if gate is not None else ""), "",
           f"Every rate carries its {stats.confidence:.0%} interval over independent clusters ({cluster_kinds(stats)}"
           f"): the Wilson interval, at the effective sample size where units cluster. Every "
           f"comparison is paired on the same units and tested with the exact sign-flip test over clusters "
           f"(alpha {stats.alpha:g}; with one unit per cluster, the exact McNemar test). A split of clusters all one "
           f"way needs at least {stats.min_k0} of them to reach alpha at all, so small benches detect "
           "regressions and find failures; they do not rank close candidates. There is no leaderboard here "
           "on purpose.", ""]
    if stats.absent:
        out += ["**Not measured** (input absent): " + ", ".join(f"`{p}`" for p in stats.absent), ""]
    out += summary(stats, gate)
    if forest:
        out += ["Forest plots of the headline rates (rendered locally by `candor figures`; PNG bytes depend on the "
                "matplotlib build, so they are not committed): " +
                ", ".join(f"[{g}]({forest}/forest-{g}.png)" for g in track_groups(stats)), ""]
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
                     f"{'n/a' if k.max_drop is None else f'{k.max_drop:.3f}'} |")
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
    text += "\n".join(environment_lines(docs, lots, reference))
    text += "\n".join(consistency_lines(docs, lots, escape=md_text))     # what the runs buy
    for name, lines in report_lines(docs, sets).items():       # what kind of error changed: descriptive
        text += "\n".join(lines) + "\n"
        for cand in sets[name][1:]:
            key = detail_name(f"detection.{name}", cand)
            if key in details:
                details[key] += "\n" + "\n".join(lines) + "\n"
    return head, text, details
