"""Two revisions compared case by case: every paired metric and candidate, A = the first, B = the second.

Pure: no I/O. Both sides are the paired units of their outcome tables
(:func:`candor_eval.stats.units.units_from_tables`, clustered as ``stats.cluster`` declares); for each
(metric, candidate) present on both sides the units common to both are compared
(:func:`candor_eval.stats.paired.compare_paired`: the sign-flip test over clusters, outcome or count
alike). A metric or candidate present on one side only is a :class:`Row` with status ``only in
A`` / ``only in B`` and no comparison: nothing is dropped silently. A row of a family of tests
(:func:`candor_eval.stats.multiple.family`) carries its Holm-adjusted p within the family (same
candidate) and its verdict is read from it.

The reports list only what changed (a row where some paired unit differs), most changed first
(the most units that changed), each with its difference and cluster interval first and the test
second; the unchanged rows are folded into one count line (``--all`` lists them too).

The plain report (:func:`render_text`, 100 columns) groups the rows it lists into blocks of one
track (:func:`track`: ``detection.<set>.<split>``, ``identification``, ...) and one measure (a rate
of labels, a count per frame, ...; :func:`measure`), so that only differences of one unit are ranked
together: within a block by the size of B - A (the largest first), and the block's head says once what
B - A is. The rows the params diff touched come first, in a block of their own
(:func:`params_changes`, :func:`touched`: a changed key such as ``thresholds.deer`` touches the rows
that name ``deer``; ``thresholds_by_model.demo-v2.deer`` only those of ``demo-v2``).
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from candor_eval.stats.paired import Paired, compare_paired, fmt_diff, holm_adjusted
from candor_eval.stats.rates import fmt_count
from candor_eval.stats.units import PairedMetric, Units

Status = Literal["compared", "only in A", "only in B"]


@dataclass(frozen=True)
class Row:
    """One (metric, candidate) across the two revisions; ``paired`` is ``None`` unless ``compared``."""

    metric: str
    candidate: str
    status: Status
    paired: Paired | None

    @property
    def changed(self) -> bool:
        """Some paired unit differs between the revisions (or the row is on one side only)."""
        return self.paired is None or self.paired.a_only + self.paired.b_only > 0

    @property
    def explanation(self) -> str:
        """The verdict in words (from the Holm-adjusted p in a family, :class:`Paired`)."""
        return f"{self.status}: not compared" if self.paired is None else self.paired.explanation

    def as_json(self) -> dict[str, Any]:
        """``{"metric", "candidate", "status", "paired"}`` (``paired``: :meth:`Paired.as_json` or ``null``)."""
        return {"metric": self.metric, "candidate": self.candidate, "status": self.status,
                "paired": None if self.paired is None else self.paired.as_json()}


def sides(a: Mapping, b: Mapping) -> list[tuple[tuple[str, str], Status]]:
    """Every key of either revision, sorted, with where it is: ``compared`` (both), ``only in A``/``B``."""
    return [(key, "compared" if key in a and key in b else "only in A" if key in a else "only in B")
            for key in sorted(set(a) | set(b))]


def compare_units(a: Mapping[str, Units], b: Mapping[str, Units], *, alpha: float, confidence: float) -> list[Row]:
    """Pair every (metric, candidate) of revision A (track -> units) with the same of revision B
    (clustered as revision B clusters it)."""
    def flat(side: Mapping[str, Units]) -> dict[tuple[str, str], tuple[PairedMetric, dict]]:
        return {(m, c): (pm, cases) for units in side.values() for m, pm in units.items()
                for c, cases in pm.values.items()}
    flat_a, flat_b = flat(a), flat(b)
    rows = []
    for key, status in sides(flat_a, flat_b):
        paired = None
        if status == "compared":
            (ma, cases_a), (mb, cases_b) = flat_a[key], flat_b[key]
            of = {**(ma.cluster_of or {}), **(mb.cluster_of or {})} if mb.cluster_of is not None else None
            paired = compare_paired(cases_a, cases_b, unit=mb.unit, alpha=alpha, confidence=confidence,
                                    kind=mb.kind, cluster=mb.cluster, cluster_of=of)
        rows.append(Row(*key, status, paired))
    return adjusted_rows(rows)


def adjusted_rows(rows: Sequence[Row]) -> list[Row]:
    """``rows`` with the Holm-adjusted p (and the verdict it gives) of each compared row of a family."""
    adjusted = holm_adjusted({(r.metric, r.candidate): r.paired for r in rows if r.paired is not None})
    return [Row(r.metric, r.candidate, r.status, adjusted[(r.metric, r.candidate)]) if r.paired is not None else r
            for r in rows]


def shown(rows: Sequence[Row], *, everything: bool = False) -> tuple[list[Row], int]:
    """The rows a report lists, most changed first, and how many unchanged ones it folds
    (``everything``: none folded, in key order)."""
    if everything:
        return list(rows), 0
    changed = [r for r in rows if r.changed]
    changed.sort(key=lambda r: (-(r.paired.a_only + r.paired.b_only) if r.paired else 0, r.metric, r.candidate))
    return changed, len(rows) - len(changed)


def _unpaired(r: Paired, limit: int = 8) -> str:
    parts = []
    for side, cases in (("A", r.only_in_a), ("B", r.only_in_b)):
        if cases:
            more = f" (+{len(cases) - limit} more)" if len(cases) > limit else ""
            parts.append(f"{len(cases)} only in {side}: {', '.join(cases[:limit])}{more}")
    return "; ".join(parts)


def _folded(n: int) -> str:
    return (f"{n} unchanged row{'s' if n != 1 else ''} (every paired unit the same in A and B) not shown; "
            "--all lists them")


WIDTH = 100
CHANGES_SHOWN = 8      # params keys named in the report's head; the rest counted


def _short(value: Any, most: int = 24) -> str:
    """A params value as YAML-ish text, cut to ``most`` characters."""
    text = "null" if value is None else repr(value)
    return text if len(text) <= most else text[:most - 1] + "…"

Changes = Mapping[str, tuple[Any, Any]]     # dotted params key -> (value in A, value in B)


def _flat(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, Mapping):
        return {k: v for key, sub in tree.items() for k, v in _flat(sub, f"{prefix}{key}.").items()} or \
            ({prefix[:-1]: {}} if prefix else {})
    return {prefix[:-1]: tree}


def params_changes(a: Any, b: Any) -> dict[str, tuple[Any, Any]]:
    """Every dotted leaf key of two params trees whose value differs (absent: None), sorted.

    >>> params_changes({"thresholds": {"deer": 0.25, "boar": 0.3}}, {"thresholds": {"deer": 0.3, "boar": 0.3}})
    {'thresholds.deer': (0.25, 0.3)}
    """
    fa, fb = _flat(a or {}), _flat(b or {})
    return {k: (fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)}


def touched(row: Row, changes: Changes, *, candidates: set[str] | frozenset[str] = frozenset()) -> bool:
    """A changed key touches ``row`` when its last word (``deer`` of ``thresholds.deer``) names a part of
    the row's metric after its track (:func:`track`: ``class.deer.label_found``); a key that names one of
    ``candidates`` (``thresholds_by_model.demo-v2.deer``) touches that candidate's rows only.

    >>> r = Row("detection.d.test.class.deer.label_found", "demo-v1", "compared", None)
    >>> touched(r, {"thresholds.deer": (0.2, 0.3)}), touched(r, {"thresholds.boar": (0.2, 0.3)})
    (True, False)
    >>> touched(r, {"thresholds_by_model.demo-v2.deer": (0.2, 0.3)}, candidates={"demo-v1", "demo-v2"})
    False
    >>> touched(r, {"detector.sets.d": (["a"], ["a", "b"])})     # the set's name is the track, not a part
    False
    """
    parts = set(row.metric.removeprefix(track(row.metric)).split("."))
    for key in changes:
        words = key.split(".")[1:]
        named = [w for w in words if w in candidates]
        if (named and row.candidate not in named) or not words:
            continue
        if words[-1] not in candidates and words[-1] in parts:
            return True
    return False


def track(metric: str) -> str:
    """The track of a metric: ``detection.<set>.<split>`` for a detection metric, else its first part
    (none for a name of one part)."""
    parts = metric.split(".")
    return ".".join(parts[:3]) if parts[0] == "detection" and len(parts) > 3 else parts[0] if len(parts) > 1 else ""


def measure(r: Paired) -> str:
    """What B - A measures: ``label rate`` or ``per frame``, with the clusters when they are not the units."""
    what = f"{r.unit} rate" if r.kind == "outcome" else f"per {r.unit}"
    return what + ("" if r.cluster == r.unit else f", clustered by {r.cluster}")


def _size(row: Row) -> float:
    return 0.0 if row.paired is None or row.paired.diff is None else abs(row.paired.diff)


def blocks(rows: Sequence[Row], changes: Changes) -> list[tuple[str, list[Row]]]:
    """The listed ``rows`` in blocks (module docstring): the rows the params diff touched first, then one
    block per (track, measure) in that order, each by the size of B - A, the largest first; the rows on one side
    only last."""
    candidates = {r.candidate for r in rows}
    first = [r for r in rows if changes and r.paired is not None and touched(r, changes, candidates=candidates)]
    rest = [r for r in rows if r not in first]
    out: list[tuple[str, list[Row]]] = []
    if first:
        out.append(("touched by the params diff", sorted(first, key=lambda r: (track(r.metric), -_size(r)))))
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rest:
        key = (track(r.metric), measure(r.paired)) if r.paired is not None else (track(r.metric), "")
        groups.setdefault(key, []).append(r)
    for (name, what), members in sorted(groups.items(), key=lambda kv: (kv[0][1] == "", kv[0])):
        head = ": ".join(filter(None, (name, what or "on one side only")))
        out.append((head, sorted(members, key=lambda r: (-_size(r), r.metric, r.candidate))))
    return out


def _row_lines(row: Row, *, block_measure: str | None, width: int) -> list[str]:
    """One row: its metric and candidate, then B - A with its interval, the split and p and the verdict,
    then both sides (wrapped to ``width``)."""
    def fill(text: str) -> str:
        return textwrap.fill(text, width=width, initial_indent="  ", subsequent_indent="      ",
                             break_on_hyphens=False, break_long_words=False)

    r = row.paired
    if r is None:
        return [f"{row.metric}  [{row.candidate}]", f"  {row.status}: not compared"]
    what = measure(r)
    diff = "n/a" if r.diff is None else f"{r.diff:+.3f}"
    ci = "" if r.diff_lo is None or r.diff_hi is None else f" [{r.diff_lo:+.3f}, {r.diff_hi:+.3f}]"
    p = r.p if r.p_holm is None else r.p_holm
    test = f"{r.split}; {'Holm ' if r.p_holm is not None else ''}p = {p:.3g}: {r.verdict}"
    if r.verdict == "no detectable difference":
        test += (f" (even {r.clusters}-0 could not reach alpha)" if r.min_k0 is None
                 else f" (reaching alpha takes {r.min_k0}-0 of {r.clusters} {r.cluster}s)")
    lines = [f"{row.metric}  [{row.candidate}]",
             fill(f"{diff}{ci}" + ("" if what == block_measure else f" ({what})") + f"; {test}"),
             fill(f"A {fmt_count(r.a)}"), fill(f"B {fmt_count(r.b)}")]
    if r.only_in_a or r.only_in_b:
        lines.append(fill(f"unpaired: {_unpaired(r)}"))
    return lines


def render_text(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                absent: Sequence[str], everything: bool = False, changes: Changes | None = None,
                width: int = WIDTH) -> str:
    """Plain report in at most ``width`` columns: the changed rows in blocks (:func:`blocks`), each block
    headed by what its B - A is, and the params that changed between A and B (``changes``)."""
    changes = changes or {}
    listed, folded = shown(rows, everything=everything)

    def fill(text: str, indent: str = "") -> str:
        return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ",
                             break_on_hyphens=False, break_long_words=False)

    lines = [fill(f"A = {rev_a}, B = {rev_b}; {confidence:.0%} intervals over independent clusters; exact "
                  f"sign-flip test over clusters, alpha {alpha:g}")]
    lines += [fill(f"note: {note}") for note in absent]
    if changes:
        shown_keys = [f"{k} {_short(a)} -> {_short(b)}" for k, (a, b) in list(changes.items())[:CHANGES_SHOWN]]
        more = len(changes) - CHANGES_SHOWN
        lines.append(fill("params changed: " + ", ".join(shown_keys) + (f" (+{more} more keys)" if more > 0 else "")))
    for head, members in blocks(listed, changes):
        measures = {measure(r.paired) for r in members if r.paired is not None}
        one = next(iter(measures)) if len(measures) == 1 else None
        rule = f"== {head}" + (f"; each row: B - A [{confidence:.0%} interval]" if members[0].paired else "")
        lines += ["", fill(rule + (f" ({one})" if one and one not in head else "") + " ==")]
        for row in members:
            lines += ["", *_row_lines(row, block_measure=one, width=width)]
    if folded:
        lines += ["", fill(_folded(folded))]
    return "\n".join(lines) + "\n"


def render_markdown(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                    absent: Sequence[str], everything: bool = False) -> str:
    """A Markdown table fit for a review comment: changed rows, most changed first."""
    listed, folded = shown(rows, everything=everything)
    out = [f"**{rev_a}** (A) vs **{rev_b}** (B): paired per unit; {confidence:.0%} intervals over independent "
           f"clusters; exact sign-flip test over clusters, alpha {alpha:g}.", ""]
    out += [f"> {note}" for note in absent]
    if absent:
        out.append("")
    out += ["| metric | candidate | B - A [interval] | A | B | split | p | verdict | unpaired |",
            "|---|---|---|---|---|---|---:|---|---|"]
    for row in listed:
        r = row.paired
        if r is None:
            out.append(f"| {row.metric} | {row.candidate} | | | | | | {row.status}: not compared | |")
        else:
            p = r.p if r.p_holm is None else r.p_holm
            out.append(f"| {row.metric} | {row.candidate} | {fmt_diff(r)} | {fmt_count(r.a)} | {fmt_count(r.b)} | "
                       f"{r.split} | {p:.4g}{' (Holm)' if r.p_holm is not None else ''} | {r.verdict} | "
                       f"{_unpaired(r)} |")
    if folded:
        out += ["", _folded(folded)]
    return "\n".join(out) + "\n"
