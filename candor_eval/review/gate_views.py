"""The keys of sections owned by other stages that the gate reads (from the params file), and
:class:`GateSettings`, everything the gate reads from params in one value (read by the stages).

Read-only views: ``extra="ignore"`` (the rest of the section is its owner's), defaults are the
owners' (:data:`candor_eval.stats.rates.CONFIDENCE`, :data:`candor_eval.detection.match_defaults.MIN_SUPPORT`).
"""
from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from candor_eval.common.params import Integer, Probability
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.match_defaults import MIN_SUPPORT
from candor_eval.review.params import Cluster, DeclaredGate
from candor_eval.stats.rates import CONFIDENCE


class StatsView(BaseModel):
    """The keys of the ``stats`` section the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    confidence: Probability = CONFIDENCE
    cluster: Cluster = Cluster()


class MatchView(BaseModel):
    """The two keys of the ``match`` section (owned by the score stage) the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    critical: list[str] = []
    min_support: Integer = Field(default=MIN_SUPPORT, ge=0)


@dataclass(frozen=True)
class GateSettings:
    """The params the gate reads: its own section ``gate`` (its set and models resolved:
    ``candor_eval.stages.cli_review.resolve_gate``), the views of ``stats`` and ``match``, and
    ``detector`` (whose sets name the gate's models); ``where`` names the params file, in errors
    and in ``gate.json`` (``predeclared``)."""

    gate: DeclaredGate
    stats: StatsView
    match: MatchView
    detector: DetectorParams
    where: str
