"""The headline metrics: what a reviewer reads first, per track and candidate (``metrics/headline.json``).

Pure: no I/O. About ten numbers per candidate, each taken as it is from the file that counts it
(nothing is recomputed here), so that ``dvc metrics diff`` and ``dvc exp show`` list the answer to
"did it get better, and is that more than luck" instead of every per-class count:

- ``detection.<set>.<model>``: on the ``test`` split, micro ``precision``, ``recall``, ``f1`` and
  ``fp_per_frame``, and ``wrong_targets`` (critical labels whose best match is another class),
  from the model's metrics file; for a model other than the set's reference, the paired p-values
  against it: ``p_label_found`` (unit label), ``p_frame_error_free`` (unit frame),
  ``p_precision`` (micro precision, unit detection: the sign-flip test of its linearised
  difference, ``stats.json`` ``precision``) and ``p_false_positives`` (false positives per frame,
  fewer is better: a test of the count, not of precision), each a sign-flip test over the set's
  clusters, and ``verdict`` (of ``label_found``); and ``dev``: the same
  micro ``precision``, ``recall`` and ``f1`` on the ``dev`` split, the figures a sweep ranks
  experiments by (thresholds are tuned on dev and never on the test split, which only gives
  the verdict);
- ``lots.<candidate>``: identification ``hit_rate``, ``wrong_rate`` and ``hedged_rate`` (unit lot),
  ``count_exact_rate``, the field expectations' ``fields_score`` and ``fields_met_rate``, the
  valuation's ``in_band_rate``, ``median_ratio`` and ``worst_error``; for a candidate other than
  the reference, ``p_hit``, ``p_not_wrong``, ``p_fields`` and ``p_in_band`` and ``verdict`` (of ``hit``);
- ``gate``: the predeclared gate's ``set``, ``reference``, ``candidate``, ``split``, ``verdict``
  (``PASSED``, ``FAILED`` or ``NOT EVALUATED``), ``passed`` and ``pending`` (the criteria whose
  input is missing) (``null`` when it was not evaluated);
- ``cluster``: what each track's p-values and intervals are computed over (``detection.<set>``:
  ``frame`` or ``session``; ``fields``: ``case``; the lots tracks: ``lot``), so that p-values that
  change with ``stats.cluster`` say why; ``p_values``: a note on what the ``p_*`` numbers are.

A project has the blocks of its own tracks only: ``detection`` and ``gate`` when it has a detection
set (or a gate), ``lots`` when it has a lots reference. A number whose source is absent is
``null``. Headline p-values are single tests, not adjusted for multiplicity (docs/stats.md, "Multiple comparisons").
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from candor_eval.review.gate_result import GateResult
from candor_eval.review.stats_file import StatsFile

Docs = Mapping[str, tuple[str, Any]]        # file key -> (path, document), as candor_eval.review.collect.read_metrics


def dig(doc: Any, *path: str) -> Any:
    """``doc[path[0]][path[1]]...``, or ``None`` where a step is missing or not a mapping.

    >>> dig({"a": {"b": 2}}, "a", "b"), dig({"a": 1}, "a", "b")
    (2, None)
    """
    for key in path:
        if not isinstance(doc, Mapping) or key not in doc:
            return None
        doc = doc[key]
    return doc


def paired_p(stats: StatsFile, metric: str, candidate: str) -> float | None:
    """The paired p of ``candidate`` for ``metric`` in the stats file (``None`` when not compared)."""
    comp = stats.paired.get(metric)
    return None if comp is None or candidate not in comp.candidates else comp.candidates[candidate].p


def versus(stats: StatsFile, candidate: str, reference: str, *, p: Mapping[str, str], verdict_of: str) -> dict:
    """The ``p_*`` entries and ``verdict`` of a candidate against its reference (empty for the reference)."""
    if candidate == reference:
        return {}
    out: dict[str, Any] = {name: paired_p(stats, metric, candidate) for name, metric in p.items()}
    comp = stats.paired.get(verdict_of)
    out["verdict"] = comp.candidates[candidate].verdict if comp and candidate in comp.candidates else None
    return out


def detection_headline(stats: StatsFile, docs: Docs, sets: Mapping[str, list[str]]) -> dict:
    """``detection.<set>.<model>`` blocks (module docstring)."""
    out: dict[str, dict] = {}
    for name, models in sets.items():
        track = f"detection.{name}"
        for model in models:
            doc = docs.get(f"{track}.{model}", ("", None))[1]
            block = {k: dig(doc, "test", "micro", k) for k in ("precision", "recall", "f1", "fp_per_frame")}
            block["wrong_targets"] = dig(doc, "test", "critical", "total", "wrong")
            block["dev"] = {k: dig(doc, "dev", "micro", k) for k in ("precision", "recall", "f1", "fp_per_frame")}
            block |= versus(stats, model, models[0],
                            p={"p_label_found": f"{track}.test.label_found",
                               "p_frame_error_free": f"{track}.test.frame_error_free",
                               "p_false_positives": f"{track}.test.false_positives"},
                            verdict_of=f"{track}.test.label_found")
            if model != models[0]:
                block["p_precision"] = dig(stats.precision, f"{track}.test.precision", "candidates", model, "p")
            out.setdefault(name, {})[model] = block
    return out


def lots_headline(stats: StatsFile, docs: Docs, candidates: list[str], reference: str) -> dict:
    """``lots.<candidate>`` blocks (module docstring)."""
    ident = docs.get("identification", ("", None))[1]
    valuation = docs.get("valuation", ("", None))[1]
    out = {}
    for c in candidates:
        fields = docs.get(f"fields.{c}", ("", None))[1]
        block = {k: dig(ident, "identification", c, "all", k) for k in ("hit_rate", "wrong_rate", "hedged_rate")}
        block["count_exact_rate"] = dig(ident, "identification", c, "count", "all", "exact_rate")
        block["fields_score"] = dig(fields, "overall")
        block["fields_met_rate"] = dig(fields, "fields_met", "rate")
        block |= {k: dig(valuation, c, k) for k in ("in_band_rate", "median_ratio", "worst_error")}
        block |= versus(stats, c, reference,
                        p={"p_hit": "identification.hit", "p_not_wrong": "identification.not_wrong",
                           "p_fields": "fields.majority", "p_in_band": "valuation.in_band"},
                        verdict_of="identification.hit")
        out[c] = block
    return out


def headline(stats: StatsFile, gate: GateResult | None, docs: Docs, *, sets: Mapping[str, list[str]],
             candidates: list[str], reference: str | None) -> dict:
    """The whole of ``metrics/headline.json`` (module docstring): ``reference`` is the lots
    reference (``None``: no lots track, no ``lots`` block)."""
    out: dict[str, Any] = {}
    if sets:
        out["detection"] = detection_headline(stats, docs, sets)
    if reference is not None:
        out["lots"] = lots_headline(stats, docs, candidates, reference)
    if sets or gate is not None:
        out["gate"] = None if gate is None else {"set": gate.set, "reference": gate.reference,
                                                 "candidate": gate.candidate, "split": gate.split,
                                                 "verdict": gate.verdict, "passed": gate.passed,
                                                 "pending": gate.pending}
    out["cluster"] = {f"detection.{name}": stats.cluster.get(f"detection.{name}", "frame") for name in sets} | (
        {"identification": "lot", "fields": stats.cluster.get("fields", "case"), "valuation": "lot"}
        if reference is not None else {})
    out["p_values"] = P_VALUES
    return out


P_VALUES = ("each p_* is the two-sided exact sign-flip test over the clusters named in cluster, a single test "
            "unadjusted for multiplicity (per-class and per-tier families are Holm-adjusted in stats.json, p_holm)")
