"""A paired comparison of a reference A and a candidate B on the same cases: the one record.

Pure: no I/O. :func:`compare_paired` computes it; :class:`Paired` is what the ``stats`` stage
stores in ``metrics/stats.json`` (``paired``), what ``python -m stages.compare --json`` prints
(``rows[].paired``) and what the gate stores per class in ``metrics/gate.json``; one JSON shape
(:meth:`Paired.as_json`) for all three.

Definitions (docs/stats.md): each case is a success or not for each side. ``a_only`` = cases A
got right and B did not, ``b_only`` the reverse; concordant cases carry no information about
which is better. ``p`` is the exact McNemar p-value of ``(a_only, b_only)``
(:func:`candor.stats.rates.mcnemar_p`). The verdict is ``B better`` or ``B worse`` when
``p <= alpha`` (the side with more discordant successes), else ``no detectable difference``,
always told with the smallest k-0 split the bench could have seen (``min_k0`` at ``n`` cases).
Cases present on one side only are not compared; they are listed by name
(``/``-joined case key).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from candor.stats.rates import Rate, mcnemar_p, min_k0, wilson
from candor.stats.records import decoded, p6

Case = tuple[str, ...]
Verdict = Literal["B better", "B worse", "no detectable difference"]
VERDICTS: tuple[Verdict, ...] = ("B better", "B worse", "no detectable difference")


@dataclass(frozen=True)
class Paired:
    """A against B on the ``n`` cases both have.

    ``a``/``b``: each side's rate over the paired cases; ``a_only``/``b_only``: discordant
    counts; ``p``: exact McNemar; ``min_k0``: smallest k-0 split reaching ``alpha`` at ``n``
    paired cases (``None``: unreachable); ``only_in_a``/``only_in_b``: names of the cases present
    on one side only (not compared).

    Stored as ``{"a", "b", "a_only", "b_only", "p", "alpha", "min_k0", "verdict",
    "explanation", "only_in_a", "only_in_b"}`` (``a``/``b`` as :class:`Rate`; ``p`` to 6
    significant digits; ``explanation`` is written for people and not read back).
    """

    a: Rate
    b: Rate
    a_only: int
    b_only: int
    p: float
    alpha: float
    min_k0: int | None
    verdict: Verdict
    only_in_a: tuple[str, ...] = ()
    only_in_b: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Paired cases."""
        return self.a.n

    @property
    def explanation(self) -> str:
        """The verdict in words, with what the bench could have seen when it saw nothing."""
        if self.verdict != "no detectable difference":
            return self.verdict
        if self.min_k0 is None:
            return (f"no detectable difference (could not have seen anything: even a "
                    f"{self.n}-0 split of {self.n} case{'s' if self.n != 1 else ''} has p > {self.alpha:g})")
        points = round(100.0 * self.min_k0 / self.n)
        return (f"no detectable difference (could not have seen less than a "
                f"{self.min_k0}-0 split: {self.min_k0} of {self.n} cases, "
                f"{points} percentage point{'s' if points != 1 else ''})")

    def as_json(self) -> dict[str, Any]:
        """The stored form (see the class docstring)."""
        return {"a": self.a.as_json(), "b": self.b.as_json(), "a_only": self.a_only, "b_only": self.b_only,
                "p": p6(self.p), "alpha": self.alpha, "min_k0": self.min_k0, "verdict": self.verdict,
                "explanation": self.explanation, "only_in_a": list(self.only_in_a),
                "only_in_b": list(self.only_in_b)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> Paired:
        """Read :meth:`as_json`'s form back; another shape is an InputError naming ``where``."""
        def build() -> Paired:
            if doc["verdict"] not in VERDICTS:
                raise ValueError(f"verdict {doc['verdict']!r}")
            return cls(a=Rate.from_json(doc["a"], where=f"{where}.a"), b=Rate.from_json(doc["b"], where=f"{where}.b"),
                       a_only=int(doc["a_only"]), b_only=int(doc["b_only"]), p=float(doc["p"]),
                       alpha=float(doc["alpha"]), min_k0=None if doc["min_k0"] is None else int(doc["min_k0"]),
                       verdict=doc["verdict"], only_in_a=tuple(map(str, doc["only_in_a"])),
                       only_in_b=tuple(map(str, doc["only_in_b"])))
        return decoded(where, "a paired comparison {a, b, a_only, b_only, p, ...}", build)


def verdict(a_only: int, b_only: int, *, alpha: float) -> Verdict:
    """``B better`` / ``B worse`` when the exact McNemar p reaches alpha, else no difference."""
    p = mcnemar_p(a_only, b_only)
    if p <= alpha and b_only > a_only:
        return "B better"
    if p <= alpha and a_only > b_only:
        return "B worse"
    return "no detectable difference"


def case_name(case: Case) -> str:
    """A case key as one name: its parts joined by ``/`` (``("f1", "0")`` -> ``f1/0``)."""
    return "/".join(case)


def compare_paired(a: Mapping[Case, bool], b: Mapping[Case, bool], *, unit: str, alpha: float,
                   confidence: float) -> Paired:
    """Pair A's and B's per-case outcomes (``True`` = success) on their common cases of ``unit``.

    Cases in only one mapping are listed (sorted) in ``only_in_a`` / ``only_in_b``.
    """
    common = sorted(set(a) & set(b))
    both = sum(1 for c in common if a[c] and b[c])
    a_only = sum(1 for c in common if a[c] and not b[c])
    b_only = sum(1 for c in common if b[c] and not a[c])
    n = len(common)
    return Paired(
        a=wilson(both + a_only, n, unit=unit, confidence=confidence),
        b=wilson(both + b_only, n, unit=unit, confidence=confidence),
        a_only=a_only, b_only=b_only, p=mcnemar_p(a_only, b_only), alpha=alpha,
        min_k0=min_k0(alpha, n=n), verdict=verdict(a_only, b_only, alpha=alpha),
        only_in_a=tuple(case_name(c) for c in sorted(set(a) - set(b))),
        only_in_b=tuple(case_name(c) for c in sorted(set(b) - set(a))),
    )
