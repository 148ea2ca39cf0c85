"""Two revisions compared case by case: every paired metric and candidate, A = the first, B = the second.

Pure: no I/O. Both sides are the paired units of their outcome tables
(:func:`candor.stats.units.units_from_tables`); for each (metric, candidate) present on both
sides the cases common to both are compared (:func:`candor.stats.paired.compare_paired`). A
metric or candidate present on one side only is a :class:`Row` with status ``only in A`` /
``only in B`` and no comparison: nothing is dropped silently. A row of a family of tests
(:func:`candor.stats.multiple.family`) carries its Holm-adjusted p within the family (same
candidate) and its verdict is read from it. Per-frame false-positive counts are compared by the
sign test (:func:`compare_count_units`, :mod:`candor.stats.paired_counts`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from candor.stats.multiple import family, holm_by_family
from candor.stats.paired import Case, Paired, compare_paired, verdict
from candor.stats.paired_counts import PairedCounts, compare_counts
from candor.stats.report import fmt_count
from candor.stats.units import CountUnits, Units

Status = Literal["compared", "only in A", "only in B"]


@dataclass(frozen=True)
class Row:
    """One (metric, candidate) across the two revisions; ``paired`` is ``None`` unless ``compared``."""

    metric: str
    candidate: str
    status: Status
    paired: Paired | None
    p_holm: float | None = None

    @property
    def explanation(self) -> str:
        """The verdict in words: from the Holm-adjusted p in a family, else the raw comparison's."""
        r = self.paired
        if r is None:
            return f"{self.status}: not compared"
        if self.p_holm is None:
            return r.explanation
        adjusted = verdict(r.a_only, r.b_only, alpha=r.alpha) if self.p_holm <= r.alpha else "no detectable difference"
        return f"{adjusted} (Holm p = {self.p_holm:.4g} in {family(self.metric)})"

    def as_json(self) -> dict[str, Any]:
        """``{"metric", "candidate", "status", "paired", "p_holm"}`` (``paired``: :meth:`Paired.as_json`
        or ``null``; ``p_holm``: ``null`` outside a family)."""
        return {"metric": self.metric, "candidate": self.candidate, "status": self.status,
                "paired": None if self.paired is None else self.paired.as_json(), "p_holm": self.p_holm}


@dataclass(frozen=True)
class CountRow:
    """One count metric and candidate across the two revisions (sign test); ``None`` unless compared."""

    metric: str
    candidate: str
    status: Status
    counts: PairedCounts | None

    def as_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "candidate": self.candidate, "status": self.status,
                "counts": None if self.counts is None else self.counts.as_json()}


def sides(a: Mapping, b: Mapping) -> list[tuple[tuple[str, str], Status]]:
    """Every key of either revision, sorted, with where it is: ``compared`` (both), ``only in A``/``B``."""
    return [(key, "compared" if key in a and key in b else "only in A" if key in a else "only in B")
            for key in sorted(set(a) | set(b))]


def compare_units(a: Mapping[str, Units], b: Mapping[str, Units], *, alpha: float, confidence: float) -> list[Row]:
    """Pair every (metric, candidate) of revision A (track -> units) with the same of revision B."""
    def flat(side: Mapping[str, Units]) -> dict[tuple[str, str], tuple[str, dict[Case, bool]]]:
        return {(m, c): (pm.unit, cases) for units in side.values() for m, pm in units.items()
                for c, cases in pm.outcomes.items()}
    flat_a, flat_b = flat(a), flat(b)
    rows = [Row(*key, status, None if status != "compared" else
                compare_paired(flat_a[key][1], flat_b[key][1], unit=flat_a[key][0], alpha=alpha,
                               confidence=confidence))
            for key, status in sides(flat_a, flat_b)]
    return with_holm(rows)


def with_holm(rows: Sequence[Row]) -> list[Row]:
    """``rows`` with the Holm-adjusted p of each compared row that belongs to a family."""
    adjusted = holm_by_family({(r.metric, r.candidate): r.paired.p for r in rows if r.paired is not None})
    return [Row(r.metric, r.candidate, r.status, r.paired, adjusted.get((r.metric, r.candidate))) for r in rows]


def compare_count_units(a: Mapping[str, CountUnits], b: Mapping[str, CountUnits], *, alpha: float) -> list[CountRow]:
    """Pair every (count metric, candidate) of revision A with the same of revision B (sign test)."""
    def flat(side: Mapping[str, CountUnits]) -> dict[tuple[str, str], tuple[str, dict[Case, int]]]:
        return {(m, c): (cm.unit, cases) for units in side.values() for m, cm in units.items()
                for c, cases in cm.counts.items()}
    flat_a, flat_b = flat(a), flat(b)
    return [CountRow(*key, status, None if status != "compared" else
                     compare_counts(flat_a[key][1], flat_b[key][1], unit=flat_a[key][0], alpha=alpha))
            for key, status in sides(flat_a, flat_b)]


def _unpaired(r: Paired, limit: int = 8) -> str:
    parts = []
    for side, cases in (("A", r.only_in_a), ("B", r.only_in_b)):
        if cases:
            more = f" (+{len(cases) - limit} more)" if len(cases) > limit else ""
            parts.append(f"{len(cases)} only in {side}: {', '.join(cases[:limit])}{more}")
    return "; ".join(parts)


def render_text(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                absent: Sequence[str], count_rows: Sequence[CountRow] = ()) -> str:
    """Plain report: one block per (metric, candidate), then the count comparisons."""
    lines = [f"A = {rev_a}, B = {rev_b}; Wilson {confidence:.0%} intervals; exact McNemar, alpha {alpha:g}"]
    lines += [f"note: {note}" for note in absent]
    for row in rows:
        lines += ["", f"{row.metric}  [{row.candidate}]"]
        r = row.paired
        if r is None:
            lines.append(f"  {row.status}: not compared")
            continue
        lines += [f"  A  {fmt_count(r.a)}", f"  B  {fmt_count(r.b)}",
                  f"  discordant: A only {r.a_only}, B only {r.b_only}; p = {r.p:.4g}", f"  {row.explanation}"]
        if r.only_in_a or r.only_in_b:
            lines.append(f"  unpaired: {_unpaired(r)}")
    for c in count_rows:
        lines += ["", f"{c.metric}  [{c.candidate}]  (fewer is better; sign test per {c.counts.unit if c.counts else 'case'})",
                  f"  {c.status}: not compared" if c.counts is None else f"  {c.counts.explanation}; p = {c.counts.p:.4g}"]
    return "\n".join(lines) + "\n"


def render_markdown(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                    absent: Sequence[str], count_rows: Sequence[CountRow] = ()) -> str:
    """A Markdown table fit for a review comment."""
    out = [f"**{rev_a}** (A) vs **{rev_b}** (B): paired per case; Wilson {confidence:.0%} intervals; "
           f"exact McNemar on discordant cases, alpha {alpha:g}.", ""]
    out += [f"> {note}" for note in absent]
    if absent:
        out.append("")
    out += ["| metric | candidate | A | B | A only | B only | p | verdict | unpaired |",
            "|---|---|---|---|---:|---:|---:|---|---|"]
    for row in rows:
        r = row.paired
        if r is None:
            out.append(f"| {row.metric} | {row.candidate} | | | | | | {row.status}: not compared | |")
        else:
            out.append(f"| {row.metric} | {row.candidate} | {fmt_count(r.a)} | {fmt_count(r.b)} | "
                       f"{r.a_only} | {r.b_only} | {r.p:.4g} | {row.explanation} | {_unpaired(r)} |")
    if count_rows:
        out += ["", "Counts per case, fewer is better (exact sign test on the cases where A and B differ):", "",
                "| metric | candidate | total A | total B | A fewer | B fewer | p | verdict |",
                "|---|---|---:|---:|---:|---:|---:|---|"]
        for c in count_rows:
            k = c.counts
            out.append(f"| {c.metric} | {c.candidate} | | | | | | {c.status}: not compared |" if k is None else
                       f"| {c.metric} | {c.candidate} | {k.a_total} | {k.b_total} | {k.a_fewer} | {k.b_fewer} | "
                       f"{k.p:.4g} | {k.verdict} |")
    return "\n".join(out) + "\n"
