"""Tests for stages/suggest_thresholds.py: dev frames only, the model's own served thresholds as the start,
and the printed ``dvc exp run`` line (the suggestion itself: tests/detection/scoring/test_suggest.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages import suggest_thresholds
from tests.stages.test_score_detection import PARAMS, make_repo, run_score


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    """The tiny workspace of tests/stages/test_score_detection.py, as the current folder."""
    monkeypatch.chdir(tmp_path)
    return make_repo(tmp_path)


def test_suggest_thresholds_reads_dev_only_and_prints_exp_line(repo, capsys):
    # corrupt the test frame's line: suggest-thresholds never parses it, the pipeline would fail
    p = Path("build/detections/detector/tiny.jsonl")
    lines = p.read_text().splitlines()
    assert lines[2].startswith('{"frame":"b"')
    lines[2] = lines[2][:-5] + "BROKEN"
    p.write_text("\n".join(lines) + "\n")
    assert run_score() == 2
    capsys.readouterr()
    Path("params.yaml").write_text(PARAMS.replace("min_support: 2", "min_support: 1"))
    assert run_main(suggest_thresholds.main, ["--model", "tiny", "--params", "params.yaml"]) == 0
    out = capsys.readouterr().out
    # dev frame a: deer 0.3 is a FP on the sheep, deer 0.5 is a TP -> best deer threshold 0.5
    assert "dvc exp run" in out and "-S ++thresholds_by_model.tiny.deer=0.5" in out
    assert "thresholds.deer" not in out.replace("thresholds_by_model.tiny.deer", "")   # this model only
    assert "from 1 dev frames" in out


def test_suggest_thresholds_starts_from_the_models_served_thresholds(repo, capsys):
    """tiny already serves deer 0.5 and sheep 0.9 (thresholds_by_model): nothing to change; its served
    default (0.4) is the one under-supported classes keep."""
    Path("params.yaml").write_text(PARAMS.replace("min_support: 2", "min_support: 1")
                                   + "thresholds_by_model:\n  tiny: {deer: 0.5, sheep: 0.9, default: 0.4}\n")
    assert run_main(suggest_thresholds.main, ["--model", "tiny", "--params", "params.yaml"]) == 0
    out = capsys.readouterr().out
    assert "keeps the default 0.4" in out and "no change" in out


def test_suggest_thresholds_refuses_test_split(repo, capsys):
    assert run_main(suggest_thresholds.main, ["--model", "tiny", "--split", "test"]) == 2
    assert "dev frames only" in capsys.readouterr().err

