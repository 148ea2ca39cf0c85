"""The params sections the statistics stages own (``params.yaml: stats`` and ``gate``), with their one set of defaults.

The gate's read-only views of keys owned by other stages are in :mod:`candor.stats.gate_views`.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from candor.stats.rates import CONFIDENCE


class Reference(BaseModel):
    """``stats.reference``: the lots tracks' reference candidate. Each detection set's reference is
    its first model (``detector.sets``; :func:`candor.stats.collect.references`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    lots: str = "prompt-a"


class StatsParams(BaseModel):
    """``params.yaml: stats``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    confidence: float = Field(default=CONFIDENCE, gt=0.0, lt=1.0)
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    reference: Reference = Reference()


class GateParams(BaseModel):
    """``params.yaml: gate``: the release gate, declared before a candidate is scored."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    set: str = "detector"
    reference: str = "demo-v1"
    candidate: str = "demo-v2"
    split: str = "test"
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    latency_p95_ms: float = Field(default=2000.0, gt=0.0)
