"""What the stats and gate stages read from params alike: the gate's settings, checked once.

Not a stage: the glue two stages share (``stages/cli_*.py``). The library takes the settings as a
value (:class:`candor.review.gate_views.GateSettings`) and never reads params itself.
"""
from __future__ import annotations

from candor.common.params import section
from candor.detection.config import DetectorParams, MatchParams
from candor.review.gate_views import GateSettings, MatchView, StatsView
from candor.review.params import GateParams, StatsParams


def read_gate_settings(params: str) -> GateSettings:
    """The sections of the params file ``params`` the gate reads (``gate``; the views of ``stats`` and
    ``match``; ``detector``). Each section is validated whole by its owner's model first, so a
    misspelled key the gate does not read (``match.critcal``) is an error naming the file and key
    here too, not a silent default when the gate runs alone (``make gate``)."""
    section(StatsParams, "stats", path=params)
    section(MatchParams, "match", path=params)
    return GateSettings(gate=section(GateParams, "gate", path=params), stats=section(StatsView, "stats", path=params),
                        match=section(MatchView, "match", path=params),
                        detector=section(DetectorParams, "detector", path=params), where=params)
