"""Tests for stages/detect.py on a tiny constant ONNX model: raw boxes in original pixels, byte
determinism, exit 2 on bad input with nothing written, the executors (the model file:
tests/detection/inference/test_onnx_model.py; the file format: tests/detection/test_detections_file.py;
the runner: tests/detection/inference/test_runner.py)."""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from candor_eval.common.errors import run_main
from candor_eval.detection.inference import ray_executor
from candor_eval.stages import detect, fetch
from tests.support_detect import constant_model, tiny_repo, ultralytics_output, write_card

PARAMS = "detector:\n  sets: {detector: [tiny]}\n  floor: 0.05\n  nms_iou: 0.5\n  providers: [CPUExecutionProvider]\n"

# input 64x64; frame a is 128x64 -> scale 0.5, pad_y 16; frame b is 64x128 -> scale 0.5, pad_x 16
ROWS = [[32, 32, 16, 8, 0.1, 0.9, 0.0],       # class sheep 0.9: a -> [48, 24, 80, 40]
        [10, 20, 4, 4, 0.04, 0.0, 0.0],       # below the floor
        [32.0001, 32, 16, 8, 0.300004, 0.2, 0.0]]   # deer 0.3 (rounds to 0.3)


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tiny_repo(tmp_path, frames={"a": {"size": (128, 64)}, "b": {"size": (64, 128), "split": "test"}},
                     rows=ROWS, params=PARAMS)


def run_detect(out="build/detections/detector"):
    return run_main(detect.main, ["--set", "detector", "--out", out])


def test_detect_writes_raw_boxes_in_original_pixels(repo):
    assert run_detect() == 0
    lines = Path("build/detections/detector/tiny.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    assert head["format"] == "candor-detections/1" and head["layout"] == "ultralytics"
    assert head["input_size"] == [64, 64] and head["classes"] == ["deer", "sheep", "relic"]
    a, b = (json.loads(x) for x in lines[1:])
    assert (a["frame"], a["width"], a["height"]) == ("a", 128, 64)
    # sorted by class: deer (0.3) first, then sheep (0.9); the 0.04 box is below the floor
    assert a["boxes"] == [[48.0, 24.0, 80.0, 40.0, 0.3, 0], [48.0, 24.0, 80.0, 40.0, 0.9, 1]]
    # frame b: pad_x 16 -> x (24-16)/0.5 = 16; y 28/0.5 = 56
    assert b["boxes"][1] == [16.0, 56.0, 48.0, 72.0, 0.9, 1]


def test_detect_is_byte_deterministic(repo):
    assert run_detect("one") == 0 and run_detect("two") == 0
    assert Path("one/tiny.jsonl").read_bytes() == Path("two/tiny.jsonl").read_bytes()


def test_hash_checked_before_onnxruntime_loads(repo, monkeypatch, capsys):
    import onnxruntime

    def boom(*a, **k):
        raise AssertionError("onnxruntime must not load an unchecked model")

    monkeypatch.setattr(onnxruntime, "InferenceSession", boom)
    onnx_file = Path("models/tiny.onnx")
    onnx_file.write_bytes(onnx_file.read_bytes() + b"\0")
    assert run_detect() == 2
    err = capsys.readouterr().err
    assert "SHA-256 mismatch" in err and "models/tiny.onnx" in err
    assert not Path("build/detections/detector/tiny.jsonl").exists()


def test_unsupported_output_shape_exits_2_naming_shape_and_layouts(repo, capsys):
    sha = constant_model(Path("models/tiny.onnx"), np.zeros((1, 9, 5), np.float32))
    write_card(Path("models"), "tiny", sha)
    assert run_main(fetch.main, ["verify", "--data", "data", "--models", "models", "--out", "build/verified"]) == 0
    assert run_detect() == 2
    err = capsys.readouterr().err
    assert "[1, 9, 5]" in err and "ultralytics [1, 4+C, N]" in err and "yolov5 [1, N, 5+C]" in err


def test_dynamic_input_is_rejected(repo, capsys):
    sha = constant_model(Path("models/tiny.onnx"), ultralytics_output(ROWS), dynamic_input=True)
    write_card(Path("models"), "tiny", sha)
    assert run_main(fetch.main, ["verify", "--data", "data", "--models", "models", "--out", "build/verified"]) == 0
    assert run_detect() == 2
    assert "static [1, 3, H, W]" in capsys.readouterr().err


def test_transposed_layout_end_to_end(repo):
    out = ultralytics_output(ROWS)[0].T[None]        # [1, N, 4+C]
    sha = constant_model(Path("models/tiny.onnx"), out)
    write_card(Path("models"), "tiny", sha)
    assert run_main(fetch.main, ["verify", "--data", "data", "--models", "models", "--out", "build/verified"]) == 0
    assert run_detect() == 0
    lines = Path("build/detections/detector/tiny.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["layout"] == "ultralytics-t"
    assert json.loads(lines[1])["boxes"][1] == [48.0, 24.0, 80.0, 40.0, 0.9, 1]


def test_stale_verified_record_is_refused(repo, capsys):
    rec = Path("build/verified/model-tiny.json")
    rec.write_text(json.dumps({"sha256": "0" * 64}))
    assert run_detect() == 2
    assert "verified SHA-256 differs" in capsys.readouterr().err


def test_executor_is_validated(repo, capsys):
    Path("params.yaml").write_text(PARAMS + "  executor: dask\n")
    assert run_detect() == 2
    assert "executor" in capsys.readouterr().err


def test_executor_ray_without_ray_exits_2_naming_the_extra(repo, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)           # import ray raises ImportError
    Path("params.yaml").write_text(PARAMS + "  executor: ray\n")
    assert run_detect() == 2
    err = capsys.readouterr().err
    assert "params.yaml:detector.executor: executor ray needs Ray" in err and "requirements-cluster.txt" in err
    assert not Path("build/detections/detector").exists()


def test_cluster_failure_exits_1_and_writes_nothing(repo, monkeypatch):
    """A run the cluster cannot finish (shards lost beyond Ray's retries) leaves no file."""
    def lost(model, frames, images, **_):
        yield "header"
        raise ray_executor.ClusterFailed("the cluster lost a shard after 3 retries")

    monkeypatch.setattr(ray_executor, "connected", lambda **_: contextlib.nullcontext())
    monkeypatch.setattr(ray_executor, "iter_cluster_lines", lost)
    Path("params.yaml").write_text(PARAMS + "  executor: ray\n")
    assert run_detect() == 1
    assert not list(Path("build/detections/detector").glob("*.jsonl"))
