"""candor/stats/gate.py (criteria by hand, gate.json round trip) and the gate command (run / check)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from candor.common.errors import InputError, run_main
from candor.stats.gate import GateResult, evaluate_gate, find_wrong_targets, latency_p95
from candor.stats.gate_views import MatchView, StatsView
from candor.stats.params import GateParams
from stages.gate import main

DATA = Path(__file__).parent / "data" / "stats"


def frames_rows(spec: dict[str, list[tuple[int, int, int]]], split: str = "test") -> list[dict]:
    """model -> per-frame (tp, fp, fn) on frames f0, f1, ..."""
    return [dict(frame=f"f{i}", split=split, model=m, tp=tp, fp=fp, fn=fn)
            for m, rows in spec.items() for i, (tp, fp, fn) in enumerate(rows)]


def label_rows(cls: str, found: dict[str, list[bool]], split: str = "test", offset: int = 0) -> list[dict]:
    """model -> found flags for labels of ``cls``, one per frame l<offset+i>."""
    return [dict(frame=f"l{offset + i}", split=split, label="0", model=m, found=f, **{"class": cls})
            for m, flags in found.items() for i, f in enumerate(flags)]


GOOD_FRAMES = frames_rows({"ref": [(3, 1, 1), (2, 1, 0)], "cand": [(4, 0, 0), (2, 0, 0)]})


def run(frames=GOOD_FRAMES, labels=None, wrong=None, p95=None, critical=("deer",), min_support=3, **gp):
    labels = label_rows("deer", {"ref": [True] * 4, "cand": [True] * 4}) if labels is None else labels
    wrong = {"ref": 2, "cand": 1} if wrong is None else wrong
    params = GateParams(reference="ref", candidate="cand", **gp)
    result = evaluate_gate(frames=frames, labels=labels, wrong_targets=wrong, latency_p95_ms=p95, params=params,
                           critical=list(critical), min_support=min_support, confidence=0.95)
    doc = result.as_json()
    assert GateResult.from_json(doc, where="gate.json").as_json() == doc      # one writer, one reader
    return doc


def test_gate_passes_when_every_criterion_holds():
    g = run()
    assert g["passed"] and g["failed"] == []
    c = g["criteria"]
    # by hand: ref TP 5 FP 2 FN 1 -> P 5/7, R 5/6; cand TP 6 FP 0 FN 0
    assert c["micro_precision_higher"]["reference"] == round(5 / 7, 6)
    assert c["micro_precision_higher"]["candidate_rate"] == {"k": 6, "n": 6, "unit": "detection", "rate": 1.0,
                                                             "lo": c["micro_precision_higher"]["candidate_rate"]["lo"],
                                                             "hi": 1.0}
    assert c["micro_recall_higher"]["reference_rate"]["unit"] == "label"
    assert c["micro_recall_higher"]["reference"] == round(5 / 6, 6)
    assert c["micro_f1_higher"]["reference"] == round(10 / 13, 6)
    assert c["latency_p95"]["note"] == "not measured" and c["latency_p95"]["passed"]


def test_gate_fails_when_precision_not_strictly_higher():
    frames = frames_rows({"ref": [(4, 0, 1)], "cand": [(5, 0, 0)]})  # P 1.0 vs 1.0
    g = run(frames=frames)
    assert g["failed"] == ["micro_precision_higher"]


def test_critical_drop_beyond_noise_fails_and_is_not_masked_by_gains():
    # deer: ref finds 7 of 7, candidate 1 of 7 -> 6-0 discordant, p = 0.03125 <= 0.05
    # tree: candidate finds 20 more labels (a big gain elsewhere), micro still higher
    labels = (label_rows("deer", {"ref": [True] * 7, "cand": [True] + [False] * 6})
              + label_rows("tree", {"ref": [False] * 20, "cand": [True] * 20}, offset=100))
    g = run(labels=labels, critical=("deer",))
    crit = g["criteria"]["critical_recall_no_regression"]
    assert not crit["passed"] and crit["note"] == "regressed: deer"
    assert crit["classes"]["deer"]["paired"]["p"] == 0.03125
    assert (crit["classes"]["deer"]["paired"]["a_only"], crit["classes"]["deer"]["paired"]["b_only"]) == (6, 0)
    assert g["per_class"]["tree"]["status"] == "improved"
    assert g["failed"] == ["critical_recall_no_regression"]


def test_critical_drop_within_noise_passes():
    # 5-0 is p = 0.0625 > 0.05: McNemar calls it noise
    labels = label_rows("deer", {"ref": [True] * 6, "cand": [True] + [False] * 5})
    g = run(labels=labels)
    assert g["criteria"]["critical_recall_no_regression"]["passed"]
    assert g["per_class"]["deer"]["status"] == "no detectable change"


def test_unqualified_class_is_never_improved_but_can_regress():
    up = label_rows("relic", {"ref": [False] * 6, "cand": [True] * 6})
    g = run(labels=up + label_rows("deer", {"ref": [True], "cand": [True]}, offset=50), min_support=10)
    assert g["per_class"]["relic"]["status"] == "unqualified"
    down = label_rows("relic", {"ref": [True] * 6, "cand": [False] * 6})
    g = run(labels=down, critical=("relic",), min_support=10)
    assert g["per_class"]["relic"]["status"] == "regressed"
    assert g["criteria"]["critical_recall_no_regression"]["note"] == "regressed: relic"


def test_wrong_targets_increase_fails_and_missing_fails():
    assert run(wrong={"ref": 1, "cand": 2})["failed"] == ["wrong_targets_no_increase"]
    assert run(wrong={"ref": 1, "cand": 1})["passed"]
    g = run(wrong={"ref": None, "cand": 0})
    assert g["failed"] == ["wrong_targets_no_increase"]


@pytest.mark.parametrize("p95,passed", [(1999.0, True), (2000.0, True), (2000.5, False)])
def test_latency(p95, passed):
    g = run(p95=p95)
    assert g["criteria"]["latency_p95"]["passed"] is passed
    assert (g["criteria"]["latency_p95"]["candidate"], g["criteria"]["latency_p95"]["note"]) == (p95, None)


def test_different_frames_or_labels_fail():
    frames = GOOD_FRAMES + [dict(frame="extra", split="test", model="cand", tp=0, fp=0, fn=0)]
    g = run(frames=frames)
    assert "same_frames_and_labels" in g["failed"]
    assert g["criteria"]["same_frames_and_labels"]["tally"]["frames_only_in_candidate"] == 1
    labels = label_rows("deer", {"ref": [True] * 3, "cand": [True] * 4})
    assert "same_frames_and_labels" in run(labels=labels)["failed"]


def test_absent_tables_fail_the_gate():
    params = GateParams(reference="ref", candidate="cand")
    g = evaluate_gate(frames=None, labels=None, wrong_targets={"ref": 0, "cand": 0}, latency_p95_ms=None,
                      params=params, critical=["deer"], min_support=3, confidence=0.95)
    assert not g.passed
    assert set(g.failed) == {"same_frames_and_labels", "micro_precision_higher", "micro_recall_higher",
                                "micro_f1_higher", "critical_recall_no_regression"}


def test_critical_class_without_labels_is_reported():
    g = run(critical=("deer", "boar"))
    assert g["criteria"]["critical_recall_no_regression"]["classes"]["boar"] == {"status": "no labels", "support": 0,
                                                                              "paired": None}


SHA = "a" * 64


@pytest.mark.parametrize("doc,expected", [
    ({"onnx_sha256": SHA, "end_to_end": {"median_ms": 10, "p95_ms": 147.2}, "model_call": {"p95_ms": 90.0}}, 147.2),
    ({"onnx_sha256": "b" * 64, "end_to_end": {"p95_ms": 147.2}}, None),     # another model file: stale
    ({"end_to_end": {"p95_ms": 147.2}}, None),                                # unknown model file
])
def test_latency_p95_counts_only_for_the_current_model(doc, expected):
    assert latency_p95(doc, where="lat.json", onnx_sha256=SHA) == expected


@pytest.mark.parametrize("doc", [{"p95_ms": 5}, {"end_to_end": {"median_ms": 3}}, [], {"end_to_end": {"p95_ms": True}}])
def test_latency_p95_of_something_else_is_an_error(doc):
    with pytest.raises(InputError, match="lat.json: not a latency diagnostic"):
        latency_p95(doc, where="lat.json", onnx_sha256=SHA)


@pytest.mark.parametrize("doc,expected", [
    ({"test": {"critical": {"total": {"missed": 3, "wrong": 2}}}}, 2),
    ({"test": {"critical": {"total": {"wrong": 0}}}}, 0),
    ({"test": {"critical": {"total": {"wrong": True}}}}, None),
    ({"test": []}, None),
    ({"dev": {"critical": {"total": {"wrong": 2}}}}, None),
    ({"test": {"micro": {}}}, None),
    ([], None),
])
def test_find_wrong_targets(doc, expected):
    assert find_wrong_targets(doc, split="test") == expected


def write_gate_inputs(tmp_path: Path, *, cand_wrong: int) -> list[str]:
    det = tmp_path / "detection"
    (det / "detector").mkdir(parents=True)
    for model, wrong in (("demo-v1", 1), ("demo-v2", cand_wrong)):
        (det / "detector" / f"{model}.json").write_text(json.dumps({"test": {"critical": {"total": {"wrong": wrong}}}}))
    lat = tmp_path / "latency"
    (lat / "detector").mkdir(parents=True)
    (lat / "detector" / "demo-v2.json").write_text(json.dumps({"onnx_sha256": SHA, "end_to_end": {"p95_ms": 150.0}}))
    models = tmp_path / "models"
    models.mkdir()
    (models / "demo-v2.yaml").write_text(f"onnx: demo-v2.onnx\nsha256: {SHA}\n")
    (tmp_path / "params.yaml").write_text("stats: {}\ngate: {latency_p95_ms: 2000}\n"
                                          "detector: {sets: {detector: [demo-v1, demo-v2]}}\n"
                                          "match: {critical: [deer], min_support: 2, iou: 0.5}\n")
    return ["run", "--outcomes", str(DATA / "outcomes"), "--detection", str(det), "--latency", str(lat),
            "--models", str(models), "--params", str(tmp_path / "params.yaml"), "--out", str(tmp_path / "gate.json")]


@pytest.mark.parametrize("cand_wrong,code", [(1, 0), (2, 1)])
def test_gate_stage_and_check(tmp_path, capsys, cand_wrong, code):
    assert main(write_gate_inputs(tmp_path, cand_wrong=cand_wrong)) == 0  # the stage never fails the pipeline
    g = json.loads((tmp_path / "gate.json").read_text())
    assert g["criteria"]["latency_p95"]["candidate"] == 150.0
    # fixture deer labels: (f1, 0) found by both, (f2, 0) only by the candidate -> 0-1, p = 1
    assert (g["per_class"]["deer"]["status"], g["per_class"]["deer"]["support"]) == ("no detectable change", 2)
    assert main(["check", "--gate", str(tmp_path / "gate.json")]) == code  # make gate
    out = capsys.readouterr().out
    assert ("PASSED" in out) is (code == 0)


def test_gate_names_a_malformed_latency_file(tmp_path, capsys):
    argv = write_gate_inputs(tmp_path, cand_wrong=1)
    (tmp_path / "latency" / "detector" / "demo-v2.json").write_text('{"end_to_end": {"p95_ms": 1')
    assert run_main(main, argv) == 2
    assert "latency/detector/demo-v2.json: not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "gate.json").exists()


def test_the_gate_reads_the_documented_defaults_of_sections_it_does_not_own():
    assert MatchView().min_support == 10 and MatchView().critical == []    # match: as score reads it
    assert StatsView().confidence == 0.95


@pytest.mark.parametrize("gate, where", [
    ("{set: birds}", "params.yaml:gate.set: unknown detection set"),
    ("{candidate: demo-v9}", "gate.candidate: not a model of detection set 'detector'"),
    ("{reference: demo-v9}", "gate.reference: not a model of detection set 'detector'"),
    ("{split: final}", "gate.split: unknown split"),
])
def test_an_unknown_gate_set_model_or_split_exits_2_naming_the_key(tmp_path, capsys, gate, where):
    argv = write_gate_inputs(tmp_path, cand_wrong=1)
    text = (tmp_path / "params.yaml").read_text().replace("gate: {latency_p95_ms: 2000}", f"gate: {gate}")
    (tmp_path / "params.yaml").write_text(text)
    assert run_main(main, argv) == 2
    assert where in capsys.readouterr().err
    assert not (tmp_path / "gate.json").exists()
