"""The predeclared release gate for detectors: its criteria, evaluated (their record and ``metrics/gate.json``:
:mod:`candor_eval.review.gate_result`).

Pure: no I/O. The criteria and their parameters are declared in the ``gate`` section of the params
file (:class:`candor_eval.review.params.GateParams`) *before* a candidate is scored; changing them is a
visible diff in review (docs/stats.md, "The predeclared release gate"). ``gate.json`` names the file
(``predeclared``: ``<params file>:gate``).

Reference and candidate are compared on the frames of one split (``gate.split``, ``test`` by
default: never tune on it), every unit clustered as the stats stage clusters it
(``stats.cluster``: frames, or capture sessions). Each criterion is ``pass``, ``fail``, ``not
evaluated`` (its input is missing: *pending*) or ``waived`` (listed in ``gate.waive``) and names
the split it read (``None``: it reads no frames). The gate's verdict (:attr:`GateResult.verdict`)
is ``FAILED`` when a criterion fails, else ``NOT EVALUATED`` when one is pending or when nothing
was checked at all (every criterion waived), else ``PASSED``: a criterion that was not evaluated
never reads as a pass.

1. ``reference_reproduced``: the reference's card declares a frozen ``evaluation`` and the score
   stage reproduced it field for field on the card's model file and evaluation set. A failed
   reproduction fails the gate naming the differing fields (nothing else may be read before it
   holds); a card without a frozen evaluation leaves it pending.
2. ``same_frames_and_labels``: both were scored on the same frames with the same labels.
   Otherwise nothing else is comparable (not waivable).
3. ``served_contract_fixed``: the two models' served contracts
   (:mod:`candor_eval.detection.served_contract`: preprocessing, input size, output layout,
   per-class thresholds, NMS, max detections) are equal, so that a difference is the
   checkpoint's (``gate.comparison: weights``, the default); otherwise it fails naming the
   differing keys. ``gate.comparison: package`` declares a comparison of whole packages: it
   passes, naming what differs, and the report shows the package's effects side by side.
4. ``micro_precision_higher``, ``micro_recall_higher``, ``micro_f1_higher``: the candidate's
   micro P, R and F1 are higher than the reference's. Each carries B - A with its cluster
   interval and p: recall by the sign-flip test of labels found per cluster; precision and F1,
   ratios over detections, by the sign-flip test of each cluster's contribution to the linearised
   ratio difference (:func:`candor_eval.stats.ratios.ratio_difference`: a test of precision, not of
   false positives per frame, which stays a separate figure of the stats file). Every interval is
   the set of differences its test does not reject, so it excludes 0 exactly when ``p`` reaches
   ``1 - confidence``. With
   ``gate.improvement: shown`` (the default) a criterion passes only when the difference also
   reaches alpha: requiring every test at alpha is an intersection-union test, so two equally
   good models pass with probability at most alpha. With ``higher`` the point estimate suffices
   and the gate has no noise control (said so in the check).
5. ``critical_recall_non_inferior``: each class of ``match.critical`` on its own (never pooled,
   so a drop is never masked by gains elsewhere) must *show* that its recall drop is within
   ``gate.max_recall_drop``: the upper bound of the cluster interval of A's recall minus B's is
   below the margin. Otherwise it is ``not shown`` and the gate fails, naming the class and the
   largest drop its data allow. A class too small to show anything (support below
   ``match.min_support``, or held by fewer clusters than the smallest split that can reach
   alpha) is *unqualified*; ``gate.unqualified`` declares whether that fails the gate
   (``fail``) or not (``waive``). A critical class whose drop is *shown* (status
   ``regressed``) fails the gate whatever its support: waiving unqualified classes waives only
   the non-inferiority they cannot show.
6. ``wrong_targets_no_increase``: the candidate's total wrong action targets (critical-class
   detections on a label of another class: ``<split>.critical.total.wrong`` of the detection
   metrics) are not more than the reference's.
7. ``sessions_held_out``: no capture session of the split's frames is among the training
   sessions a model's card declares (``training_sessions``), for the reference and the
   candidate; pending when a card declares none.
8. ``refresh_p95``: the p95 of the *whole requested refresh* (capture, transport, detection,
   handoff), recorded on the serving runtime (:mod:`candor_eval.detection.refresh`, ``candor
   gate run --refresh FILE``), is shown to be at most ``gate.refresh_p95_ms``: the
   distribution-free 95% upper bound of the p95 is within it. Pending without a timing file.
9. ``inference_latency_no_increase``: the decoded-image diagnostic (``candor latency``,
   :mod:`candor_eval.detection.latency`), which is no refresh time, is compared only between the
   two models timed in one run on one host: the candidate's end-to-end p95 is at most the
   reference's times ``1 + gate.latency_tolerance``. Pending without both diagnostics, or when
   they are not comparable.

Per-class status (every class with labels on the split): ``regressed`` / ``improved`` (the
paired test reaches alpha after Holm's adjustment over the split's classes, the family the stats
file adjusts too), ``no detectable change``, or ``unqualified`` (as in 5: never
called improved; a significant drop is still ``regressed``). A critical class without labels on
the split has status ``no labels`` and is unqualified.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from candor_eval.common.counts import Count, clusters_of
from candor_eval.common.errors import fail
from candor_eval.common.rounding import rounded
from candor_eval.review.gate_result import ClassResult, Criterion, GateResult
from candor_eval.review.params import DeclaredGate
from candor_eval.stats.multiple import holm
from candor_eval.stats.paired import Case, Paired, compare_paired
from candor_eval.stats.quantile import quantile_bound, upper_rank
from candor_eval.stats.rates import interval
from candor_eval.stats.ratios import ratio_difference
from candor_eval.stats.units import cluster_totals

Row = Mapping[str, object]


def _rows(rows: Sequence[Row], *, model: str, split: str) -> list[Row]:
    return [r for r in rows if r["model"] == model and r["split"] == split]


def _higher(name: str, a: float | None, b: float | None, *, shown: bool | None, declared: str,
            **numbers: Any) -> Criterion:
    """Higher for the candidate (and, with ``improvement: shown``, distinguishable from noise)."""
    if a is None or b is None:
        return Criterion(status="not evaluated", note=f"{name} undefined (no detections or no labels)", **numbers)
    higher = b > a
    if declared == "higher":
        note = None if not higher or shown else "higher, but not distinguishable from noise"
        return Criterion(status="pass" if higher else "fail", reference=rounded(a), candidate=rounded(b), note=note,
                         **numbers)
    ok = higher and bool(shown)
    note = None if ok else ("not higher" if not higher else "higher, but not distinguishable from noise")
    return Criterion(status="pass" if ok else "fail", reference=rounded(a), candidate=rounded(b), note=note, **numbers)


def qualified(res: Paired, *, support: int, min_support: int) -> bool:
    """Enough labels (``min_support``) in enough clusters (the smallest split that can reach alpha)."""
    return support >= min_support and res.min_k0 is not None and res.clusters >= res.min_k0


def class_status(res: Paired, *, support: int, min_support: int) -> str:
    """``regressed``, ``improved``, ``no detectable change`` or ``unqualified``."""
    if res.verdict == "B worse":
        return "regressed"
    if not qualified(res, support=support, min_support=min_support):
        return "unqualified"
    if res.verdict == "B better":
        return "improved"
    return "no detectable change"


def _same_frames_and_labels(frames: Sequence[Row], labels: Sequence[Row], *, ref: str, cand: str,
                            split: str) -> Criterion:
    fa, fb = ({str(r["frame"]) for r in _rows(frames, model=m, split=split)} for m in (ref, cand))
    la, lb = ({(str(r["frame"]), str(r["label"]), str(r["class"])) for r in _rows(labels, model=m, split=split)}
              for m in (ref, cand))
    same = bool(fa) and fa == fb and la == lb
    return Criterion(
        status="pass" if same else "fail" if fa else "not evaluated",
        note=None if fa else f"no {split} frames for the reference {ref}",
        tally={"frames": len(fa | fb), "labels": len(la | lb),
               "frames_only_in_reference": len(fa - fb), "frames_only_in_candidate": len(fb - fa),
               "labels_only_in_reference": len(la - lb), "labels_only_in_candidate": len(lb - la)})


def per_class_results(labels: Sequence[Row], *, ref: str, cand: str, split: str, alpha: float,
                      min_support: int, confidence: float, cluster: str = "frame",
                      cluster_of: Mapping[str, str] | None = None) -> dict[str, ClassResult]:
    """Every class with labels on ``split``: reference vs candidate on its own labels, clustered by
    ``cluster_of`` (frame -> cluster id; ``None``: by frame), sorted."""
    by_class: dict[str, dict[str, dict[Case, bool]]] = {}
    for r in labels:
        if r["split"] == split and r["model"] in (ref, cand):
            by_class.setdefault(str(r["class"]), {}).setdefault(str(r["model"]), {})[
                (str(r["frame"]), str(r["label"]))] = r["found"] is True
    compared = {}
    for name in sorted(by_class):
        sides = by_class[name]
        of = {c: (cluster_of or {}).get(c[0], c[0]) for side in sides.values() for c in side}
        compared[name] = compare_paired(sides.get(ref, {}), sides.get(cand, {}), unit="label", alpha=alpha,
                                        confidence=confidence, cluster=cluster, cluster_of=of)
    adjusted = holm({name: res.p for name, res in compared.items()})       # one family, as in stats.json
    out = {}
    for name, res in compared.items():
        res = res.adjusted(adjusted[name])
        support = len(by_class[name].get(ref, {}))
        out[name] = ClassResult(class_status(res, support=support, min_support=min_support), support, res)
    return out


def _micro(frames: Sequence[Row], labels: Sequence[Row], *, ref: str, cand: str, split: str, alpha: float,
           confidence: float, cluster: str, of: Mapping[str, str], declared: str) -> dict[str, Criterion]:
    """The three micro criteria from the per-frame and per-label tables of the split."""
    fr = {m: {str(r["frame"]): r for r in _rows(frames, model=m, split=split)} for m in (ref, cand)}
    found: dict[str, dict[Case, int]] = {
        m: {(str(r["frame"]), str(r["label"])): r["found"] is True for r in _rows(labels, model=m, split=split)}
        for m in (ref, cand)}
    rec = compare_paired(found[ref], found[cand], unit="label", alpha=alpha, confidence=confidence, cluster=cluster,
                         cluster_of={c: of.get(c[0], c[0]) for side in found.values() for c in side})
    t = dict(zip((ref, cand), cluster_totals(fr[ref], fr[cand], of=of, columns=("tp", "fp", "fn"))))
    level = 1.0 - confidence
    pr = ratio_difference(*([(x[0], x[0] + x[1]) for x in t[m]] for m in (ref, cand)), level=level)
    f1r = ratio_difference(*([(2 * x[0], 2 * x[0] + x[1] + x[2]) for x in t[m]] for m in (ref, cand)), level=level)
    totals = {m: [sum(x[i] for x in t[m]) for i in range(3)] for m in (ref, cand)}
    prec = {m: (x[0] / (x[0] + x[1]) if x[0] + x[1] else None) for m, x in totals.items()}
    f1 = {m: (2 * x[0] / (2 * x[0] + x[1] + x[2]) if 2 * x[0] + x[1] + x[2] else None) for m, x in totals.items()}
    def reached(p: float | None, favour: bool) -> bool:
        return p is not None and p <= alpha and favour
    rate = {m: interval(Count(totals[m][0], totals[m][0] + totals[m][1], "detection",
                              clusters_of(((x[0], x[0] + x[1]) for x in t[m]), name=cluster)), confidence=confidence)
            for m in (ref, cand)}
    return {
        "micro_precision_higher": _higher(
            "precision", prec[ref], prec[cand], shown=reached(pr.p, (pr.diff or 0) > 0), declared=declared,
            reference_rate=rate[ref], candidate_rate=rate[cand], diff=rounded(pr.diff), diff_lo=rounded(pr.lo),
            diff_hi=rounded(pr.hi), p=pr.p),
        "micro_recall_higher": _higher(
            "recall", rec.a.rate, rec.b.rate, shown=reached(rec.p, rec.favour_b > 0), declared=declared,
            reference_rate=rec.a, candidate_rate=rec.b, diff=rounded(rec.diff), diff_lo=rounded(rec.diff_lo),
            diff_hi=rounded(rec.diff_hi), p=rec.p),
        "micro_f1_higher": _higher(
            "F1", f1[ref], f1[cand], shown=reached(f1r.p, (f1r.diff or 0) > 0), declared=declared,
            diff=rounded(f1r.diff), diff_lo=rounded(f1r.lo), diff_hi=rounded(f1r.hi), p=f1r.p),
    }


def _critical(per_class: Mapping[str, ClassResult], critical: Sequence[str], *, margin: float, unqualified: str,
              min_support: int) -> Criterion:
    """Criterion 5 of the module docstring."""
    checked = {n: per_class.get(n, ClassResult("no labels", 0, None)) for n in critical}
    if not critical:
        return Criterion(status="not evaluated", note="no critical classes declared (match.critical)")
    small, not_shown = [], []
    regressed = [f"{n} (Holm p={c.paired.p_holm if c.paired.p_holm is not None else c.paired.p:.3g})"
                 for n, c in checked.items() if c.status == "regressed" and c.paired]
    for name, c in checked.items():
        if c.status == "regressed":
            continue
        if c.paired is None or not qualified(c.paired, support=c.support, min_support=min_support):
            small.append(name)
        elif c.max_drop is None or c.max_drop >= margin:
            drop = "unbounded" if c.max_drop is None else f"up to {c.max_drop:.3f}"
            not_shown.append(f"{name} (recall drop {drop})")
    notes = []
    if regressed:
        notes.append("recall drop shown (regressed, whatever the support): " + ", ".join(regressed))
    if not_shown:
        notes.append(f"not shown within {margin:g}: " + ", ".join(not_shown))
    if small:
        notes.append(f"unqualified ({unqualified}): " + ", ".join(small))
    ok = not regressed and not not_shown and (not small or unqualified == "waive")
    return Criterion(status="pass" if ok else "fail", note="; ".join(notes) or None, limit=margin, classes=checked)


@dataclass(frozen=True)
class Timings:
    """Whole-refresh timings of the candidate, read (:mod:`candor_eval.detection.refresh`): the serving
    ``host`` and the times in ms."""

    host: str
    ms: tuple[float, ...]


@dataclass(frozen=True)
class Evidence:
    """What the gate reads beside the outcome tables (``None`` or absent: not available).

    ``wrong_targets``: model -> total wrong targets on the split; ``frozen``: model -> the
    ``frozen`` block of its detection metrics (the card's frozen evaluation as reproduced; absent:
    the card declares none); ``contract_keys``: the keys where the two served contracts differ
    (:func:`candor_eval.detection.served_contract.differing_keys`); ``training``: model -> the
    training sessions its card declares (``None``: none declared); ``refresh``: the candidate's
    whole-refresh timings; ``latency``: model -> its decoded-image diagnostic, each on its current
    ONNX file."""

    wrong_targets: Mapping[str, int | None] = field(default_factory=dict)
    frozen: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    contract_keys: Sequence[str] | None = None
    training: Mapping[str, Sequence[str] | None] | None = None
    refresh: Timings | None = None
    latency: Mapping[str, Mapping[str, Any]] | None = None


SAME_RUN = ("run", "environment", "scope", "frames", "warmup")


def incomparable(reference: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[str]:
    """The keys of :data:`SAME_RUN` on which two latency diagnostics differ (empty: measured in one run
    of ``candor latency`` on one host, :mod:`candor_eval.detection.latency`, so comparable).

    >>> a = {"run": {"started_utc": "t0"}, "environment": {"host": "h"}, "scope": "s", "frames": 3, "warmup": 1}
    >>> incomparable(a, a | {"frames": 4}), incomparable(a, dict(a))
    (['frames'], [])
    """
    return [k for k in SAME_RUN if k not in reference or reference.get(k) != candidate.get(k)]


def _reproduced(frozen: Mapping[str, Any] | None, *, ref: str) -> Criterion:
    """Criterion 1 of the module docstring."""
    if frozen is None:
        return Criterion(status="not evaluated",
                         note=f"pending: the card of {ref} declares no frozen evaluation to reproduce "
                              f"(models/{ref}.yaml: evaluation, eval_manifest_sha256)")
    if not frozen.get("comparable"):
        why = ("the model file is not the card's" if not frozen.get("model_sha256_matches")
               else "the evaluation set is not the card's (eval_manifest_sha256)")
        return Criterion(status="fail", note=f"the frozen evaluation of {ref} cannot be reproduced: {why}")
    differing = tuple(map(str, frozen.get("differing", [])))
    return Criterion(status="fail" if differing else "pass", keys=differing,
                     note=f"{ref} did not reproduce its frozen evaluation: " + ", ".join(differing) if differing
                     else None, tally={"compared": int(frozen.get("compared", 0))})


def _contract(keys: Sequence[str] | None, *, comparison: str) -> Criterion:
    """Criterion 3 of the module docstring."""
    if keys is None:
        return Criterion(status="not evaluated", note="served contracts absent (served.json of score-detection)")
    if comparison == "package":
        note = ("package comparison (gate.comparison: package): the contracts differ in " + ", ".join(keys)
                if keys else "package comparison declared, but the contracts are equal: a weights experiment")
        return Criterion(status="pass", note=note, keys=tuple(keys))
    return Criterion(status="fail" if keys else "pass", keys=tuple(keys),
                     note=("weights experiment (gate.comparison: weights), but the served contract differs: "
                           + ", ".join(keys) + "; hold them fixed, or declare gate.comparison: package")
                     if keys else None)


def _held_out(training: Mapping[str, Sequence[str] | None] | None, sessions: set[str], *, models: Sequence[str],
              split: str) -> Criterion:
    """Criterion 7 of the module docstring."""
    if training is None or not sessions:
        return Criterion(status="not evaluated", note="no served contracts or no sessions of the split's frames")
    seen = {m: None if training.get(m) is None else sorted(sessions & set(training.get(m) or ())) for m in models}
    bad = {m: s for m, s in seen.items() if s}
    undeclared = [m for m, s in seen.items() if s is None]
    tally = {"sessions": len(sessions)}
    if bad:
        return Criterion(status="fail", tally=tally, keys=tuple(sorted({x for s in bad.values() for x in s})),
                         note="; ".join(f"{m} was trained on {split} session(s) {', '.join(s)}"
                                        for m, s in bad.items()))
    if undeclared:
        return Criterion(status="not evaluated", tally=tally,
                         note="pending: no training_sessions declared in the card(s) of " + ", ".join(undeclared))
    return Criterion(status="pass", tally=tally)


def _refresh(timings: Timings | None, *, limit: float, cand: str) -> Criterion:
    """Criterion 8 of the module docstring."""
    if timings is None:
        return Criterion(status="not evaluated", limit=limit,
                         note=f"pending: no whole-refresh timings of {cand} (record capture-to-handoff times on the "
                              "serving runtime; candor gate run --refresh FILE; docs/stats.md)")
    s = quantile_bound(timings.ms)
    numbers: dict[str, Any] = {"candidate": s.point, "bound": s.upper, "limit": limit, "tally": {"refreshes": s.n}}
    if s.upper is None:
        least = next(n for n in range(1, 1000) if upper_rank(n) is not None)
        return Criterion(status="fail", note=f"{s.n} refreshes cannot bound a p95 (at least {least})", **numbers)
    if s.upper <= limit:
        return Criterion(status="pass", note=f"on {timings.host}", **numbers)
    what = "p95 above the limit" if s.point > limit else "not shown: the p95's 95% upper bound is above the limit"
    return Criterion(status="fail", note=f"{what} (on {timings.host})", **numbers)


def _inference_latency(latency: Mapping[str, Mapping[str, Any]] | None, *, ref: str, cand: str, set_name: str,
                       tolerance: float) -> Criterion:
    """Criterion 9 of the module docstring."""
    how = (f"candor latency --set {set_name} --out metrics/latency/{set_name} times both in one run; "
           "candor gate run --latency metrics/latency reads it")
    if latency is None or ref not in latency or cand not in latency:
        return Criterion(status="not evaluated", limit=tolerance, note=f"pending: {how}")
    a, b = latency[ref], latency[cand]
    differ = incomparable(a, b)
    if differ:
        return Criterion(status="not evaluated", limit=tolerance, keys=tuple(differ),
                         note="not comparable (measured apart: " + ", ".join(differ) + f"); {how}")
    pa, pb = float(a["end_to_end"]["p95_ms"]), float(b["end_to_end"]["p95_ms"])
    ok = pb <= pa * (1 + tolerance)
    return Criterion(status="pass" if ok else "fail", reference=pa, candidate=pb, limit=tolerance,
                     note=None if ok else f"decoded-image p95 up {pb / pa - 1:+.1%}, beyond the {tolerance:.0%} "
                                          "tolerance (same run, same host)")


READS_SPLIT = ("same_frames_and_labels", "micro_precision_higher", "micro_recall_higher", "micro_f1_higher",
               "critical_recall_non_inferior", "wrong_targets_no_increase", "sessions_held_out")


def evaluate_gate(*, frames: Sequence[Row] | None, labels: Sequence[Row] | None, evidence: Evidence,
                  params: DeclaredGate, params_file: str, critical: Sequence[str], min_support: int,
                  confidence: float, cluster: str = "frame", cluster_of: Mapping[str, str] | None = None) -> GateResult:
    """Evaluate every criterion (module docstring).

    ``frames``/``labels``: parsed per-frame and per-label outcome rows (``None`` when the table
    is absent); ``evidence``: everything else the criteria read (:class:`Evidence`); ``params``:
    the declared gate, read from ``params_file`` (named in the result and its notes);
    ``cluster_of``: frame -> its cluster id, named ``cluster`` (``None``: each frame is its own).
    """
    ref, cand, split = params.reference, params.candidate, params.split
    of = dict(cluster_of or {})
    crit: dict[str, Criterion] = {"reference_reproduced": _reproduced(evidence.frozen.get(ref), ref=ref)}
    per_class: dict[str, ClassResult] = {}
    absent = "per-frame or per-label outcome table absent"

    if frames is None or labels is None:
        crit["same_frames_and_labels"] = Criterion(status="not evaluated", note=absent)
    else:
        crit["same_frames_and_labels"] = _same_frames_and_labels(frames, labels, ref=ref, cand=cand, split=split)
    crit["served_contract_fixed"] = _contract(evidence.contract_keys, comparison=params.comparison)
    if frames is None or labels is None:
        for name in ("micro_precision_higher", "micro_recall_higher", "micro_f1_higher",
                     "critical_recall_non_inferior"):
            crit[name] = Criterion(status="not evaluated", note=absent)
    else:
        crit |= _micro(frames, labels, ref=ref, cand=cand, split=split, alpha=params.alpha, confidence=confidence,
                       cluster=cluster, of=of, declared=params.improvement)
        per_class = per_class_results(labels, ref=ref, cand=cand, split=split, alpha=params.alpha,
                                      min_support=min_support, confidence=confidence, cluster=cluster,
                                      cluster_of=of)
        crit["critical_recall_non_inferior"] = _critical(per_class, critical, margin=params.max_recall_drop,
                                                         unqualified=params.unqualified, min_support=min_support)

    wa, wb = evidence.wrong_targets.get(ref), evidence.wrong_targets.get(cand)
    known = wa is not None and wb is not None
    crit["wrong_targets_no_increase"] = Criterion(
        status="not evaluated" if wa is None or wb is None else "pass" if wb <= wa else "fail",
        reference=wa, candidate=wb, note=None if known else "wrong targets not found in the detection metrics")
    sessions = {str(r["session"]) for r in _rows(frames or [], model=ref, split=split) if r.get("session")}
    crit["sessions_held_out"] = _held_out(evidence.training, sessions, models=(ref, cand), split=split)
    crit["refresh_p95"] = _refresh(evidence.refresh, limit=params.refresh_p95_ms, cand=cand)
    crit["inference_latency_no_increase"] = _inference_latency(
        evidence.latency, ref=ref, cand=cand, set_name=params.set, tolerance=params.latency_tolerance)
    crit = {n: replace(c, split=split) if n in READS_SPLIT else c for n, c in crit.items()}

    waived = set(params.waive)                  # GateParams.waive never names same_frames_and_labels
    crit = {n: replace(c, status="waived",
                       note=f"waived by {params_file}:gate.waive" + (f" ({c.status}: {c.note})" if c.note else
                                                                     f" ({c.status})"))
            if n in waived else c for n, c in crit.items()}
    return GateResult(set=params.set, reference=ref, candidate=cand, split=split, alpha=params.alpha,
                      critical=tuple(critical), min_support=min_support, criteria=crit, per_class=per_class,
                      params_file=params_file,
                      cluster=cluster, improvement=params.improvement, max_recall_drop=params.max_recall_drop,
                      unqualified=params.unqualified, waive=tuple(params.waive), comparison=params.comparison,
                      refresh_p95_ms=params.refresh_p95_ms, latency_tolerance=params.latency_tolerance)


def latency_diagnostic(doc: Any, *, where: str, onnx_sha256: str | None) -> Mapping[str, Any] | None:
    """A latency diagnostic (written by ``candor latency``) when it was taken on the model file
    ``onnx_sha256``; ``None`` (the criterion is then pending) when it was taken on another model
    file (or that is unknown): a stale figure must never count. A document without a numeric
    ``end_to_end.p95_ms`` is an InputError naming ``where``.
    """
    p95 = doc.get("end_to_end", {}).get("p95_ms") if isinstance(doc, Mapping) else None
    if not isinstance(p95, (int, float)) or isinstance(p95, bool) or not p95 > 0:
        raise fail(where, "not a latency diagnostic", expected="end_to_end.p95_ms > 0 (written by candor latency)",
                   got=p95)
    if onnx_sha256 is None or doc.get("onnx_sha256") != onnx_sha256:
        return None
    return doc


def find_wrong_targets(doc: Any, *, split: str) -> int | None:
    """Total wrong targets on ``split`` of a detection metrics document (``<split>.critical.total.wrong``,
    as the detection scorer writes it); ``None`` when absent."""
    node = doc
    for key in (split, "critical", "total", "wrong"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, int) and not isinstance(node, bool) else None
