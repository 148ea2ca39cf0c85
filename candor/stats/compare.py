"""Two revisions compared case by case: every paired metric and candidate, A = the first, B = the second.

Pure: no I/O. Both sides are the paired units of their outcome tables
(:func:`candor.stats.units.units_from_tables`); for each (metric, candidate) present on both
sides the cases common to both are compared (:func:`candor.stats.paired.compare_paired`). A
metric or candidate present on one side only is a :class:`Row` with status ``only in A`` /
``only in B`` and no comparison: nothing is dropped silently.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from candor.stats.paired import Case, Paired, compare_paired
from candor.stats.report import fmt_count
from candor.stats.units import Units

Status = Literal["compared", "only in A", "only in B"]


@dataclass(frozen=True)
class Row:
    """One (metric, candidate) across the two revisions; ``paired`` is ``None`` unless ``compared``."""

    metric: str
    candidate: str
    status: Status
    paired: Paired | None

    def as_json(self) -> dict[str, Any]:
        """``{"metric", "candidate", "status", "paired"}`` (``paired``: :meth:`Paired.as_json` or ``null``)."""
        return {"metric": self.metric, "candidate": self.candidate, "status": self.status,
                "paired": None if self.paired is None else self.paired.as_json()}


def compare_units(a: Mapping[str, Units], b: Mapping[str, Units], *, alpha: float, confidence: float) -> list[Row]:
    """Pair every (metric, candidate) of revision A (track -> units) with the same of revision B."""
    def flat(side: Mapping[str, Units]) -> dict[tuple[str, str], tuple[str, dict[Case, bool]]]:
        return {(m, c): (pm.unit, cases) for units in side.values() for m, pm in units.items()
                for c, cases in pm.outcomes.items()}
    flat_a, flat_b = flat(a), flat(b)
    rows = []
    for key in sorted(set(flat_a) | set(flat_b)):
        metric, cand = key
        if key not in flat_b:
            rows.append(Row(metric, cand, "only in A", None))
        elif key not in flat_a:
            rows.append(Row(metric, cand, "only in B", None))
        else:
            (unit, cases_a), (_, cases_b) = flat_a[key], flat_b[key]
            rows.append(Row(metric, cand, "compared",
                            compare_paired(cases_a, cases_b, unit=unit, alpha=alpha, confidence=confidence)))
    return rows


def _unpaired(r: Paired, limit: int = 8) -> str:
    parts = []
    for side, cases in (("A", r.only_in_a), ("B", r.only_in_b)):
        if cases:
            more = f" (+{len(cases) - limit} more)" if len(cases) > limit else ""
            parts.append(f"{len(cases)} only in {side}: {', '.join(cases[:limit])}{more}")
    return "; ".join(parts)


def render_text(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                absent: Sequence[str]) -> str:
    """Plain report: one block per (metric, candidate)."""
    lines = [f"A = {rev_a}, B = {rev_b}; Wilson {confidence:.0%} intervals; exact McNemar, alpha {alpha:g}"]
    lines += [f"note: {note}" for note in absent]
    for row in rows:
        lines += ["", f"{row.metric}  [{row.candidate}]"]
        r = row.paired
        if r is None:
            lines.append(f"  {row.status}: not compared")
            continue
        lines += [f"  A  {fmt_count(r.a)}", f"  B  {fmt_count(r.b)}",
                  f"  discordant: A only {r.a_only}, B only {r.b_only}; p = {r.p:.4g}", f"  {r.explanation}"]
        if r.only_in_a or r.only_in_b:
            lines.append(f"  unpaired: {_unpaired(r)}")
    return "\n".join(lines) + "\n"


def render_markdown(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                    absent: Sequence[str]) -> str:
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
                       f"{r.a_only} | {r.b_only} | {r.p:.4g} | {r.explanation} | {_unpaired(r)} |")
    return "\n".join(out) + "\n"
