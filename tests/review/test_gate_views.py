"""candor_eval/review/gate_views.py: the gate's read-only views of ``stats`` and ``match`` (other keys
ignored, the owners' defaults, the owners' ranges) and :class:`GateSettings`, the one value the
gate reads from params."""
from __future__ import annotations

import dataclasses
import math

import pytest
from pydantic import ValidationError

from candor_eval.detection.config import DetectorParams, MatchParams
from candor_eval.review.gate_result import ClassResult, Criterion, GateResult
from candor_eval.review.gate_views import GateSettings, MatchView, StatsView, render_console, wants_colour
from candor_eval.review.params import Cluster, DeclaredGate, StatsParams


def test_stats_view_ignores_the_keys_the_gate_does_not_read():
    """``stats.alpha``, ``stats.reference`` and keys the gate has never heard of belong to the stats
    stage: the view reads ``confidence`` and ``cluster`` and ignores the rest."""
    v = StatsView.model_validate({"confidence": 0.9, "alpha": 0.01, "reference": {"lots": "prompt-b"},
                                  "cluster": {"detection": "session"}, "anything": 1})
    assert v.confidence == 0.9 and v.cluster == Cluster(detection="session")
    assert set(v.model_dump()) == {"confidence", "cluster"}


def test_match_view_ignores_the_keys_the_gate_does_not_read():
    """``match.iou`` and ``match.bands`` are the score stage's: the view reads ``critical`` and
    ``min_support`` only."""
    v = MatchView.model_validate({"critical": ["deer", "boar"], "min_support": 3, "iou": 0.45,
                                  "bands": [8.0, 32.0], "other": "x"})
    assert (v.critical, v.min_support) == (["deer", "boar"], 3)
    assert set(v.model_dump()) == {"critical", "min_support"}


def test_the_views_default_to_their_owners_defaults():
    """An absent section reads as its owner would read it: 95% intervals, frames as clusters, no
    critical class, 10 labels for a class to qualify."""
    assert (StatsView().confidence, StatsView().cluster) == (0.95, Cluster())
    assert StatsView().confidence == StatsParams().confidence and StatsView().cluster == StatsParams().cluster
    assert (MatchView().critical, MatchView().min_support) == ([], 10)
    assert MatchView().min_support == MatchParams().min_support and MatchView().critical == MatchParams().critical


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.95, 95, math.nan, math.inf, "high"])
def test_a_bad_confidence_is_refused(confidence):
    """The view checks ``confidence`` as its owner does: a probability strictly between 0 and 1."""
    with pytest.raises(ValidationError) as info:
        StatsView.model_validate({"confidence": confidence})
    assert [e["loc"] for e in info.value.errors()] == [("confidence",)]


@pytest.mark.parametrize("data,loc", [
    ({"min_support": -1}, ("min_support",)),
    ({"min_support": 2.5}, ("min_support",)),
    ({"critical": "deer"}, ("critical",)),
    ({"cluster": {"detection": "lot"}}, ("cluster", "detection")),
])
def test_the_keys_read_keep_their_owners_ranges(data, loc):
    """A negative or fractional ``min_support``, a ``critical`` that is not a list, an unknown cluster:
    refused by the view too (the gate never runs on a value its owner would refuse)."""
    view = StatsView if "cluster" in data else MatchView
    with pytest.raises(ValidationError) as info:
        view.model_validate(data)
    assert [e["loc"] for e in info.value.errors()][:1] == [loc]


def test_min_support_zero_is_allowed():
    """``min_support: 0``: every class qualifies (the lower bound is inclusive)."""
    assert MatchView(min_support=0).min_support == 0


def test_gate_settings_hold_the_four_sections_and_the_file_they_came_from():
    """:class:`GateSettings` is a frozen value: ``gate``, the two views, ``detector`` and ``where``."""
    s = GateSettings(gate=DeclaredGate(set="night", reference="a", candidate="b"), stats=StatsView(confidence=0.9),
                     match=MatchView(critical=["deer"]), detector=DetectorParams(sets={"night": ["a", "b"]}),
                     where="p.yaml")
    assert (s.gate.set, s.stats.confidence, s.match.critical, s.detector.sets, s.where) == \
        ("night", 0.9, ["deer"], {"night": ["a", "b"]}, "p.yaml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.where = "other.yaml"


def gate_result(**criteria) -> GateResult:
    return GateResult(set="s", reference="ref", candidate="cand", split="test", alpha=0.05, critical=("deer",),
                      min_support=10, criteria=criteria, per_class={}, params_file="params.yaml")


def test_the_console_view_puts_each_criterion_on_its_line_and_wraps_what_it_says():
    """Status and name alone on a line; the note and the numbers below, indented, wrapped in 100 columns;
    a class whose recall went up is never a negative "drop"."""
    up = ClassResult("no detectable change", 40, None)
    long_note = "not measured (" + "candor latency --set detector --out metrics/latency/detector " * 3 + ")"
    text = render_console(gate_result(
        micro_f1_higher=Criterion("fail", note="higher, but not distinguishable from noise", diff=0.031,
                                  diff_lo=-0.002, diff_hi=0.063, p=0.0636, reference=0.4898, candidate=0.5205),
        latency_p95=Criterion("not evaluated", note=long_note, limit=2000.0),
        critical_recall_non_inferior=Criterion("pass", limit=0.05, classes={"deer": up})))
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    at = lines.index("FAIL           micro_f1_higher")
    assert lines[at + 1:at + 5] == ["               higher, but not distinguishable from noise",
                                    "               B - A = +0.031 [-0.002, +0.063], p = 0.0636",
                                    "               A (reference): 0.4898", "               B (candidate): 0.5205"]
    at = lines.index("NOT EVALUATED  latency_p95")
    assert lines[at + 1].startswith("               not measured (") and lines[at + 2].startswith(" " * 17 + "latency")
    assert "limit: 2000 ms" in text and "drop up to -" not in text
    assert lines[-1] == "FAILED (failed: micro_f1_higher; pending: latency_p95)" and "\033[" not in text


def test_colour_only_on_a_terminal_that_did_not_ask_for_none(monkeypatch):
    """ANSI colour on the statuses and the verdict when asked; a terminal without ``NO_COLOR`` asks."""
    import io

    coloured = render_console(gate_result(a=Criterion("pass"), b=Criterion("fail")), colour=True)
    assert "\033[32mpass" in coloured and "\033[31mFAIL" in coloured and "\033[31mFAILED (failed: b)\033[0m" in coloured

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wants_colour(Tty(), {}) and wants_colour(Tty(), {"NO_COLOR": ""})
    assert not wants_colour(Tty(), {"NO_COLOR": "1"}) and not wants_colour(io.StringIO(), {})
