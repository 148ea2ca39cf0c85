"""Tests for stages/verify_inference.py: real onnxruntime on the committed demo models and frames.

Nothing here depends on the bits this CPU produces: a rerun must agree with the committed
canonical detections within the declared tolerance, whatever the kernels.
"""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import yaml

from candor_eval.common.errors import run_main
from candor_eval.detection.detections_file import read_raw
from candor_eval.stages import detect, fetch, verify_inference
from tests.conftest import ROOT

MODEL = "demo-v1"


@pytest.fixture(scope="module")
def verified(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verified")
    assert run_main(fetch.main, ["verify", "--data", str(ROOT / "data"), "--models", str(ROOT / "models"),
                                 "--params", str(ROOT / "params.yaml"), "--out", str(out)]) == 0
    return out


@pytest.fixture()
def work(tmp_path, verified):
    """One model's params (the committed ones otherwise), a copy of its canonical file, the command's argv."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["detector"]["sets"] = {"detector": [MODEL]}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    (tmp_path / "canonical").mkdir()
    shutil.copy(ROOT / "build" / "detections" / "detector" / f"{MODEL}.jsonl", tmp_path / "canonical")
    argv = ["--params", str(tmp_path / "params.yaml"), "--models", str(ROOT / "models"),
            "--set", "detector", "--data", str(ROOT / "data" / "detector"), "--verified", str(verified),
            "--detections", str(tmp_path / "canonical"), "--report", str(tmp_path / "report.json")]
    return tmp_path, params, argv


def edit_canonical(folder: Path, edit) -> None:
    """Apply ``edit(frame_record)`` to the canonical file's frame lines (it returns True once done)."""
    path = folder / "canonical" / f"{MODEL}.jsonl"
    lines = path.read_text().splitlines()
    for i in range(1, len(lines)):
        rec = json.loads(lines[i])
        if edit(rec):
            lines[i] = json.dumps(rec, separators=(",", ":"))
            break
    path.write_text("\n".join(lines) + "\n")


def report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text())["models"][0]


def test_committed_detections_agree_with_a_rerun_under_other_kernels(work, monkeypatch, capsys, caplog):
    """Another kernel choice (no graph optimisation) stands in for another CPU: within tolerance. The
    model's scoring line is logged once (both sides are scored), and the summary fits 100 columns."""
    folder, params, argv = work

    class NoGraphOptimisation(ort.SessionOptions):
        def __init__(self):
            super().__init__()
            self.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL

    monkeypatch.setattr(ort, "SessionOptions", NoGraphOptimisation)
    caplog.set_level(logging.INFO)
    assert run_main(verify_inference.main, argv) == 0
    rep = report(folder)
    assert rep["ok"] and rep["disagreements"] == [] and rep["paired"] > 10_000
    assert rep["max_box_px"] <= params["reinference"]["box_px"] and rep["max_score"] <= params["reinference"]["score"]
    out = capsys.readouterr().out
    assert "largest differences: box" in out and "re-inference agrees" in out
    assert max(map(len, out.splitlines())) <= 100
    scoring = [r.getMessage() for r in caplog.records if r.name == "candor.score" and "micro P" in r.getMessage()]
    assert len(scoring) == 1 and scoring[0].startswith(rep["model"] + ":")
    assert logging.getLogger("candor.score").level == logging.NOTSET      # left as it was


def test_a_box_moved_beyond_tolerance_is_a_disagreement_naming_its_frame(work, capsys):
    folder, _, argv = work
    moved = {}

    def move(rec):
        if rec["boxes"]:
            rec["boxes"][0][0] += 0.5
            moved["frame"] = rec["frame"]
            return True
        return False

    edit_canonical(folder, move)
    assert run_main(verify_inference.main, argv) == 1
    rep = report(folder)
    assert not rep["ok"] and all(line.startswith(f"{moved['frame']}: ") for line in rep["disagreements"])
    assert len(rep["disagreements"]) == 2            # the moved canonical box and its fresh twin
    assert "DISAGREES" in capsys.readouterr().out


@pytest.fixture(scope="module")
def same_machine(tmp_path_factory, verified) -> Path:
    """demo-v1's raw detections made on this machine: what the check's rerun gives here, bit for bit."""
    out = tmp_path_factory.mktemp("same")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["detector"]["sets"] = {"detector": [MODEL]}
    (out / "params.yaml").write_text(yaml.safe_dump(params))
    assert run_main(detect.main, ["--set", "detector", "--models", str(ROOT / "models"), "--data",
                                  str(ROOT / "data" / "detector"), "--verified", str(verified),
                                  "--params", str(out / "params.yaml"), "--out", str(out / "detections")]) == 0
    return out / "detections" / f"{MODEL}.jsonl"


def test_a_threshold_crossing_within_tolerance_is_reported_not_failed(work, same_machine):
    """A canonical score 8e-5 below this machine's, with the class threshold half-way: one crossing."""
    folder, params, argv = work
    shutil.copy(same_machine, folder / "canonical" / f"{MODEL}.jsonl")
    raw = read_raw(same_machine)
    # a box whose class has no other box within 2e-4 of the new threshold: exactly one crossing
    pick = next(i for i in np.argsort(-raw.score, kind="stable") if 0.5 <= raw.score[i] <= 0.9
                and np.sum((raw.cls == raw.cls[i]) & (np.abs(raw.score - raw.score[i]) < 2e-4)) == 1)
    frame, cls, score = raw.frames[raw.frame[pick]], int(raw.cls[pick]), float(raw.score[pick])

    def lower(rec):
        if rec["frame"] != frame:
            return False
        row = next(b for b in rec["boxes"] if b[5] == cls and b[4] == score)
        row[4] = round(score - 8e-5, 5)
        return True

    edit_canonical(folder, lower)
    name = raw.header["classes"][cls]
    params["thresholds"][name] = round(score - 4e-5, 5)
    (folder / "params.yaml").write_text(yaml.safe_dump(params))
    assert run_main(verify_inference.main, argv) == 0
    rep = report(folder)
    assert rep["ok"] and rep["max_score"] == pytest.approx(8e-5)
    assert [(c["frame"], c["class"]) for c in rep["threshold_crossings"]] == [(frame, name)]
    assert not rep["scored_identical"]
    assert {r["canonical"][0] for r in rep["scored_differences"]["frames"]} == {frame}


def test_bad_tolerance_is_a_config_error(work, capsys):
    folder, params, argv = work
    params["reinference"]["score"] = float("nan")
    (folder / "params.yaml").write_text(yaml.safe_dump(params))
    assert run_main(verify_inference.main, argv) == 2
    assert "reinference.score" in capsys.readouterr().err
