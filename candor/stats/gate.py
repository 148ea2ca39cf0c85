"""The predeclared release gate for detectors (seed 002, "Predeclared comparison", 1-4).

Pure: no I/O. The criteria and their parameters are declared in ``params.yaml: gate``
*before* a candidate is scored; changing them is a visible diff in review.

Reference and candidate are compared on the frames of one split (``gate.split``,
``test`` by default: never tune on it). The candidate passes only when every criterion
passes:

1. ``same_frames_and_labels``: both were scored on the same frames with the same labels
   (same frame set in the per-frame table; same label set per class in the per-label
   table). Otherwise nothing else is comparable.
2. ``micro_precision_higher``, ``micro_recall_higher``, ``micro_f1_higher``: the
   candidate's micro P, R and F1 (from the per-frame TP/FP/FN of the split) are strictly
   higher than the reference's. Intervals are reported with them (Wilson for P and R).
3. ``critical_recall_no_regression``: for *each* class in ``match.critical`` on its own
   (never pooled, so a drop is never masked by gains elsewhere), the paired per-label
   outcomes (found / not found) are tested with exact McNemar; the class regresses when
   the reference finds more of its labels than the candidate (``a_only > b_only``) and
   ``p <= gate.alpha``. A drop McNemar calls noise is allowed; a significant one fails.
4. ``wrong_targets_no_increase``: the candidate's total wrong action targets (critical-
   class detections on a label of another class, from the detection metrics) are not
   more than the reference's.
5. ``latency_p95``: when a latency diagnostic exists for the candidate and was taken on
   its current ONNX file, its end-to-end p95 is at most ``gate.latency_p95_ms``; when
   none exists (or it is stale) the criterion is ``not measured`` and does not fail
   (seed 002: "when measured").

A criterion that cannot be evaluated because its input is missing (other than latency)
*fails* with the reason: the gate never passes on data it did not see.

Per-class status (every class with labels on the split): ``regressed`` / ``improved``
(McNemar on its labels reaches alpha), ``no detectable change``, or ``unqualified``
when its support is below ``match.min_support`` - an unqualified class is never
called improved (a significant drop is still ``regressed``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from candor.common.errors import fail
from candor.stats.rates import Case, Paired, compare_paired, wilson


class GateParams(BaseModel):
    """``params.yaml: gate`` (predeclared)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    reference: str = "demo-v1"
    candidate: str = "demo-v2"
    split: str = "test"
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    latency_p95_ms: float = Field(default=2000.0, gt=0.0)


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


def micro_from_frames(frames: Sequence[Mapping[str, object]], *, model: str, split: str) -> Micro:
    """Sum TP/FP/FN of ``model`` over the per-frame rows of ``split``."""
    rows = [r for r in frames if r["model"] == model and r["split"] == split]
    return Micro(tp=sum(int(r["tp"]) for r in rows), fp=sum(int(r["fp"]) for r in rows),  # type: ignore[call-overload]
                 fn=sum(int(r["fn"]) for r in rows))  # type: ignore[call-overload]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _rate(k: int, n: int, confidence: float) -> dict[str, Any]:
    w = wilson(k, n, confidence=confidence)
    return {"rate": _r(w.rate), "lo": _r(w.lo), "hi": _r(w.hi), "k": k, "n": n}


def _higher(name: str, a: float | None, b: float | None, extra: dict[str, Any]) -> dict[str, Any]:
    if a is None or b is None:
        return {"passed": False, "reason": f"{name} undefined (no detections or no labels)", **extra}
    return {"passed": b > a, "reference": _r(a), "candidate": _r(b), **extra}


def class_status(res: Paired, *, support: int, min_support: int) -> str:
    """``regressed``, ``improved``, ``no detectable change`` or ``unqualified``."""
    if res.verdict == "B worse":
        return "regressed"
    if support < min_support:
        return "unqualified"
    if res.verdict == "B better":
        return "improved"
    return "no detectable change"


def _paired_json(res: Paired, status: str, support: int) -> dict[str, Any]:
    return {"status": status, "support": support,
            "reference_recall": _r(res.a.rate), "candidate_recall": _r(res.b.rate),
            "reference_lo": _r(res.a.lo), "reference_hi": _r(res.a.hi),
            "candidate_lo": _r(res.b.lo), "candidate_hi": _r(res.b.hi),
            "a_only": res.a_only, "b_only": res.b_only, "p": float(f"{res.p:.6g}")}


def evaluate_gate(*, frames: Sequence[Mapping[str, object]] | None,
                  labels: Sequence[Mapping[str, object]] | None,
                  wrong_targets: Mapping[str, int | None],
                  latency_p95_ms: float | None, params: GateParams, critical: Sequence[str],
                  min_support: int, confidence: float) -> dict[str, Any]:
    """Evaluate every criterion; returns the content of ``metrics/gate.json``.

    ``frames``/``labels``: parsed per-frame and per-label outcome rows (``None`` when the
    table is absent); ``wrong_targets``: model -> total wrong targets on the split
    (``None`` when unknown); ``latency_p95_ms``: the candidate's end-to-end p95 or
    ``None`` when not measured.
    """
    ref, cand, split = params.reference, params.candidate, params.split
    crit: dict[str, dict[str, Any]] = {}
    per_class: dict[str, dict[str, Any]] = {}

    # 1. same frames and labels
    if frames is None or labels is None:
        crit["same_frames_and_labels"] = {"passed": False, "reason": "per-frame or per-label outcome table absent"}
    else:
        fa = {str(r["frame"]) for r in frames if r["model"] == ref and r["split"] == split}
        fb = {str(r["frame"]) for r in frames if r["model"] == cand and r["split"] == split}
        la = {(str(r["frame"]), str(r["label"]), str(r["class"])) for r in labels
              if r["model"] == ref and r["split"] == split}
        lb = {(str(r["frame"]), str(r["label"]), str(r["class"])) for r in labels
              if r["model"] == cand and r["split"] == split}
        ok = bool(fa) and fa == fb and la == lb
        crit["same_frames_and_labels"] = {
            "passed": ok, "frames": len(fa | fb), "labels": len(la | lb),
            "frames_only_in_reference": len(fa - fb), "frames_only_in_candidate": len(fb - fa),
            "labels_only_in_reference": len(la - lb), "labels_only_in_candidate": len(lb - la),
            **({} if fa else {"reason": f"no {split} frames for the reference {ref}"}),
        }

    # 2. micro P, R, F1
    if frames is None:
        for name in ("micro_precision_higher", "micro_recall_higher", "micro_f1_higher"):
            crit[name] = {"passed": False, "reason": "per-frame outcome table absent"}
    else:
        ma = micro_from_frames(frames, model=ref, split=split)
        mb = micro_from_frames(frames, model=cand, split=split)
        pa, pb = _rate(ma.tp, ma.tp + ma.fp, confidence), _rate(mb.tp, mb.tp + mb.fp, confidence)
        ra, rb = _rate(ma.tp, ma.tp + ma.fn, confidence), _rate(mb.tp, mb.tp + mb.fn, confidence)
        crit["micro_precision_higher"] = _higher("precision", pa["rate"], pb["rate"],
                                                 {"reference_interval": pa, "candidate_interval": pb})
        crit["micro_recall_higher"] = _higher("recall", ra["rate"], rb["rate"],
                                              {"reference_interval": ra, "candidate_interval": rb})
        crit["micro_f1_higher"] = _higher("F1", ma.f1, mb.f1, {})

    # 3. critical classes, each on its own labels
    if labels is None:
        crit["critical_recall_no_regression"] = {"passed": False, "reason": "per-label outcome table absent"}
    else:
        by_class: dict[str, dict[str, dict[Case, bool]]] = {}
        for r in labels:
            if r["split"] != split or r["model"] not in (ref, cand):
                continue
            by_class.setdefault(str(r["class"]), {}).setdefault(str(r["model"]), {})[
                (str(r["frame"]), str(r["label"]))] = r["found"] is True
        for name in sorted(by_class):
            sides = by_class[name]
            res = compare_paired(sides.get(ref, {}), sides.get(cand, {}), alpha=params.alpha,
                                 confidence=confidence)
            support = len(sides.get(ref, {}))
            per_class[name] = _paired_json(res, class_status(res, support=support, min_support=min_support),
                                           support)
        checked = {}
        for name in critical:
            if name not in per_class:
                checked[name] = {"status": "no labels", "support": 0}
            else:
                checked[name] = per_class[name]
        regressed = sorted(n for n, c in checked.items() if c["status"] == "regressed")
        crit["critical_recall_no_regression"] = {
            "passed": not regressed, "regressed": regressed, "classes": checked,
            **({"note": "no critical classes declared (match.critical)"} if not critical else {}),
        }

    # 4. wrong targets
    wa, wb = wrong_targets.get(ref), wrong_targets.get(cand)
    if wa is None or wb is None:
        crit["wrong_targets_no_increase"] = {"passed": False, "reason": "wrong targets not found in the detection metrics",
                                             "reference": wa, "candidate": wb}
    else:
        crit["wrong_targets_no_increase"] = {"passed": wb <= wa, "reference": wa, "candidate": wb}

    # 5. latency
    if latency_p95_ms is None:
        crit["latency_p95"] = {"passed": True, "status": "not measured", "limit_ms": params.latency_p95_ms}
    else:
        crit["latency_p95"] = {"passed": latency_p95_ms <= params.latency_p95_ms, "status": "measured",
                               "p95_ms": round(latency_p95_ms, 3), "limit_ms": params.latency_p95_ms}

    return {
        "predeclared": "params.yaml:gate",
        "reference": ref, "candidate": cand, "split": split, "alpha": params.alpha,
        "critical": list(critical), "min_support": min_support,
        "passed": all(c["passed"] for c in crit.values()),
        "failed": [n for n, c in crit.items() if not c["passed"]],
        "criteria": crit,
        "per_class": per_class,
    }


def latency_p95(doc: Any, *, where: str, onnx_sha256: str | None) -> float | None:
    """The end-to-end ``p95_ms`` of a latency diagnostic written by :mod:`stages.latency`.

    ``None`` (the criterion is then "not measured") when the diagnostic was taken on
    another model file than ``onnx_sha256`` (or that is unknown): a stale figure must
    never pass the gate. A document without a numeric ``end_to_end.p95_ms`` is an
    InputError naming ``where``.
    """
    p95 = doc.get("end_to_end", {}).get("p95_ms") if isinstance(doc, Mapping) else None
    if not isinstance(p95, (int, float)) or isinstance(p95, bool):
        raise fail(where, "not a latency diagnostic", expected="end_to_end.p95_ms (written by make latency)",
                   got=p95)
    if onnx_sha256 is None or doc.get("onnx_sha256") != onnx_sha256:
        return None
    return float(p95)


def find_wrong_targets(doc: Any, *, split: str) -> int | None:
    """Total wrong targets of a detection metrics document on ``split`` (``None`` if absent).

    Reads ``critical.total.wrong`` under the split's section: ``doc[split]``,
    ``doc['splits'][split]`` or ``doc['by_split'][split]``.
    """
    if not isinstance(doc, Mapping):
        return None
    for container in (doc, doc.get("splits"), doc.get("by_split")):
        if isinstance(container, Mapping) and isinstance(container.get(split), Mapping):
            total = container[split].get("critical", {}).get("total", {})
            w = total.get("wrong") if isinstance(total, Mapping) else None
            if isinstance(w, int) and not isinstance(w, bool):
                return w
    return None
