"""What the runs buy on a per-field bench: each candidate's run-to-run consistency beside its majority rate.

A per-field bench (``metrics/fields/<candidate>.json``, :mod:`candor_eval.lots.field_scoring`) answers
every case N times (``identify.runs``). The runs enter the statistics in two ways, and only two:

* **the paired test** (``fields.majority``) has one unit per scored (case, field): *met* when a strict
  majority of its answered runs hit, so 3 of 5 and 5 of 5 are both one "met";
* **the consistency table** (this module, descriptive): per candidate, the per-run hits summed over
  the scored (case, field) pairs (``hits / answered runs``: the runs of one case are not independent,
  so this rate has no interval), the pairs whose answered runs all agree (*unanimous*: every run hit,
  or none did), and the pairs met by a split vote (met, not unanimous: a change of one or two runs
  would flip them).

A scored pair is one with at least one answered run (``total`` > 0). Pure, no I/O.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from candor_eval.common.majority import strict_majority


@dataclass(frozen=True)
class Consistency:
    """One candidate's figures (module docstring)."""

    runs: tuple[int, ...]       # the distinct run counts of its cases
    pairs: int                  # scored (case, field) pairs
    met: int                    # met by a strict majority of answered runs
    hits: int                   # per-run hits, summed
    answered: int               # answered runs, summed
    unanimous: int              # pairs whose answered runs all agree
    split_met: int              # met, not unanimous


def consistency(fields_doc: Mapping[str, Any]) -> Consistency:
    """The consistency of one ``metrics/fields/<candidate>.json`` document."""
    scored = [f for case in fields_doc.get("cases", {}).values() for f in case.get("fields", []) if f["total"]]
    runs = tuple(sorted({case["runs"] for case in fields_doc.get("cases", {}).values()}))
    unanimous = [f["hits"] in (0, f["total"]) for f in scored]
    met = [strict_majority(f["hits"], f["total"]) for f in scored]
    return Consistency(runs=runs, pairs=len(scored), met=sum(met), hits=sum(f["hits"] for f in scored),
                       answered=sum(f["total"] for f in scored), unanimous=sum(unanimous),
                       split_met=sum(m and not u for m, u in zip(met, unanimous, strict=True)))


def _share(k: int, n: int) -> str:
    return f"{k}/{n}" + (f" = {k / n:.3f}" if n else "")


def consistency_lines(docs: Mapping[str, tuple[str, Any]], candidates: Sequence[str], *,
                      escape: Callable[[str], str] = str) -> list[str]:
    """The report's section on what the runs buy (module docstring), one row per candidate with a fields
    document in ``docs`` (:func:`candor_eval.review.collect.read_metrics`, keys ``fields.<candidate>``);
    empty when none has one. ``escape`` makes a candidate's name safe in a table cell."""
    rows = [(c, consistency(doc)) for c in candidates if (doc := docs.get(f"fields.{c}", ("", None))[1])]
    if not rows:
        return []
    out = ["## What the runs buy (per-field bench)", "",
           "Each case is answered once per run. The paired test `fields.majority` counts one unit per (case, "
           "field), met when a strict majority of its answered runs hit: 3 of 5 and 5 of 5 are both one \"met\". "
           "The runs themselves enter only here, descriptively: per-run hits (the runs of one case are not "
           "independent, so no interval), the pairs on which every run agreed, and the pairs met by a split "
           "vote, which one or two runs would flip (docs/stats.md, \"What the runs buy\").", "",
           "| candidate | runs per case | (case, field) met by majority | per-run hits | unanimous pairs "
           "| met by a split vote |", "|---|---|---|---|---|---|"]
    out += [f"| {escape(c)} | {', '.join(map(str, x.runs)) or 'n/a'} | {_share(x.met, x.pairs)} "
            f"| {_share(x.hits, x.answered)} | {_share(x.unanimous, x.pairs)} | {_share(x.split_met, x.pairs)} |"
            for c, x in rows]
    return out + [""]
