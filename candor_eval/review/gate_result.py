"""The release gate's result: each criterion's record, each class's, and ``metrics/gate.json`` (its one
writer and reader).

Pure: no I/O. What the criteria mean, and how they are evaluated, is in
:mod:`candor_eval.review.gate`; this module holds what they produce: a :class:`Criterion` (status,
note and the numbers it read), a :class:`ClassResult` per class, and the :class:`GateResult` whose
``verdict`` follows from its criteria (``FAILED`` when one fails, ``NOT EVALUATED`` when one is
pending or nothing was checked, else ``PASSED``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from candor_eval.common.rounding import rounded
from candor_eval.stats.paired import Paired
from candor_eval.stats.rates import Rate
from candor_eval.stats.records import decoded, p6

Status = Literal["pass", "fail", "not evaluated", "waived"]
Verdict = Literal["PASSED", "FAILED", "NOT EVALUATED"]
STATUSES: tuple[Status, ...] = ("pass", "fail", "not evaluated", "waived")


@dataclass(frozen=True)
class ClassResult:
    """One class on its own labels: ``status`` (module docstring), ``support`` (the reference's
    labels of the class on the split), the paired per-label comparison (``None``: no labels) and
    ``max_drop``, the largest recall drop (A minus B) its data allow: the upper bound of the
    cluster interval (``None``: no interval)."""

    status: str
    support: int
    paired: Paired | None

    @property
    def max_drop(self) -> float | None:
        """The upper confidence bound of A's recall minus B's (``None`` without an interval)."""
        p = self.paired
        return None if p is None or p.diff_lo is None else -p.diff_lo

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "support": self.support, "max_drop": rounded(self.max_drop),
                "paired": None if self.paired is None else self.paired.as_json()}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> ClassResult:
        return cls(status=str(doc["status"]), support=int(doc["support"]),
                   paired=None if doc["paired"] is None else Paired.from_json(doc["paired"], where=where))


@dataclass(frozen=True)
class Criterion:
    """One criterion's result; the fields a criterion does not use stay empty.

    ``status`` (module docstring); ``note``: why it was not evaluated or failed, or a remark.
    ``reference``/``candidate``: the two compared values (P, R, F1, wrong targets; latency: the
    candidate's p95 in ms). ``reference_rate``/``candidate_rate``: P and R with their counts and
    cluster intervals. ``diff``/``diff_lo``/``diff_hi``/``p``: B - A with its cluster interval and
    p (micro criteria). ``limit``: the refresh limit in ms, the latency tolerance or the recall-drop
    margin; ``bound``: the refresh p95's upper confidence bound. ``tally``: what was counted
    (frames and labels, refreshes). ``classes``: the critical classes. ``keys``: the served
    contract's differing keys, the differing frozen fields or the sessions seen in training.
    ``split``: the split whose frames it read (``None``: none).
    """

    status: Status
    note: str | None = None
    reference: float | None = None
    candidate: float | None = None
    reference_rate: Rate | None = None
    candidate_rate: Rate | None = None
    diff: float | None = None
    diff_lo: float | None = None
    diff_hi: float | None = None
    p: float | None = None
    limit: float | None = None
    tally: dict[str, int] = field(default_factory=dict)
    classes: dict[str, ClassResult] = field(default_factory=dict)
    bound: float | None = None
    keys: tuple[str, ...] = ()
    split: str | None = None

    @property
    def passed(self) -> bool:
        """Passed, or waived by the predeclared gate."""
        return self.status in ("pass", "waived")

    def as_json(self) -> dict[str, Any]:
        def rate(r: Rate | None) -> dict[str, Any] | None:
            return None if r is None else r.as_json()
        return {"status": self.status, "passed": self.passed, "note": self.note, "reference": self.reference,
                "candidate": self.candidate, "reference_rate": rate(self.reference_rate),
                "candidate_rate": rate(self.candidate_rate), "diff": rounded(self.diff),
                "diff_lo": rounded(self.diff_lo), "diff_hi": rounded(self.diff_hi),
                "p": None if self.p is None else p6(self.p), "limit": self.limit,
                "tally": dict(self.tally), "classes": {n: c.as_json() for n, c in self.classes.items()},
                "bound": self.bound, "keys": list(self.keys), "split": self.split}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> Criterion:
        def rate(key: str) -> Rate | None:
            return None if doc[key] is None else Rate.from_json(doc[key], where=f"{where}.{key}")
        if doc["status"] not in STATUSES:
            raise ValueError(f"status {doc['status']!r}")
        return cls(status=doc["status"], note=doc["note"], reference=doc["reference"], candidate=doc["candidate"],
                   reference_rate=rate("reference_rate"), candidate_rate=rate("candidate_rate"),
                   diff=doc["diff"], diff_lo=doc["diff_lo"], diff_hi=doc["diff_hi"], p=doc["p"],
                   limit=doc["limit"], tally={str(k): int(v) for k, v in doc["tally"].items()},
                   classes={n: ClassResult.from_json(c, where=f"{where}.classes.{n}")
                            for n, c in doc["classes"].items()},
                   bound=doc["bound"], keys=tuple(map(str, doc["keys"])),
                   split=None if doc["split"] is None else str(doc["split"]))


@dataclass(frozen=True)
class GateResult:
    """The content of ``metrics/gate.json``: the declared comparison, every criterion, every class.

    Stored as ``{"predeclared", "set", "reference", "candidate", "split", "alpha", "cluster",
    "improvement", "max_recall_drop", "unqualified", "waive", "comparison", "refresh_p95_ms",
    "latency_tolerance", "critical", "min_support", "verdict", "passed", "failed", "pending",
    "criteria": {name: Criterion}, "per_class": {name: ClassResult}}``; ``verdict``, ``passed``,
    ``failed`` and ``pending`` follow from the criteria, ``predeclared`` (``<params file>:gate``) from ``params_file``,
    the params file the gate was declared in.
    """

    set: str
    reference: str
    candidate: str
    split: str
    alpha: float
    critical: tuple[str, ...]
    min_support: int
    criteria: dict[str, Criterion]
    per_class: dict[str, ClassResult]
    params_file: str
    cluster: str = "frame"
    improvement: str = "shown"
    max_recall_drop: float = 0.05
    unqualified: str = "fail"
    waive: tuple[str, ...] = ()
    comparison: str = "weights"
    refresh_p95_ms: float = 2000.0
    latency_tolerance: float = 0.1

    @property
    def failed(self) -> list[str]:
        """Names of the failed criteria, in criterion order."""
        return [n for n, c in self.criteria.items() if c.status == "fail"]

    @property
    def pending(self) -> list[str]:
        """Names of the criteria not evaluated (their input is missing), in criterion order."""
        return [n for n, c in self.criteria.items() if c.status == "not evaluated"]

    @property
    def verdict(self) -> Verdict:
        """``FAILED`` (a criterion failed), ``NOT EVALUATED`` (one is pending, or every criterion but the
        precondition ``same_frames_and_labels`` was waived: nothing was checked) or ``PASSED``
        (module docstring)."""
        if self.failed:
            return "FAILED"
        checked = [n for n, c in self.criteria.items() if c.status == "pass" and n != "same_frames_and_labels"]
        if self.pending or not checked:
            return "NOT EVALUATED"
        return "PASSED"

    @property
    def passed(self) -> bool:
        """The verdict is PASSED."""
        return self.verdict == "PASSED"

    @property
    def predeclared(self) -> str:
        """Where the gate was declared: ``<params file>:gate``."""
        return f"{self.params_file}:gate"

    def as_json(self) -> dict[str, Any]:
        return {"predeclared": self.predeclared, "set": self.set, "reference": self.reference,
                "candidate": self.candidate, "split": self.split, "alpha": self.alpha, "cluster": self.cluster,
                "improvement": self.improvement, "max_recall_drop": self.max_recall_drop,
                "unqualified": self.unqualified, "waive": list(self.waive), "comparison": self.comparison,
                "refresh_p95_ms": self.refresh_p95_ms, "latency_tolerance": self.latency_tolerance,
                "critical": list(self.critical), "min_support": self.min_support, "verdict": self.verdict,
                "passed": self.passed, "failed": self.failed, "pending": self.pending,
                "criteria": {n: c.as_json() for n, c in self.criteria.items()},
                "per_class": {n: c.as_json() for n, c in self.per_class.items()}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> GateResult:
        """Read :meth:`as_json`'s form back; another shape is an InputError naming ``where``."""
        def build() -> GateResult:
            params_file, section = str(doc["predeclared"]).rsplit(":", 1)
            if section != "gate":
                raise ValueError(f"predeclared {doc['predeclared']!r} is not <params file>:gate")
            return cls(params_file=params_file, set=str(doc["set"]), reference=str(doc["reference"]),
                       candidate=str(doc["candidate"]),
                       split=str(doc["split"]),
                       alpha=float(doc["alpha"]), critical=tuple(map(str, doc["critical"])),
                       cluster=str(doc["cluster"]), improvement=str(doc["improvement"]),
                       max_recall_drop=float(doc["max_recall_drop"]), unqualified=str(doc["unqualified"]),
                       waive=tuple(map(str, doc["waive"])), comparison=str(doc["comparison"]),
                       refresh_p95_ms=float(doc["refresh_p95_ms"]), latency_tolerance=float(doc["latency_tolerance"]),
                       min_support=int(doc["min_support"]),
                       criteria={n: Criterion.from_json(c, where=f"{where}:criteria.{n}")
                                 for n, c in doc["criteria"].items()},
                       per_class={n: ClassResult.from_json(c, where=f"{where}:per_class.{n}")
                                  for n, c in doc["per_class"].items()})
        return decoded(where, "a gate result (written by the stats stage)", build)
