"""The keys of sections owned by other stages that the gate reads (``params.yaml``).

Read-only views: ``extra="ignore"`` (the rest of the section is its owner's), defaults are the
owners' (:data:`candor.stats.rates.CONFIDENCE`, :data:`candor.detection.match_defaults.MIN_SUPPORT`).
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from candor.detection.match_defaults import MIN_SUPPORT
from candor.review.params import Cluster
from candor.stats.rates import CONFIDENCE


class StatsView(BaseModel):
    """The keys of ``params.yaml: stats`` the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    confidence: float = Field(default=CONFIDENCE, gt=0.0, lt=1.0)
    cluster: Cluster = Cluster()


class MatchView(BaseModel):
    """The two keys of ``params.yaml: match`` (owned by the score stage) the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    critical: list[str] = []
    min_support: int = Field(default=MIN_SUPPORT, ge=0)
