"""The params sections the statistics stages own (``stats`` and ``gate``), with their one set of defaults.

The gate's read-only views of keys owned by other stages are in :mod:`candor_eval.review.gate_views`.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from candor_eval.common.params import Number, Probability
from candor_eval.detection.config import ClusterView
from candor_eval.stats.rates import CONFIDENCE


class Reference(BaseModel):
    """``stats.reference``: the lots tracks' reference candidate. ``None`` (the default): the one
    candidate of ``identify.candidates`` when there is exactly one, no lots track when there is none;
    with more, the stats stage asks for it (``candor_eval.stages.cli_review.lots_reference``). Each
    detection set's reference is its first model (``detector.sets``;
    :func:`candor_eval.review.collect.references`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    lots: str | None = None


class Cluster(ClusterView):
    """``stats.cluster``: what the units of a track cluster in (docs/stats.md, "Units and clusters").

    ``detection``: ``frame`` (the labels and detections of one frame) or ``session`` (the frame's
    capture session, its ``session`` column; a split then needs at least
    :func:`~candor_eval.stats.clusters.min_clusters` ``(alpha)`` sessions), for every detection set
    unless ``by_set`` names another for a set (detection scoring reads these keys through
    :class:`~candor_eval.detection.config.ClusterView`); ``fields``:
    ``case`` (the fields of one case). Lots are their own clusters.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    fields: Literal["case"] = "case"


class StatsParams(BaseModel):
    """The ``stats`` section of the params file."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    confidence: Probability = CONFIDENCE
    alpha: Probability = 0.05
    reference: Reference = Reference()
    cluster: Cluster = Cluster()


class GateParams(BaseModel):
    """The ``gate`` section of the params file: the release gate, declared before a candidate is scored
    (:mod:`candor_eval.review.gate`): ``set``, ``reference`` and ``candidate`` (the detection set and
    its two models compared; ``None``, the default: the one set of ``detector.sets`` when there is
    exactly one, and its first and second model when it has exactly two; resolved by the stages,
    ``candor_eval.stages.cli_review.resolve_gate``, into a :class:`DeclaredGate`), ``improvement``
    (``shown``: each micro difference must also reach alpha; ``higher``: the point estimate alone,
    not noise-controlled), ``max_recall_drop`` (the non-inferiority margin of each critical class),
    ``unqualified`` (what a critical class too small to show anything does to the gate),
    ``comparison`` (``weights``: the served contract must be equal; ``package``: whole packages
    compared deliberately), ``refresh_p95_ms`` (the whole-refresh p95 limit),
    ``latency_tolerance`` (the decoded-image p95 increase allowed, relative to the reference
    timed in the same run) and ``waive`` (criteria that do not count, each a visible line in
    review)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    set: str | None = None
    reference: str | None = None
    candidate: str | None = None
    split: str = "test"
    alpha: Probability = 0.05
    refresh_p95_ms: Number = Field(default=2000.0, gt=0.0, allow_inf_nan=False)
    latency_tolerance: Number = Field(default=0.1, ge=0.0, allow_inf_nan=False)
    comparison: Literal["weights", "package"] = "weights"
    improvement: Literal["shown", "higher"] = "shown"
    max_recall_drop: Probability = 0.05
    unqualified: Literal["fail", "waive"] = "fail"
    waive: list[Literal["reference_reproduced", "served_contract_fixed", "micro_precision_higher",
                        "micro_recall_higher", "micro_f1_higher", "critical_recall_non_inferior",
                        "wrong_targets_no_increase", "sessions_held_out", "refresh_p95",
                        "inference_latency_no_increase"]] = []

    @model_validator(mode="before")
    @classmethod
    def renamed(cls, data: Any) -> Any:
        """``latency_p95_ms`` compared a machine's decoded-image diagnostic with the refresh limit; the
        limit is now ``refresh_p95_ms``, checked against whole-refresh timings."""
        if isinstance(data, dict) and "latency_p95_ms" in data:
            raise ValueError("latency_p95_ms is now refresh_p95_ms (the p95 of a whole requested refresh, "
                             "recorded on the serving runtime; docs/stats.md)")
        return data


class DeclaredGate(GateParams):
    """The ``gate`` section with its set, reference and candidate resolved (named, or their defaults
    taken from ``detector.sets``): what the gate evaluates (:func:`candor_eval.review.gate.evaluate_gate`)."""

    set: str
    reference: str
    candidate: str
