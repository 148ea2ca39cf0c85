"""stages/gate.py, the command: ``run`` writes the gate (exit 0 whatever its verdict, 2 for bad
input, nothing written), ``check`` prints it and exits 0 when it passed, 1 when it failed, 2 when the
file is missing or not a gate. The criteria themselves are in tests/review/test_gate.py; here, a
two-frame bench in tmp_path at the default paths, so the defaults of argv are exercised too.

By hand, on the test split: the reference (demo-v1) has tp 1, fp 2, fn 1 over frames f1, f2, so
precision 1/3, recall 1/2, F1 = 2 * (1/3) * (1/2) / (1/3 + 1/2) = 0.4; the candidate (demo-v2) finds
both deer labels with no false positive: 1, 1, 1.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages.gate import main

FRAMES = ("frame,split,session,zoom,model,tp,fp,fn\n"
          "f1,test,s,1,demo-v1,1,1,0\nf1,test,s,1,demo-v2,1,0,0\n"
          "f2,test,s,1,demo-v1,0,1,1\nf2,test,s,1,demo-v2,1,0,0\n")
LABELS = ("frame,split,label,class,model,found\n"
          "f1,test,0,deer,demo-v1,1\nf1,test,0,deer,demo-v2,1\nf2,test,0,deer,demo-v1,0\nf2,test,0,deer,demo-v2,1\n")
PARAMS = ("detector: {sets: {detector: [demo-v1, demo-v2]}}\n"
          "gate: {improvement: higher, unqualified: waive, waive: [reference_reproduced, served_contract_fixed, "
          "sessions_held_out, refresh_p95, inference_latency_no_increase]}\n"
          "match: {critical: [deer], min_support: 2}\n")


@pytest.fixture()
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The two-frame bench at the default paths, ``tmp_path`` the working folder."""
    out = tmp_path / "metrics" / "outcomes" / "detector"
    out.mkdir(parents=True)
    (out / "detection-frames.csv").write_text(FRAMES)
    (out / "detection-labels.csv").write_text(LABELS)
    (tmp_path / "params.yaml").write_text(PARAMS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def wrong_targets(root: Path, **wrong: int) -> None:
    """``metrics/detection/detector/<model>.json`` with each model's wrong critical targets on test."""
    (root / "metrics" / "detection" / "detector").mkdir(parents=True, exist_ok=True)
    for model, n in wrong.items():
        doc = {"test": {"critical": {"total": {"wrong": n}}}}
        (root / "metrics" / "detection" / "detector" / f"{model}.json").write_text(json.dumps(doc))


def test_run_writes_the_gate_at_the_default_path_and_check_reads_it(bench, capsys):
    assert main(["run"]) == 0
    gate = json.loads((bench / "metrics" / "gate.json").read_text())
    assert (gate["set"], gate["reference"], gate["candidate"], gate["split"]) == ("detector", "demo-v1", "demo-v2",
                                                                                  "test")
    c = gate["criteria"]
    assert [(c[m]["reference"], c[m]["candidate"]) for m in ("micro_precision_higher", "micro_recall_higher",
                                                             "micro_f1_higher")] == [(0.333333, 1.0), (0.5, 1.0),
                                                                                     (0.4, 1.0)]
    # no detection metrics: the wrong-target criterion is not evaluated, and so the gate cannot pass
    assert c["wrong_targets_no_increase"]["status"] == "not evaluated" and c["refresh_p95"]["status"] == "waived"
    assert (gate["verdict"], gate["passed"], gate["pending"]) == ("NOT EVALUATED", False, ["wrong_targets_no_increase"])
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "NOT EVALUATED  wrong_targets_no_increase\n" in out
    assert out.endswith("NOT EVALUATED (pending: wrong_targets_no_increase)\n")
    assert max(map(len, out.splitlines())) <= 100 and "\033[" not in out          # not a terminal: no colour


@pytest.mark.parametrize("candidate_wrong, code", [(0, 0), (1, 0), (2, 1)])
def test_check_exits_1_only_for_a_failed_gate(bench, capsys, candidate_wrong, code):
    wrong_targets(bench, **{"demo-v1": 1, "demo-v2": candidate_wrong})
    assert main(["run", "--out", "build/g.json"]) == 0                  # the run never fails the pipeline
    assert main(["check", "--gate", "build/g.json"]) == code
    assert ("FAILED (failed: wrong_targets_no_increase)" in capsys.readouterr().out) is (code == 1)


def test_an_absent_table_is_logged_and_fails_the_gate_not_the_run(bench, caplog):
    (bench / "metrics" / "outcomes" / "detector" / "detection-labels.csv").unlink()
    with caplog.at_level(logging.WARNING, logger="candor.gate"):
        assert main(["run"]) == 0
    assert "detector/detection-labels.csv is absent: gate criteria that need it fail" in caplog.text
    gate = json.loads((bench / "metrics" / "gate.json").read_text())
    assert not gate["passed"] and gate["criteria"]["same_frames_and_labels"]["status"] == "not evaluated"


@pytest.mark.parametrize("where, text, message", [
    ("params.yaml", PARAMS + "stats: {confidence: 1.5}\n", "params.yaml:stats.confidence: Input should be less than 1"),
    ("params.yaml", PARAMS.replace("gate: {", "gate: {max_recall_drop: 0, "),
     "params.yaml:gate.max_recall_drop: Input should be greater than 0"),
    ("metrics/outcomes/detector/detection-labels.csv", LABELS.replace("demo-v2,1\n", "demo-v2,yes\n", 1),
     "metrics/outcomes/detector/detection-labels.csv:row 3.found: bad value"),
    ("metrics/detection/detector/demo-v1.json", "{", "metrics/detection/detector/demo-v1.json: not valid JSON"),
])
def test_bad_input_exits_2_naming_the_file_and_field_and_writes_nothing(bench, capsys, where, text, message):
    wrong_targets(bench, **{"demo-v1": 1, "demo-v2": 1})
    (bench / where).write_text(text)
    assert run_main(main, ["run"]) == 2
    assert message in capsys.readouterr().err
    assert not (bench / "metrics" / "gate.json").exists()


@pytest.mark.parametrize("text, message", [
    (None, "error: metrics/gate.json: file not found\nhint: run `dvc repro stats` first"),
    ("{", "error: metrics/gate.json: not valid JSON"),
    ('{"passed": true}', "error: metrics/gate.json: not a gate result (written by the stats stage)"),
])
def test_check_of_a_missing_or_foreign_file_exits_2(bench, capsys, text, message):
    if text is not None:
        (bench / "metrics" / "gate.json").write_text(text)
    assert run_main(main, ["check"]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


@pytest.mark.parametrize("argv, message", [
    ([], "the following arguments are required: command"),
    (["gate"], "invalid choice: 'gate'"),
    (["check", "--out", "x.json"], "unrecognized arguments: --out x.json"),
])
def test_bad_argv_is_argparse_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_the_params_file_read_is_the_one_gate_json_and_the_check_name(bench, capsys):
    """A params file elsewhere (``--params eval/params.yaml``): gate.json's ``predeclared`` and the
    check's first line name it, not ``params.yaml``."""
    (bench / "eval").mkdir()
    (bench / "params.yaml").rename(bench / "eval" / "params.yaml")
    assert main(["run", "--params", "eval/params.yaml"]) == 0
    gate = json.loads((bench / "metrics" / "gate.json").read_text())
    assert gate["predeclared"] == "eval/params.yaml:gate"
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("release gate: demo-v2 (B) vs demo-v1 (A) on set detector")
    assert out.splitlines()[1].startswith("  predeclared in eval/params.yaml:gate: ")


def test_without_a_detection_set_there_is_no_gate_and_nothing_is_written(bench, caplog):
    """A lots-only project (no ``detector.sets``): ``run`` says so and exits 0, writing nothing."""
    (bench / "params.yaml").write_text("match: {critical: [deer]}\n")
    with caplog.at_level(logging.WARNING, logger="candor.gate"):
        assert main(["run"]) == 0
    assert "no detection set in params.yaml:detector.sets: no release gate to evaluate" in caplog.text
    assert not (bench / "metrics" / "gate.json").exists()


def test_an_unnamed_gate_set_among_several_exits_2_naming_the_key_and_the_sets(bench, capsys):
    (bench / "params.yaml").write_text(PARAMS.replace("sets: {detector: [demo-v1, demo-v2]}",
                                                      "sets: {detector: [demo-v1, demo-v2], night: [n1, n2]}"))
    assert run_main(main, ["run"]) == 2
    err = capsys.readouterr().err
    assert "params.yaml:gate.set: not set, and detector.sets has 2 detection sets" in err
    assert "one of: detector, night" in err
    assert not (bench / "metrics" / "gate.json").exists()
