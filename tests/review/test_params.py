"""candor_eval/review/params.py: the ``stats`` and ``gate`` sections of params.yaml, their one set of
defaults, unknown keys refused (``extra="forbid"``) and the declared ranges."""
from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from candor_eval.common.errors import InputError
from candor_eval.common.params import validate
from candor_eval.review.params import Cluster, DeclaredGate, GateParams, Reference, StatsParams


def error_locs(err: ValidationError) -> list[tuple]:
    return [e["loc"] for e in err.errors()]


def test_stats_defaults():
    """An empty ``stats`` section: 95% intervals, alpha 0.05, no lots reference named (the stages
    take the one candidate, or ask), detection units clustered by frame in every set, fields by case."""
    s = StatsParams()
    assert (s.confidence, s.alpha, s.reference.lots) == (0.95, 0.05, None)
    assert (s.cluster.detection, s.cluster.by_set, s.cluster.fields) == ("frame", {}, "case")
    assert StatsParams.model_validate({}) == s


def test_gate_defaults():
    """An empty ``gate`` section: no set or model named (the stages take the one set and its two
    models, or ask), the test split, every improvement shown at alpha 0.05, a 5-point recall
    margin, unqualified classes fail, nothing waived."""
    g = GateParams()
    assert (g.set, g.reference, g.candidate, g.split) == (None, None, None, "test")
    assert (g.alpha, g.refresh_p95_ms, g.improvement, g.max_recall_drop, g.unqualified, g.waive) == \
        (0.05, 2000.0, "shown", 0.05, "fail", [])


def test_a_set_may_cluster_by_session_while_the_others_cluster_by_frame():
    """``by_set`` names another cluster for one set; every other set keeps ``detection``."""
    c = Cluster(detection="frame", by_set={"night": "session"})
    assert (c.detection_of("night"), c.detection_of("detector")) == ("session", "frame")
    assert Cluster(detection="session").detection_of("detector") == "session"
    from candor_eval.stats.clusters import min_clusters
    assert min_clusters(StatsParams().alpha) == 6


@pytest.mark.parametrize("model,data,loc", [
    (StatsParams, {"confidance": 0.9}, ("confidance",)),
    (StatsParams, {"cluster": {"detecton": "session"}}, ("cluster", "detecton")),    # forbid, unlike ClusterView
    (StatsParams, {"reference": {"detection": "demo-v1"}}, ("reference", "detection")),
    (GateParams, {"latency_ms": 100}, ("latency_ms",)),
    (Cluster, {"frames": "case"}, ("frames",)),
    (Reference, {"lot": "prompt-b"}, ("lot",)),
])
def test_an_unknown_key_is_refused(model, data, loc):
    """A misspelled key is an error, never a silently kept default."""
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    assert error_locs(info.value) == [loc]
    assert info.value.errors()[0]["type"] == "extra_forbidden"


def test_a_misspelled_nested_key_names_its_path_and_the_nearest_key():
    """Through the params boundary (:func:`candor_eval.common.params.validate`) the error names the file,
    the dotted key and suggests the nearest key of the nested section."""
    with pytest.raises(InputError) as info:
        validate(StatsParams, {"cluster": {"detecton": "session"}}, where="params.yaml:stats")
    (problem,) = info.value.problems
    assert problem.where == "params.yaml:stats.cluster.detecton"
    assert "did you mean 'detection'?" in problem.what


@pytest.mark.parametrize("field", ["confidence", "alpha"])
@pytest.mark.parametrize("value,ok", [(0.0, False), (1e-9, True), (0.5, True), (0.999, True), (1.0, False),
                                      (1.5, False), (-0.05, False), (math.nan, False), (math.inf, False)])
def test_stats_probabilities_are_strictly_between_0_and_1(field, value, ok):
    """``confidence`` and ``alpha`` are probabilities in the open interval (0, 1), finite."""
    if ok:
        assert getattr(StatsParams.model_validate({field: value}), field) == value
    else:
        with pytest.raises(ValidationError) as info:
            StatsParams.model_validate({field: value})
        assert error_locs(info.value) == [(field,)]


@pytest.mark.parametrize("data,loc", [
    ({"alpha": 0.0}, ("alpha",)),
    ({"alpha": 1.0}, ("alpha",)),
    ({"max_recall_drop": 0.0}, ("max_recall_drop",)),
    ({"max_recall_drop": 1.0}, ("max_recall_drop",)),
    ({"refresh_p95_ms": 0.0}, ("refresh_p95_ms",)),           # gt 0
    ({"refresh_p95_ms": -5}, ("refresh_p95_ms",)),
    ({"refresh_p95_ms": math.inf}, ("refresh_p95_ms",)),
    ({"refresh_p95_ms": math.nan}, ("refresh_p95_ms",)),
    ({"improvement": "better"}, ("improvement",)),
    ({"unqualified": "pass"}, ("unqualified",)),
    ({"waive": ["same_frames_and_labels"]}, ("waive", 0)),   # the one criterion that cannot be waived
    ({"waive": ["refresh_p95", "latency"]}, ("waive", 1)),
])
def test_gate_values_out_of_range_are_refused(data, loc):
    """Each gate key has its range: probabilities in (0, 1), a positive finite latency limit, the
    declared modes, and only waivable criteria in ``waive``."""
    with pytest.raises(ValidationError) as info:
        GateParams.model_validate(data)
    assert error_locs(info.value) == [loc]


def test_gate_values_in_range_are_kept():
    """The boundary values just inside each range are accepted as given."""
    g = GateParams(refresh_p95_ms=0.5, max_recall_drop=0.2, improvement="higher", unqualified="waive",
                   waive=["refresh_p95", "wrong_targets_no_increase"])
    assert (g.refresh_p95_ms, g.max_recall_drop, g.improvement, g.unqualified) == (0.5, 0.2, "higher", "waive")
    assert g.waive == ["refresh_p95", "wrong_targets_no_increase"]


@pytest.mark.parametrize("data,loc", [
    ({"detection": "lot"}, ("detection",)),
    ({"by_set": {"night": "case"}}, ("by_set", "night")),
    ({"fields": "frame"}, ("fields",)),
])
def test_cluster_values_are_the_declared_ones(data, loc):
    """Detection units cluster by ``frame`` or ``session``; fields only by ``case``."""
    with pytest.raises(ValidationError) as info:
        Cluster.model_validate(data)
    assert error_locs(info.value) == [loc]


def test_the_sections_are_frozen():
    """A params value cannot be changed after it is read (no mutable config)."""
    with pytest.raises(ValidationError):
        GateParams().alpha = 0.1
    with pytest.raises(ValidationError):
        StatsParams().cluster.detection = "session"


def test_a_declared_gate_names_its_set_and_models():
    """:class:`DeclaredGate`: the section with its set, reference and candidate required (resolved by
    the stages); the other keys keep the section's defaults."""
    g = DeclaredGate(set="birds", reference="old", candidate="new")
    assert (g.set, g.reference, g.candidate, g.split, g.waive) == ("birds", "old", "new", "test", [])
    with pytest.raises(ValidationError) as info:
        DeclaredGate(set="birds", reference="old")
    assert error_locs(info.value) == [("candidate",)]
