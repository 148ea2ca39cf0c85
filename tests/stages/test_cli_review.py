"""stages/cli_review.py: :func:`read_gate_settings`, the gate's sections of a params file read and
validated once (``gate``, the views of ``stats`` and ``match``, ``detector``); an error names the
file and the key."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.config import DetectorParams
from candor_eval.review.gate_views import GateSettings
from candor_eval.review.params import GateParams, StatsParams
from candor_eval.stages.cli_review import lots_reference, read_gate_settings, resolve_gate

PARAMS = """\
stats:
  confidence: 0.9
  alpha: 0.01
  cluster: {detection: session, by_set: {night: frame}}
gate: {set: night, reference: n1, candidate: n2, split: dev, max_recall_drop: 0.1, waive: [refresh_p95]}
detector: {sets: {detector: [demo-v1, demo-v2], night: [n1, n2]}, floor: 0.1}
match: {critical: [deer, boar], min_support: 4, iou: 0.45}
identify: {}
"""


def params_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "params.yaml"
    path.write_text(text)
    return str(path)


def test_the_four_sections_are_read_into_one_value(tmp_path):
    """Each section as written, ``where`` the file; keys owned by other stages (``stats.alpha``,
    ``match.iou``) are read by their owners, not here."""
    path = params_file(tmp_path, PARAMS)
    s = read_gate_settings(path)
    assert isinstance(s, GateSettings) and s.where == path
    assert (s.gate.set, s.gate.reference, s.gate.candidate, s.gate.split) == ("night", "n1", "n2", "dev")
    assert (s.gate.max_recall_drop, s.gate.waive, s.gate.alpha) == (0.1, ["refresh_p95"], 0.05)
    assert s.stats.confidence == 0.9 and s.stats.cluster.detection_of("night") == "frame"
    assert s.stats.cluster.detection_of("detector") == "session"
    assert (s.match.critical, s.match.min_support) == (["deer", "boar"], 4)
    assert s.detector.sets == {"detector": ["demo-v1", "demo-v2"], "night": ["n1", "n2"]} and s.detector.floor == 0.1
    assert not hasattr(s.stats, "alpha") and not hasattr(s.match, "iou")


def test_absent_sections_read_as_their_defaults(tmp_path):
    """A params file with one detection set of two models and nothing else: the gate compares them
    on the test split, 95% intervals by frame, no critical class."""
    s = read_gate_settings(params_file(tmp_path, "detector: {sets: {birds: [old, new]}}\n"))
    assert s is not None
    assert (s.gate.set, s.gate.reference, s.gate.candidate, s.gate.split) == ("birds", "old", "new", "test")
    assert (s.stats.confidence, s.stats.cluster.detection, s.match.critical, s.match.min_support) == \
        (0.95, "frame", [], 10)


def test_no_detection_set_and_no_gate_set_means_no_gate(tmp_path):
    """A project without the detector track: no gate settings (the gate is not evaluated), no error."""
    assert read_gate_settings(params_file(tmp_path, "{}\n")) is None
    assert read_gate_settings(params_file(tmp_path, "identify: {candidates: [ocr]}\n")) is None


DETECTOR = DetectorParams(sets={"birds": ["old", "new"], "night": ["n1", "n2", "n3"], "solo": ["s1"]})


@pytest.mark.parametrize("gate, expected", [
    ({"set": "birds"}, ("birds", "old", "new")),                       # two models: first against second
    ({"set": "birds", "reference": "new", "candidate": "old"}, ("birds", "new", "old")),
    ({"set": "night", "reference": "n3", "candidate": "n1"}, ("night", "n3", "n1")),
    ({"set": "night", "reference": "n9", "candidate": "n1"}, ("night", "n9", "n1")),   # checked by check_gate
])
def test_resolve_gate_names_the_set_and_its_two_models(gate, expected):
    g = resolve_gate(GateParams(**gate, waive=["refresh_p95"]), DETECTOR, where="eval/params.yaml")
    assert (g.set, g.reference, g.candidate) == expected and g.waive == ["refresh_p95"]
    one = resolve_gate(GateParams(), DetectorParams(sets={"birds": ["old", "new"]}), where="eval/params.yaml")
    assert (one.set, one.reference, one.candidate) == ("birds", "old", "new")


@pytest.mark.parametrize("gate, key, what, choices", [
    ({}, "gate.set", "not set, and detector.sets has 3 detection sets", "one of: birds, night, solo"),
    ({"set": "night"}, "gate.reference", "not set, and detection set 'night' has 3 models", "one of: n1, n2, n3"),
    ({"set": "night", "reference": "n1"}, "gate.candidate", "detection set 'night' has 3 models", "one of: n1, n2"),
    ({"set": "solo", "candidate": "s1"}, "gate.reference", "detection set 'solo' has 1 model:", "one of: s1"),
    ({"set": "fish"}, "gate.set", "unknown detection set", "birds, night, solo"),
    ({"set": "birds", "reference": "new"}, "gate.candidate", "the candidate is the reference", "old"),
])
def test_resolve_gate_refuses_what_it_cannot_choose_naming_the_key_and_the_names(gate, key, what, choices):
    with pytest.raises(InputError) as info:
        resolve_gate(GateParams(**gate), DETECTOR, where="eval/params.yaml")
    (problem,) = info.value.problems
    assert problem.where == f"eval/params.yaml:{key}" and what in problem.what
    assert choices in (problem.expected or "")


def test_a_set_of_one_model_has_no_gate_yet():
    """A new project's first model has nothing to be compared with: no gate, not an error."""
    assert resolve_gate(GateParams(set="solo"), DETECTOR, where="eval/params.yaml") is None


def test_resolve_gate_names_the_missing_detection_sets_when_the_gate_names_a_set():
    with pytest.raises(InputError, match=r"p.yaml:detector.sets: no detection set configured"):
        resolve_gate(GateParams(set="birds"), DetectorParams(), where="p.yaml")


@pytest.mark.parametrize("reference, candidates, expected", [
    ("b", ["a", "b"], "b"),            # named: kept (checked against the outcome tables by the stats stage)
    ("z", [], "z"),
    (None, ["ocr"], "ocr"),            # the one candidate
    (None, [], None),                  # no candidate: no lots track
])
def test_lots_reference(reference, candidates, expected):
    stats = StatsParams.model_validate({"reference": {"lots": reference}})
    assert lots_reference(stats, candidates, where="p.yaml") == expected


def test_lots_reference_among_several_candidates_must_be_named():
    with pytest.raises(InputError) as info:
        lots_reference(StatsParams(), ["prompt-x", "prompt-y"], where="eval/params.yaml")
    (problem,) = info.value.problems
    assert problem.where == "eval/params.yaml:stats.reference.lots"
    assert "identify.candidates lists 2 candidates" in problem.what and problem.expected == "one of: prompt-x, prompt-y"


@pytest.mark.parametrize("old,new,key,hint", [
    ("max_recall_drop: 0.1", "max_recall_drp: 0.1", "gate.max_recall_drp", "did you mean 'max_recall_drop'?"),
    ("split: dev", "splt: dev", "gate.splt", "did you mean 'split'?"),
    ("floor: 0.1", "flor: 0.1", "detector.flor", "did you mean 'floor'?"),
    ("cluster: {detection:", "cluster: {detecton:", "stats.cluster.detecton", "did you mean 'detection'?"),
])
def test_a_misspelled_key_is_an_input_error_naming_the_file_and_key(tmp_path, old, new, key, hint):
    """A misspelled key of a section the gate validates is refused, naming ``<file>:<dotted key>``
    and suggesting the nearest key."""
    assert old in PARAMS
    path = params_file(tmp_path, PARAMS.replace(old, new))
    with pytest.raises(InputError) as info:
        read_gate_settings(path)
    (problem,) = info.value.problems
    assert problem.where == f"{path}:{key}" and hint in problem.what


@pytest.mark.parametrize("old,new,key", [
    ("confidence: 0.9", "confidence: 1.5", "stats.confidence"),
    ("min_support: 4", "min_support: -4", "match.min_support"),
    ("waive: [refresh_p95]", "waive: [latency]", "gate.waive.0"),
    ("night: [n1, n2]", "night: []", "detector.sets"),
])
def test_a_value_out_of_range_names_the_file_and_key(tmp_path, old, new, key):
    """Values are checked by the sections' models; the error names the file and the key."""
    path = params_file(tmp_path, PARAMS.replace(old, new))
    with pytest.raises(InputError) as info:
        read_gate_settings(path)
    assert [p.where for p in info.value.problems] == [f"{path}:{key}"]


def test_an_unknown_section_names_the_file_and_the_nearest_section(tmp_path):
    """A misspelled top-level section is refused, not ignored."""
    path = params_file(tmp_path, PARAMS.replace("gate:", "gates:"))
    with pytest.raises(InputError) as info:
        read_gate_settings(path)
    (problem,) = info.value.problems
    assert problem.where == f"{path}:gates" and "did you mean 'gate'?" in problem.what


@pytest.mark.parametrize("text, key", [("stats:\n  confidance: 0.9\n", "stats.confidance"),
                                       ("match:\n  critcal: [deer]\n", "match.critcal")])
def test_a_misspelled_key_of_a_viewed_section_is_named(tmp_path, text, key):
    """The gate reads only some keys of ``stats`` and ``match``, but a typo elsewhere in them is
    still an error naming the file and key (the owners' models validate the whole section)."""
    p = tmp_path / "params.yaml"
    p.write_text(text)
    with pytest.raises(InputError, match=key):
        read_gate_settings(str(p))
