"""candor/detection/latency.py and the latency stage: served postprocess, summaries, and the diagnostic
record on a tiny ONNX model."""
from __future__ import annotations

import json
from itertools import count

import numpy as np
import pytest

from candor.common.errors import run_main
from candor.detection import latency
from candor.detection.config import ServedNms
from candor.detection.inference.letterbox import Letterboxer
from candor.detection.inference.onnx_model import open_model
from stages import latency as latency_stage
from tests.support_detect import tiny_repo

PARAMS = ("detector:\n  sets: {detector: [tiny]}\n  floor: 0.05\n  nms_iou: 0.5\n  providers: [CPUExecutionProvider]\n"
          "thresholds:\n  default: 0.35\n  deer: 0.25\nlatency:\n  warmup: 2\n")

# input 64x64, frames 128x64 -> scale 0.5, pad_y 16
ROWS = [[32, 32, 16, 8, 0.0, 0.9, 0.0],       # sheep 0.9
        [33, 32, 16, 8, 0.0, 0.8, 0.0],       # sheep 0.8, IoU with the first > 0.5: suppressed
        [10, 10, 6, 6, 0.3, 0.0, 0.0],        # deer 0.3 >= deer threshold 0.25: kept
        [50, 50, 6, 6, 0.0, 0.0, 0.3]]        # relic 0.3 < default 0.35: dropped


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tiny_repo(tmp_path, frames={"a": {"size": (128, 64)}, "b": {"size": (128, 64)}, "c": {"size": (128, 64)}}, rows=ROWS, params=PARAMS)


def test_serve_applies_thresholds_then_same_class_nms(repo):
    from PIL import Image

    model = open_model(repo / "models" / "tiny.yaml", providers=["CPUExecutionProvider"])
    thresholds = np.array([0.25, 0.35, 0.35])   # deer, sheep, relic
    ticks = count()
    served, model_s = latency.serve(model, Image.new("RGB", (128, 64)), thresholds=thresholds, nms=ServedNms(iou=0.5),
                                    letterbox=Letterboxer(input_w=model.input_w, input_h=model.input_h),
                                    clock=lambda: float(next(ticks)))
    assert model_s == 1.0                      # exactly the span around session.run
    assert sorted(served.scores.tolist()) == pytest.approx([0.3, 0.9])
    assert sorted(served.classes.tolist()) == [0, 1]
    sheep = served.boxes[served.classes == 1][0]
    assert sheep.tolist() == pytest.approx([48.0, 24.0, 80.0, 40.0])   # back in original pixels


def test_summary_median_and_p95():
    s = latency.summary([float(x) for x in range(1, 21)])
    assert s == {"n": 20, "median_ms": 10.5, "p95_ms": 19.05, "min_ms": 1.0, "max_ms": 20.0}


def test_stage_writes_labelled_diagnostic(repo, capsys):
    assert run_main(latency_stage.main, ["--set", "detector", "--out", "metrics/latency/detector"]) == 0
    doc = json.loads((repo / "metrics" / "latency" / "detector" / "tiny.json").read_text())
    assert doc["diagnostic"].startswith("diagnostic: machine-specific")
    assert doc["end_to_end"]["n"] == 3 and doc["model_call"]["n"] == 3 and doc["warmup"] == 2
    assert doc["model_call"]["median_ms"] <= doc["end_to_end"]["median_ms"]
    env = doc["environment"]
    assert {"os", "cpu", "cores", "python", "onnxruntime", "numpy", "pillow", "providers", "threads"} <= set(env)
    assert env["providers"] == ["CPUExecutionProvider"]
    assert "p95" in capsys.readouterr().out


def test_unknown_threshold_class_is_a_config_error(repo, capsys):
    (repo / "params.yaml").write_text(PARAMS.replace("deer: 0.25", "dear: 0.25"))
    assert run_main(latency_stage.main, ["--out", "x"]) == 2
    assert "thresholds.dear" in capsys.readouterr().err
    assert not (repo / "x").exists()
