"""``metrics/stats.json``: the one writer and reader of the stats stage's output.

Shape (docs/stats.md)::

    {"confidence": 0.95, "alpha": 0.05, "min_k0": 6,
     "reference": {"<track>": "<name>", ...},   # e.g. identification: prompt-a, detection.<set>: its first model
     "inputs":  {"<path>": "present" | "absent", ...},
     "rates":   {"<key>": <Rate>, ...},
     "paired":  {"<metric>": {"reference": "<name>", "family": "<family>" | null,
                              "candidates": {"<name>": <Paired>, ...}, "p_holm": {"<name>": p, ...}}, ...},
     "paired_counts": {"<metric>": {"reference": "<name>", "candidates": {"<name>": <PairedCounts>}}, ...}}

``<Rate>`` is :meth:`candor.stats.rates.Rate.as_json`, ``<Paired>`` is
:meth:`candor.stats.paired.Paired.as_json`, ``<PairedCounts>`` is
:meth:`candor.stats.paired_counts.PairedCounts.as_json` (A = the reference, B = the candidate).
``family`` names the metric's family of tests (:func:`candor.stats.multiple.family`) and
``p_holm`` holds each candidate's Holm-adjusted p within it (empty for a headline test, which is
not adjusted).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from candor.stats.paired import Paired
from candor.stats.paired_counts import PairedCounts
from candor.stats.rates import Rate
from candor.stats.records import decoded, p6

Presence = Literal["present", "absent"]


@dataclass(frozen=True)
class Comparisons:
    """One paired metric: its ``reference`` (A) against each candidate (B), by candidate name; its
    ``family`` and each candidate's Holm-adjusted p within it (module docstring)."""

    reference: str
    candidates: dict[str, Paired]
    family: str | None = None
    p_holm: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CountComparisons:
    """One paired count metric: its ``reference`` (A) against each candidate (B)."""

    reference: str
    candidates: dict[str, PairedCounts]


@dataclass(frozen=True)
class StatsFile:
    """The content of ``metrics/stats.json`` (module docstring)."""

    confidence: float
    alpha: float
    min_k0: int | None
    reference: dict[str, str]            # track -> its reference (candor.stats.collect.references)
    inputs: dict[str, Presence]
    rates: dict[str, Rate]
    paired: dict[str, Comparisons]
    paired_counts: dict[str, CountComparisons] = field(default_factory=dict)

    @property
    def absent(self) -> list[str]:
        """Inputs that were absent (their track is not measured), sorted."""
        return [p for p, state in self.inputs.items() if state == "absent"]

    def as_json(self) -> dict[str, Any]:
        """The stored form, keys sorted within each section."""
        return {
            "confidence": self.confidence, "alpha": self.alpha, "min_k0": self.min_k0,
            "reference": dict(sorted(self.reference.items())),
            "inputs": dict(sorted(self.inputs.items())),
            "rates": {k: r.as_json() for k, r in sorted(self.rates.items())},
            "paired": {m: {"reference": c.reference, "family": c.family,
                           "candidates": {n: p.as_json() for n, p in sorted(c.candidates.items())},
                           "p_holm": {n: p6(p) for n, p in sorted(c.p_holm.items())}}
                       for m, c in sorted(self.paired.items())},
            "paired_counts": {m: {"reference": c.reference,
                                  "candidates": {n: p.as_json() for n, p in sorted(c.candidates.items())}}
                              for m, c in sorted(self.paired_counts.items())},
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> StatsFile:
        """Read :meth:`as_json`'s form back; another shape is an InputError naming ``where``."""
        def build() -> StatsFile:
            inputs = {str(p): s for p, s in doc["inputs"].items()}
            if set(inputs.values()) - {"present", "absent"}:
                raise ValueError("inputs must be present or absent")
            return cls(
                confidence=float(doc["confidence"]), alpha=float(doc["alpha"]),
                min_k0=None if doc["min_k0"] is None else int(doc["min_k0"]),
                reference={str(t): str(r) for t, r in doc["reference"].items()}, inputs=inputs,  # type: ignore[arg-type]
                rates={k: Rate.from_json(r, where=f"{where}:rates.{k}") for k, r in doc["rates"].items()},
                paired={m: Comparisons(str(c["reference"]),
                                       {n: Paired.from_json(p, where=f"{where}:paired.{m}.{n}")
                                        for n, p in c["candidates"].items()},
                                       family=None if c["family"] is None else str(c["family"]),
                                       p_holm={str(n): float(p) for n, p in c["p_holm"].items()})
                        for m, c in doc["paired"].items()},
                paired_counts={m: CountComparisons(str(c["reference"]), {
                                   n: PairedCounts.from_json(p, where=f"{where}:paired_counts.{m}.{n}")
                                   for n, p in c["candidates"].items()})
                               for m, c in doc["paired_counts"].items()},
            )
        return decoded(where, "a stats file (written by the stats stage)", build)
