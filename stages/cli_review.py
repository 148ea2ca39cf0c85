"""What the stats and gate stages read from params alike: the gate's settings, checked once.

Not a stage: the glue two stages share (``stages/cli_*.py``). The library takes the settings as a
value (:class:`candor.review.gate_views.GateSettings`) and never reads params itself.
"""
from __future__ import annotations

from candor.common.params import section
from candor.detection.config import DetectorParams
from candor.review.gate_views import GateSettings, MatchView, StatsView
from candor.review.params import GateParams


def read_gate_settings(params: str) -> GateSettings:
    """The sections of the params file ``params`` the gate reads (``gate``; the views of ``stats`` and
    ``match``; ``detector``), each validated by its model (an error names the file and key)."""
    return GateSettings(gate=section(GateParams, "gate", path=params), stats=section(StatsView, "stats", path=params),
                        match=section(MatchView, "match", path=params),
                        detector=section(DetectorParams, "detector", path=params), where=params)
