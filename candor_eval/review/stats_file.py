"""``metrics/stats.json``: the one writer and reader of the stats stage's output.

Shape (docs/stats.md)::

    {"confidence": 0.95, "alpha": 0.05, "min_k0": 6,
     "reference": {"<track>": "<name>", ...},   # e.g. identification: prompt-a, detection.<set>: its first model
     "inputs":  {"<path>": "present" | "absent", ...},
     "rates":   {"<key>": <Rate>, ...},
     "cluster": {"detection.<set>": "frame" | "session", "fields": "case"},
     "benches": {"detection.<set>": {"cluster": ..., "splits": {"<split>": {"frames": 32, "sessions":
                 {"<session>": {"<model>": {"frames", "tp", "fp", "fn", "precision", "recall"}}}}}}},
     "paired":  {"<metric>": {"reference": "<name>", "family": "<family>" | null,
                              "candidates": {"<name>": <Paired>, ...}}, ...},
     "power":   {"<headline metric>": {"<candidate>": <power>, ...}, ...}}

``<Rate>`` is :meth:`candor_eval.stats.rates.Rate.as_json` (its unit, cluster and interval),
``<Paired>`` is :meth:`candor_eval.stats.paired.Paired.as_json` (A = the reference, B = the
candidate; outcome and count comparisons alike, told apart by its ``kind``). ``family`` names
the metric's family of tests (:func:`candor_eval.stats.multiple.family`); each candidate's record then
holds its Holm-adjusted ``p_holm`` within it, and its verdict reads it (``null`` for a headline
test, which is not adjusted). ``<power>`` is :func:`candor_eval.stats.power.power_json`: what the
exact sign-flip test over the bench's own clusters could have detected (headline outcome tests).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from candor_eval.stats.paired import Paired
from candor_eval.stats.rates import Rate
from candor_eval.stats.records import decoded

Presence = Literal["present", "absent"]


@dataclass(frozen=True)
class Comparisons:
    """One paired metric: its ``reference`` (A) against each candidate (B), by candidate name, and
    its ``family`` (module docstring)."""

    reference: str
    candidates: dict[str, Paired]
    family: str | None = None


@dataclass(frozen=True)
class StatsFile:
    """The content of ``metrics/stats.json`` (module docstring)."""

    confidence: float
    alpha: float
    min_k0: int | None
    reference: dict[str, str]            # track -> its reference (candor_eval.review.collect.references)
    inputs: dict[str, Presence]
    rates: dict[str, Rate]
    paired: dict[str, Comparisons]
    cluster: dict[str, str] = field(default_factory=dict)     # track -> what its units cluster in
    benches: dict[str, Any] = field(default_factory=dict)     # detection track -> its frames and sessions
    power: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)   # metric -> candidate -> power
    precision: dict[str, Any] = field(default_factory=dict)   # paired micro precision (review.collect.precision_stats)

    @property
    def absent(self) -> list[str]:
        """Inputs that were absent (their track is not measured), sorted."""
        return sorted(p for p, state in self.inputs.items() if state == "absent")

    def as_json(self) -> dict[str, Any]:
        """The stored form, keys sorted within each section."""
        return {
            "confidence": self.confidence, "alpha": self.alpha, "min_k0": self.min_k0,
            "reference": dict(sorted(self.reference.items())),
            "inputs": dict(sorted(self.inputs.items())),
            "cluster": dict(sorted(self.cluster.items())),
            "benches": self.benches,
            "rates": {k: r.as_json() for k, r in sorted(self.rates.items())},
            "paired": {m: {"reference": c.reference, "family": c.family,
                           "candidates": {n: p.as_json() for n, p in sorted(c.candidates.items())}}
                       for m, c in sorted(self.paired.items())},
            "power": {m: dict(sorted(by.items())) for m, by in sorted(self.power.items())},
            "precision": self.precision,
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
                reference={str(t): str(r) for t, r in doc["reference"].items()}, inputs=inputs,
                rates={k: Rate.from_json(r, where=f"{where}:rates.{k}") for k, r in doc["rates"].items()},
                paired={m: Comparisons(str(c["reference"]),
                                       {n: Paired.from_json(p, where=f"{where}:paired.{m}.{n}")
                                        for n, p in c["candidates"].items()},
                                       family=None if c["family"] is None else str(c["family"]))
                        for m, c in doc["paired"].items()},
                cluster={str(t): str(c) for t, c in doc["cluster"].items()},
                benches=dict(doc["benches"]),
                power={str(m): {str(c): dict(p) for c, p in by.items()} for m, by in doc.get("power", {}).items()},
                precision=dict(doc["precision"]),
            )
        return decoded(where, "a stats file (written by the stats stage)", build)
