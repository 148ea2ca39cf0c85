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
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from candor_eval.review.report import fmt_count
from candor_eval.stats.paired import Paired, compare_paired, fmt_diff, holm_adjusted
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


def render_text(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                absent: Sequence[str], everything: bool = False) -> str:
    """Plain report: one block per changed (metric, candidate), most changed first."""
    listed, folded = shown(rows, everything=everything)
    lines = [f"A = {rev_a}, B = {rev_b}; {confidence:.0%} intervals over independent clusters; exact sign-flip "
             f"test over clusters, alpha {alpha:g}"]
    lines += [f"note: {note}" for note in absent]
    for row in listed:
        lines += ["", f"{row.metric}  [{row.candidate}]"]
        r = row.paired
        if r is None:
            lines.append(f"  {row.status}: not compared")
            continue
        lines += [f"  {fmt_diff(r)}", f"  A  {fmt_count(r.a)}", f"  B  {fmt_count(r.b)}", f"  {r.explanation}"]
        if r.only_in_a or r.only_in_b:
            lines.append(f"  unpaired: {_unpaired(r)}")
    if folded:
        lines += ["", _folded(folded)]
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
