"""The predeclared release gate for detectors: criteria, and ``metrics/gate.json`` (its one writer and reader).

Pure: no I/O. The criteria and their parameters are declared in ``params.yaml: gate``
(:class:`candor.stats.params.GateParams`) *before* a candidate is scored; changing them is a
visible diff in review (docs/stats.md, "The predeclared release gate").

Reference and candidate are compared on the frames of one split (``gate.split``, ``test`` by
default: never tune on it). The candidate passes only when every criterion passes:

1. ``same_frames_and_labels``: both were scored on the same frames with the same labels (same
   frame set in the per-frame table; same label set per class in the per-label table).
   Otherwise nothing else is comparable.
2. ``micro_precision_higher``, ``micro_recall_higher``, ``micro_f1_higher``: the candidate's
   micro P, R and F1 (from the per-frame TP/FP/FN of the split) are strictly higher than the
   reference's. P and R carry their Wilson intervals (P over detections, R over labels).
3. ``critical_recall_no_regression``: for *each* class in ``match.critical`` on its own (never
   pooled, so a drop is never masked by gains elsewhere), the paired per-label outcomes (found /
   not found) are tested with exact McNemar; the class regresses when the reference finds more
   of its labels than the candidate (``a_only > b_only``) and ``p <= gate.alpha``. A drop
   McNemar calls noise is allowed; a significant one fails.
4. ``wrong_targets_no_increase``: the candidate's total wrong action targets (critical-class
   detections on a label of another class: ``<split>.critical.total.wrong`` of the detection
   metrics) are not more than the reference's.
5. ``latency_p95``: when a latency diagnostic exists for the candidate and was taken on its
   current ONNX file, its end-to-end p95 is at most ``gate.latency_p95_ms``; when none exists
   (or it is stale) the criterion is ``not measured`` and does not fail: latency gates only
   when measured.

A criterion that cannot be evaluated because its input is missing (other than latency)
*fails* with the reason: the gate never passes on data it did not see.

Per-class status (every class with labels on the split): ``regressed`` / ``improved`` (McNemar
on its labels reaches alpha), ``no detectable change``, or ``unqualified`` when its support is
below ``match.min_support``: an unqualified class is never called improved (a significant drop
is still ``regressed``). A critical class without labels on the split has status ``no labels``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from candor.common.errors import fail
from candor.stats.paired import Case, Paired, compare_paired
from candor.stats.params import GateParams
from candor.stats.rates import Rate, wilson
from candor.stats.records import decoded, r6

PREDECLARED = "params.yaml:gate"
Row = Mapping[str, object]


@dataclass(frozen=True)
class ClassResult:
    """One class on its own labels: ``status`` (module docstring), ``support`` (the reference's
    labels of the class on the split) and the paired per-label comparison (``None``: no labels)."""

    status: str
    support: int
    paired: Paired | None

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "support": self.support,
                "paired": None if self.paired is None else self.paired.as_json()}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> ClassResult:
        return cls(status=str(doc["status"]), support=int(doc["support"]),
                   paired=None if doc["paired"] is None else Paired.from_json(doc["paired"], where=where))


@dataclass(frozen=True)
class Criterion:
    """One criterion's result; the fields a criterion does not use stay empty.

    ``note``: why it failed without a comparison (an absent input), or a remark (``not
    measured``, the regressed classes). ``reference``/``candidate``: the two compared values (P,
    R, F1, wrong targets; latency: the candidate's p95 in ms). ``reference_rate``/
    ``candidate_rate``: P and R with their counts and Wilson intervals. ``limit``: the
    latency limit in ms. ``tally``: what ``same_frames_and_labels`` counted. ``classes``: the
    critical classes, each on its own.
    """

    passed: bool
    note: str | None = None
    reference: float | None = None
    candidate: float | None = None
    reference_rate: Rate | None = None
    candidate_rate: Rate | None = None
    limit: float | None = None
    tally: dict[str, int] = field(default_factory=dict)
    classes: dict[str, ClassResult] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        def rate(r: Rate | None) -> dict[str, Any] | None:
            return None if r is None else r.as_json()
        return {"passed": self.passed, "note": self.note, "reference": self.reference, "candidate": self.candidate,
                "reference_rate": rate(self.reference_rate), "candidate_rate": rate(self.candidate_rate),
                "limit": self.limit, "tally": dict(self.tally),
                "classes": {n: c.as_json() for n, c in self.classes.items()}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> Criterion:
        def rate(key: str) -> Rate | None:
            return None if doc[key] is None else Rate.from_json(doc[key], where=f"{where}.{key}")
        if not isinstance(doc["passed"], bool):
            raise ValueError("passed must be true or false")
        return cls(passed=doc["passed"], note=doc["note"], reference=doc["reference"], candidate=doc["candidate"],
                   reference_rate=rate("reference_rate"), candidate_rate=rate("candidate_rate"),
                   limit=doc["limit"], tally={str(k): int(v) for k, v in doc["tally"].items()},
                   classes={n: ClassResult.from_json(c, where=f"{where}.classes.{n}")
                            for n, c in doc["classes"].items()})


@dataclass(frozen=True)
class GateResult:
    """The content of ``metrics/gate.json``: the declared comparison, every criterion, every class.

    Stored as ``{"predeclared", "set", "reference", "candidate", "split", "alpha", "critical",
    "min_support", "passed", "failed", "criteria": {name: Criterion}, "per_class": {name:
    ClassResult}}``; ``passed`` and ``failed`` follow from the criteria.
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

    @property
    def failed(self) -> list[str]:
        """Names of the failed criteria, in criterion order."""
        return [n for n, c in self.criteria.items() if not c.passed]

    @property
    def passed(self) -> bool:
        """Every criterion passed."""
        return not self.failed

    def as_json(self) -> dict[str, Any]:
        return {"predeclared": PREDECLARED, "set": self.set, "reference": self.reference,
                "candidate": self.candidate, "split": self.split, "alpha": self.alpha, "critical": list(self.critical),
                "min_support": self.min_support, "passed": self.passed, "failed": self.failed,
                "criteria": {n: c.as_json() for n, c in self.criteria.items()},
                "per_class": {n: c.as_json() for n, c in self.per_class.items()}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> GateResult:
        """Read :meth:`as_json`'s form back; another shape is an InputError naming ``where``."""
        def build() -> GateResult:
            return cls(set=str(doc["set"]), reference=str(doc["reference"]), candidate=str(doc["candidate"]),
                       split=str(doc["split"]),
                       alpha=float(doc["alpha"]), critical=tuple(map(str, doc["critical"])),
                       min_support=int(doc["min_support"]),
                       criteria={n: Criterion.from_json(c, where=f"{where}:criteria.{n}")
                                 for n, c in doc["criteria"].items()},
                       per_class={n: ClassResult.from_json(c, where=f"{where}:per_class.{n}")
                                  for n, c in doc["per_class"].items()})
        return decoded(where, "a gate result (written by the stats stage)", build)


@dataclass(frozen=True)
class Micro:
    """Micro TP/FP/FN over a split's frames."""

    tp: int
    fp: int
    fn: int

    @property
    def f1(self) -> float | None:
        """``2 TP / (2 TP + FP + FN)``; ``None`` when nothing was labelled or detected."""
        den = 2 * self.tp + self.fp + self.fn
        return None if den == 0 else 2 * self.tp / den


def micro_from_frames(frames: Sequence[Row], *, model: str, split: str) -> Micro:
    """Sum TP/FP/FN of ``model`` over the per-frame rows of ``split``."""
    rows = [r for r in frames if r["model"] == model and r["split"] == split]
    return Micro(tp=sum(int(r["tp"]) for r in rows), fp=sum(int(r["fp"]) for r in rows),  # type: ignore[call-overload]
                 fn=sum(int(r["fn"]) for r in rows))  # type: ignore[call-overload]


def _higher(name: str, a: float | None, b: float | None, **rates: Rate) -> Criterion:
    """Strictly higher for the candidate; an undefined side fails with the reason."""
    if a is None or b is None:
        return Criterion(passed=False, note=f"{name} undefined (no detections or no labels)", **rates)
    return Criterion(passed=b > a, reference=r6(a), candidate=r6(b), **rates)


def class_status(res: Paired, *, support: int, min_support: int) -> str:
    """``regressed``, ``improved``, ``no detectable change`` or ``unqualified``."""
    if res.verdict == "B worse":
        return "regressed"
    if support < min_support:
        return "unqualified"
    if res.verdict == "B better":
        return "improved"
    return "no detectable change"


def _same_frames_and_labels(frames: Sequence[Row], labels: Sequence[Row], *, ref: str, cand: str,
                            split: str) -> Criterion:
    fa, fb = ({str(r["frame"]) for r in frames if r["model"] == m and r["split"] == split} for m in (ref, cand))
    la, lb = ({(str(r["frame"]), str(r["label"]), str(r["class"])) for r in labels
               if r["model"] == m and r["split"] == split} for m in (ref, cand))
    return Criterion(
        passed=bool(fa) and fa == fb and la == lb,
        note=None if fa else f"no {split} frames for the reference {ref}",
        tally={"frames": len(fa | fb), "labels": len(la | lb),
               "frames_only_in_reference": len(fa - fb), "frames_only_in_candidate": len(fb - fa),
               "labels_only_in_reference": len(la - lb), "labels_only_in_candidate": len(lb - la)})


def per_class_results(labels: Sequence[Row], *, ref: str, cand: str, split: str, alpha: float,
                      min_support: int, confidence: float) -> dict[str, ClassResult]:
    """Every class with labels on ``split``: reference vs candidate on its own labels, sorted."""
    by_class: dict[str, dict[str, dict[Case, bool]]] = {}
    for r in labels:
        if r["split"] == split and r["model"] in (ref, cand):
            by_class.setdefault(str(r["class"]), {}).setdefault(str(r["model"]), {})[
                (str(r["frame"]), str(r["label"]))] = r["found"] is True
    out = {}
    for name in sorted(by_class):
        sides = by_class[name]
        res = compare_paired(sides.get(ref, {}), sides.get(cand, {}), unit="label", alpha=alpha,
                             confidence=confidence)
        support = len(sides.get(ref, {}))
        out[name] = ClassResult(class_status(res, support=support, min_support=min_support), support, res)
    return out


def evaluate_gate(*, frames: Sequence[Row] | None, labels: Sequence[Row] | None,
                  wrong_targets: Mapping[str, int | None], latency_p95_ms: float | None, params: GateParams,
                  critical: Sequence[str], min_support: int, confidence: float) -> GateResult:
    """Evaluate every criterion (module docstring).

    ``frames``/``labels``: parsed per-frame and per-label outcome rows (``None`` when the table
    is absent); ``wrong_targets``: model -> total wrong targets on the split (``None`` when
    unknown); ``latency_p95_ms``: the candidate's end-to-end p95, ``None`` when not measured.
    """
    ref, cand, split = params.reference, params.candidate, params.split
    crit: dict[str, Criterion] = {}
    per_class: dict[str, ClassResult] = {}

    if frames is None or labels is None:
        crit["same_frames_and_labels"] = Criterion(passed=False, note="per-frame or per-label outcome table absent")
    else:
        crit["same_frames_and_labels"] = _same_frames_and_labels(frames, labels, ref=ref, cand=cand, split=split)

    if frames is None:
        for name in ("micro_precision_higher", "micro_recall_higher", "micro_f1_higher"):
            crit[name] = Criterion(passed=False, note="per-frame outcome table absent")
    else:
        ma, mb = (micro_from_frames(frames, model=m, split=split) for m in (ref, cand))
        pa, pb = (wilson(m.tp, m.tp + m.fp, unit="detection", confidence=confidence) for m in (ma, mb))
        ra, rb = (wilson(m.tp, m.tp + m.fn, unit="label", confidence=confidence) for m in (ma, mb))
        crit["micro_precision_higher"] = _higher("precision", pa.rate, pb.rate, reference_rate=pa, candidate_rate=pb)
        crit["micro_recall_higher"] = _higher("recall", ra.rate, rb.rate, reference_rate=ra, candidate_rate=rb)
        crit["micro_f1_higher"] = _higher("F1", ma.f1, mb.f1)

    if labels is None:
        crit["critical_recall_no_regression"] = Criterion(passed=False, note="per-label outcome table absent")
    else:
        per_class = per_class_results(labels, ref=ref, cand=cand, split=split, alpha=params.alpha,
                                      min_support=min_support, confidence=confidence)
        checked = {n: per_class.get(n, ClassResult("no labels", 0, None)) for n in critical}
        regressed = sorted(n for n, c in checked.items() if c.status == "regressed")
        note = ("regressed: " + ", ".join(regressed) if regressed else
                None if critical else "no critical classes declared (match.critical)")
        crit["critical_recall_no_regression"] = Criterion(passed=not regressed, note=note, classes=checked)

    wa, wb = wrong_targets.get(ref), wrong_targets.get(cand)
    crit["wrong_targets_no_increase"] = Criterion(
        passed=wa is not None and wb is not None and wb <= wa, reference=wa, candidate=wb,
        note="wrong targets not found in the detection metrics" if wa is None or wb is None else None)

    measured = latency_p95_ms is not None
    crit["latency_p95"] = Criterion(
        passed=not measured or latency_p95_ms <= params.latency_p95_ms,  # type: ignore[operator]
        note=None if measured else "not measured", limit=params.latency_p95_ms,
        candidate=round(latency_p95_ms, 3) if measured else None)  # type: ignore[arg-type]

    return GateResult(set=params.set, reference=ref, candidate=cand, split=split, alpha=params.alpha, critical=tuple(critical),
                      min_support=min_support, criteria=crit, per_class=per_class)


def latency_p95(doc: Any, *, where: str, onnx_sha256: str | None) -> float | None:
    """The end-to-end ``p95_ms`` of a latency diagnostic (written by ``make latency``).

    ``None`` (the criterion is then "not measured") when the diagnostic was taken on another
    model file than ``onnx_sha256`` (or that is unknown): a stale figure must never pass the
    gate. A document without a numeric ``end_to_end.p95_ms`` is an InputError naming ``where``.
    """
    p95 = doc.get("end_to_end", {}).get("p95_ms") if isinstance(doc, Mapping) else None
    if not isinstance(p95, (int, float)) or isinstance(p95, bool):
        raise fail(where, "not a latency diagnostic", expected="end_to_end.p95_ms (written by make latency)",
                   got=p95)
    if onnx_sha256 is None or doc.get("onnx_sha256") != onnx_sha256:
        return None
    return float(p95)


def find_wrong_targets(doc: Any, *, split: str) -> int | None:
    """Total wrong targets on ``split`` of a detection metrics document (``<split>.critical.total.wrong``,
    as the detection scorer writes it); ``None`` when absent."""
    node = doc
    for key in (split, "critical", "total", "wrong"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, int) and not isinstance(node, bool) else None
