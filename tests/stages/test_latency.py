"""Tests for stages/latency.py on a tiny ONNX model: one labelled diagnostic record per model of the
set, and bad params refused with nothing written (the method: tests/detection/test_latency.py)."""
from __future__ import annotations

import json

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages import latency as latency_stage
from tests.detection.test_latency import PARAMS, ROWS
from tests.support_detect import tiny_repo


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tiny_repo(tmp_path, frames={f: {"size": (128, 64)} for f in "abc"}, rows=ROWS, params=PARAMS)


def test_stage_writes_labelled_diagnostic(repo, capsys):
    assert run_main(latency_stage.main, ["--set", "detector", "--out", "metrics/latency/detector"]) == 0
    doc = json.loads((repo / "metrics" / "latency" / "detector" / "tiny.json").read_text())
    assert doc["diagnostic"].startswith("diagnostic: machine-specific")
    assert doc["end_to_end"]["n"] == 3 and doc["model_call"]["n"] == 3 and doc["warmup"] == 2
    assert doc["model_call"]["median_ms"] <= doc["end_to_end"]["median_ms"]
    env = doc["environment"]
    assert {"os", "cpu", "cores", "python", "onnxruntime", "numpy", "pillow", "providers", "threads"} <= set(env)
    assert env["providers"] == ["CPUExecutionProvider"] and env["host"]
    assert doc["run"]["models"] == ["tiny"] and doc["run"]["started_utc"].endswith("+00:00")
    assert "p95" in capsys.readouterr().out


def test_unknown_threshold_class_is_a_config_error(repo, capsys):
    (repo / "params.yaml").write_text(PARAMS.replace("deer: 0.25", "dear: 0.25"))
    assert run_main(latency_stage.main, ["--out", "x"]) == 2
    assert "thresholds.dear" in capsys.readouterr().err
    assert not (repo / "x").exists()
