"""The keys of sections owned by other stages that the gate reads (from the params file), and
:class:`GateSettings`, everything the gate reads from params in one value (read by the stages).

Read-only views: ``extra="ignore"`` (the rest of the section is its owner's), defaults are the
owners' (:data:`candor_eval.stats.rates.CONFIDENCE`, :data:`candor_eval.detection.match_defaults.MIN_SUPPORT`).

And the gate's view on a terminal (:func:`render_console`, ``candor gate check``): each criterion's
status and name on a line of their own, what it says (note, B - A, both sides, classes) wrapped and
indented below, every line in 100 columns, colour only on a terminal that has not asked for none
(:func:`wants_colour`).
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from pydantic import BaseModel, ConfigDict, Field

from candor_eval.common.params import Integer, Probability
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.match_defaults import MIN_SUPPORT
from candor_eval.review.gate_result import ClassResult, Criterion, GateResult
from candor_eval.review.params import Cluster, DeclaredGate
from candor_eval.stats.rates import CONFIDENCE, fmt_count


class StatsView(BaseModel):
    """The keys of the ``stats`` section the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
    confidence: Probability = CONFIDENCE
    cluster: Cluster = Cluster()


class MatchView(BaseModel):
    """The two keys of the ``match`` section (owned by the score stage) the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
    critical: list[str] = []
    min_support: Integer = Field(default=MIN_SUPPORT, ge=0)


@dataclass(frozen=True)
class GateSettings:
    """The params the gate reads: its own section ``gate`` (its set and models resolved:
    ``candor_eval.stages.cli_review.resolve_gate``), the views of ``stats`` and ``match``, and
    ``detector`` (whose sets name the gate's models); ``where`` names the params file, in errors
    and in ``gate.json`` (``predeclared``)."""

    gate: DeclaredGate
    stats: StatsView
    match: MatchView
    detector: DetectorParams
    where: str


# --- the gate on a terminal (``candor gate check``) ---

WIDTH = 100
COLOURS = {"pass": "32", "fail": "31", "not evaluated": "33", "waived": "2"}     # ANSI: green, red, yellow, dim
STATUS = {"pass": "pass", "fail": "FAIL", "not evaluated": "NOT EVALUATED", "waived": "waived"}


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour else text


def drop_words(max_drop: float) -> str:
    """The largest recall drop a class's data allow, in words: a drop when positive, else a gain (never a
    negative "drop").

    >>> drop_words(0.099), drop_words(-0.069), drop_words(0.0)
    ('drop up to 0.099', 'no drop: a gain of at least 0.069', 'no drop')
    """
    if max_drop > 0:
        return f"drop up to {max_drop:.3f}"
    return "no drop" + (f": a gain of at least {-max_drop:.3f}" if max_drop < 0 else "")


def drop_cell(max_drop: float) -> str:
    """:func:`drop_words` for a table column of the largest drop allowed.

    >>> drop_cell(0.155), drop_cell(-0.069)
    ('0.155', 'none (gain >= 0.069)')
    """
    return f"{max_drop:.3f}" if max_drop > 0 else "none" + (f" (gain >= {-max_drop:.3f})" if max_drop < 0 else "")


def _drop(r: ClassResult) -> str:
    """A class's recall drop in words, in parentheses ("" without an interval)."""
    if r.max_drop is None:
        return ""
    return f" (recall {drop_words(r.max_drop)})" if r.max_drop > 0 else f" ({drop_words(r.max_drop)})"


def criterion_lines(name: str, c: Criterion) -> list[str]:
    """What a criterion says, one item a line, unwrapped: its note, then B - A with its interval and p, the
    two sides, the limit or margin, the tally and the classes (each class with its status)."""
    lines = [c.note] if c.note else []
    if c.diff is not None:
        ci = "" if c.diff_lo is None or c.diff_hi is None else f" [{c.diff_lo:+.3f}, {c.diff_hi:+.3f}]"
        lines.append(f"B - A = {c.diff:+.3f}{ci}" + ("" if c.p is None else f", p = {c.p:.3g}"))
    for side, value, rate in (("A (reference)", c.reference, c.reference_rate),
                              ("B (candidate)", c.candidate, c.candidate_rate)):
        if rate is not None:
            lines.append(f"{side}: {fmt_count(rate)}")
        elif value is not None:
            lines.append(f"{side}: {value:g}")
    if c.bound is not None:
        lines.append(f"95% upper bound: {c.bound:g} ms")
    if c.limit is not None:
        lines.append({"critical_recall_non_inferior": f"margin: {c.limit:g}",
                      "inference_latency_no_increase": f"tolerance: {c.limit:.0%}"}.get(name, f"limit: {c.limit:g} ms"))
    if c.tally:
        lines.append("; ".join(f"{k}: {v}" for k, v in c.tally.items()))
    if c.split is not None:
        lines.append(f"split: {c.split}")
    if c.classes:
        lines += [f"class {n}: {r.status}{_drop(r)}" for n, r in c.classes.items()]
    return lines


def verdict_line(gate: GateResult) -> str:
    """``PASSED``, or the verdict with the failed and the pending criteria named."""
    named = "; ".join(f"{what}: {', '.join(names)}" for what, names in (("failed", gate.failed),
                                                                       ("pending", gate.pending)) if names)
    if gate.verdict == "NOT EVALUATED" and not named:
        named = "every criterion waived: nothing was checked"
    return gate.verdict + (f" ({named})" if named else "")


def render_console(gate: GateResult, *, colour: bool = False, width: int = WIDTH) -> str:
    """``candor gate check``: the declared comparison, then each criterion, its status and name on one line
    and what it says below, wrapped and indented, then the verdict; every line at most ``width``
    columns; ``colour``: the statuses and the verdict in ANSI colour (a terminal that wants it)."""
    def fill(text: str, indent: str) -> str:
        return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ",
                             break_on_hyphens=False, break_long_words=False)

    mode = (" (no noise control: a point estimate passes)" if gate.improvement == "higher"
            else " (each micro difference must reach alpha)")
    out = [fill(f"release gate: {gate.candidate} (B) vs {gate.reference} (A) on set {gate.set}, split {gate.split}, "
                f"units clustered by {gate.cluster}", ""),
           fill(f"predeclared in {gate.predeclared}: improvement {gate.improvement}{mode}; critical recall drop "
                f"margin {gate.max_recall_drop:g}; unqualified critical classes {gate.unqualified}; waived: "
                f"{', '.join(gate.waive) or 'none'}", "  ")]
    tag = max(map(len, STATUS.values()))
    for name, c in gate.criteria.items():
        out += ["", _paint(f"{STATUS[c.status]:<{tag}}", COLOURS[c.status], colour) + f"  {name}"]
        out += [fill(line, " " * (tag + 2)) for line in criterion_lines(name, c)]
    tone = {"PASSED": "pass", "FAILED": "fail"}.get(gate.verdict, "not evaluated")
    out += ["", _paint(fill(verdict_line(gate), ""), COLOURS[tone], colour)]
    return "\n".join(out) + "\n"


def wants_colour(stream: TextIO, env: Mapping[str, str]) -> bool:
    """ANSI colour for ``stream``: a terminal, and no ``NO_COLOR`` (set and not empty: no-color.org) in ``env``."""
    return stream.isatty() and not env.get("NO_COLOR")
