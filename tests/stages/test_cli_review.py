"""stages/cli_review.py: :func:`read_gate_settings`, the gate's sections of a params file read and
validated once (``gate``, the views of ``stats`` and ``match``, ``detector``); an error names the
file and the key."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.gate_views import GateSettings
from candor_eval.stages.cli_review import read_gate_settings

PARAMS = """\
stats:
  confidence: 0.9
  alpha: 0.01
  cluster: {detection: session, by_set: {night: frame}}
gate: {set: night, reference: n1, candidate: n2, split: dev, max_recall_drop: 0.1, waive: [latency_p95]}
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
    assert (s.gate.max_recall_drop, s.gate.waive, s.gate.alpha) == (0.1, ["latency_p95"], 0.05)
    assert s.stats.confidence == 0.9 and s.stats.cluster.detection_of("night") == "frame"
    assert s.stats.cluster.detection_of("detector") == "session"
    assert (s.match.critical, s.match.min_support) == (["deer", "boar"], 4)
    assert s.detector.sets == {"detector": ["demo-v1", "demo-v2"], "night": ["n1", "n2"]} and s.detector.floor == 0.1
    assert not hasattr(s.stats, "alpha") and not hasattr(s.match, "iou")


def test_absent_sections_read_as_their_defaults(tmp_path):
    """An empty params file: the gate's defaults, 95% intervals by frame, no critical class, no set."""
    s = read_gate_settings(params_file(tmp_path, "{}\n"))
    assert (s.gate.set, s.gate.reference, s.gate.candidate, s.gate.split) == ("detector", "demo-v1", "demo-v2",
                                                                                "test")
    assert (s.stats.confidence, s.stats.cluster.detection, s.match.critical, s.match.min_support) == \
        (0.95, "frame", [], 10)
    assert s.detector.sets == {}


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
    ("waive: [latency_p95]", "waive: [latency]", "gate.waive.0"),
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
