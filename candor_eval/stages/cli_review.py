"""What the stats and gate stages read from params alike: the gate's settings, checked once.

Not a stage: the glue two stages share (``stages/cli_*.py``). The library takes the settings as a
value (:class:`candor_eval.review.gate_views.GateSettings`) and never reads params itself.
"""
from __future__ import annotations

from candor_eval.common.params import section
from candor_eval.detection.config import DetectorParams, MatchParams
from candor_eval.review.gate_views import GateSettings, MatchView, StatsView
from candor_eval.review.params import GateParams, StatsParams


def read_gate_settings(params: str) -> GateSettings:
    """The sections of the params file ``params`` the gate reads (``gate``; the views of ``stats`` and
    ``match``; ``detector``). ``stats`` and ``match`` are validated whole by their owners' models and
    the views taken from them, so a misspelled key the gate does not read (``match.critcal``) is an
    error naming the file and key here too, not a silent default when the gate runs alone (``make gate``)."""
    stats = section(StatsParams, "stats", path=params)
    match = section(MatchParams, "match", path=params)
    return GateSettings(gate=section(GateParams, "gate", path=params),
                        stats=StatsView(confidence=stats.confidence, cluster=stats.cluster),
                        match=MatchView(critical=list(match.critical), min_support=match.min_support),
                        detector=section(DetectorParams, "detector", path=params), where=params)
