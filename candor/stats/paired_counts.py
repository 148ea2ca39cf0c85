"""A paired comparison of counts per case, where fewer is better: the exact sign test.

Pure: no I/O. The unit of the detector's paired precision is a frame: each frame of a split
has a number of false positives under A (the reference) and under B (the candidate). Frames
where the counts are equal say nothing about which side is better; on the others the sign
test asks whether "B has fewer" and "A has fewer" are equally likely. Under that null the
number of frames where B has fewer is Binomial(d, 1/2) over the d frames that differ, so its
two-sided exact p-value is the exact McNemar p of ``(a_fewer, b_fewer)``
(:func:`candor.stats.rates.mcnemar_p`) and the verdict reads the same way
(:func:`candor.stats.paired.verdict`): ``B better`` when B has fewer on significantly more
frames. Why the sign test and not Wilcoxon's signed-rank test: docs/stats.md, "Paired precision".
Totals (``a_total``, ``b_total``) are reported for reading, never tested: a few frames with
many false positives must not pass for many frames with one each.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from candor.stats.paired import VERDICTS, Case, Verdict, verdict
from candor.stats.rates import mcnemar_p, min_k0
from candor.stats.records import decoded, p6


@dataclass(frozen=True)
class PairedCounts:
    """A against B on the ``n`` cases both have: count totals, the cases where each side has
    fewer, the sign test's ``p`` and verdict. Stored as ``{"unit", "n", "a_total", "b_total",
    "a_fewer", "b_fewer", "p", "alpha", "min_k0", "verdict", "only_in_a", "only_in_b"}`` (the
    cases present on one side only are counted, not named)."""

    unit: str
    n: int
    a_total: int
    b_total: int
    a_fewer: int
    b_fewer: int
    p: float
    alpha: float
    min_k0: int | None
    verdict: Verdict
    only_in_a: int = 0
    only_in_b: int = 0

    @property
    def explanation(self) -> str:
        """The verdict in words, with the counts it rests on."""
        return (f"{self.verdict}: B fewer on {self.b_fewer} {self.unit}s, A fewer on {self.a_fewer}, "
                f"equal on {self.n - self.a_fewer - self.b_fewer} (totals {self.a_total} vs {self.b_total})")

    def as_json(self) -> dict[str, Any]:
        """The stored form (see the class docstring)."""
        return {"unit": self.unit, "n": self.n, "a_total": self.a_total, "b_total": self.b_total,
                "a_fewer": self.a_fewer, "b_fewer": self.b_fewer, "p": p6(self.p), "alpha": self.alpha,
                "min_k0": self.min_k0, "verdict": self.verdict, "only_in_a": self.only_in_a,
                "only_in_b": self.only_in_b}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> PairedCounts:
        """Read :meth:`as_json`'s form back; another shape is an InputError naming ``where``."""
        def build() -> PairedCounts:
            if doc["verdict"] not in VERDICTS:
                raise ValueError(f"verdict {doc['verdict']!r}")
            ints = {k: int(doc[k]) for k in ("n", "a_total", "b_total", "a_fewer", "b_fewer", "only_in_a",
                                             "only_in_b")}
            return cls(unit=str(doc["unit"]), p=float(doc["p"]), alpha=float(doc["alpha"]),
                       min_k0=None if doc["min_k0"] is None else int(doc["min_k0"]), verdict=doc["verdict"],
                       **ints)
        return decoded(where, "a paired count comparison {unit, n, a_fewer, b_fewer, p, ...}", build)


def compare_counts(a: Mapping[Case, int], b: Mapping[Case, int], *, unit: str, alpha: float) -> PairedCounts:
    """Sign test of A's and B's counts (fewer is better) on their common cases of ``unit``.

    >>> r = compare_counts({("f1",): 3, ("f2",): 1, ("f3",): 0}, {("f1",): 0, ("f2",): 1, ("f4",): 2},
    ...                    unit="frame", alpha=0.05)
    >>> (r.n, r.a_total, r.b_total, r.a_fewer, r.b_fewer, r.p, r.only_in_a, r.only_in_b)
    (2, 4, 1, 0, 1, 1.0, 1, 1)
    """
    common = sorted(set(a) & set(b))
    a_fewer = sum(1 for c in common if a[c] < b[c])
    b_fewer = sum(1 for c in common if b[c] < a[c])
    return PairedCounts(unit=unit, n=len(common), a_total=sum(a[c] for c in common),
                        b_total=sum(b[c] for c in common), a_fewer=a_fewer, b_fewer=b_fewer,
                        p=mcnemar_p(a_fewer, b_fewer), alpha=alpha, min_k0=min_k0(alpha, n=len(common)),
                        verdict=verdict(a_fewer, b_fewer, alpha=alpha),
                        only_in_a=len(set(a) - set(b)), only_in_b=len(set(b) - set(a)))

