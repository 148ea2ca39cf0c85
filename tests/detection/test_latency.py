"""Tests for candor_eval/detection/latency.py on a tiny ONNX model: the served postprocess (thresholds, then
same-class NMS), the timed span around the model call, and the summaries (the stage:
tests/stages/test_latency.py)."""
from __future__ import annotations

from itertools import count

import numpy as np
import pytest

from candor_eval.detection import latency
from candor_eval.detection.inference.letterbox import Letterboxer
from candor_eval.detection.inference.onnx_model import open_model
from candor_eval.detection.served import Served, ServedNms
from tests.support_detect import tiny_repo

PARAMS = ("detector:\n  sets: {detector: [tiny]}\n  floor: 0.05\n  nms_iou: 0.5\n"
          "  providers: [CPUExecutionProvider]\n"
          "thresholds:\n  default: 0.35\n  deer: 0.25\nlatency:\n  warmup: 2\n")

# input 64x64, frames 128x64 -> scale 0.5, pad_y 16
ROWS = [[32, 32, 16, 8, 0.0, 0.9, 0.0],       # sheep 0.9
        [33, 32, 16, 8, 0.0, 0.8, 0.0],       # sheep 0.8, IoU with the first > 0.5: suppressed
        [10, 10, 6, 6, 0.3, 0.0, 0.0],        # deer 0.3 >= deer threshold 0.25: kept
        [50, 50, 6, 6, 0.0, 0.0, 0.3]]        # relic 0.3 < default 0.35: dropped


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tiny_repo(tmp_path, frames={f: {"size": (128, 64)} for f in "abc"}, rows=ROWS, params=PARAMS)


def test_serve_applies_thresholds_then_same_class_nms(repo):
    from PIL import Image

    model = open_model(repo / "models" / "tiny.yaml", providers=["CPUExecutionProvider"])
    class_thresholds = np.array([0.25, 0.35, 0.35])   # deer, sheep, relic
    ticks = count()
    served, model_s = latency.serve(model, Image.new("RGB", (128, 64)),
                                    served=Served(class_thresholds, ServedNms(iou=0.5)),
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

