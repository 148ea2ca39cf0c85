"""Tests for candor_eval/detection/inference/runner.py on a tiny constant ONNX model: checked inputs, and
the model -> arrays API agreeing with the file the detect stage writes."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.detections_file import read_raw
from candor_eval.detection.inference.runner import iter_lines, open_inputs, run_model
from tests.support_detect import tiny_repo

PARAMS = "detector:\n  sets: {detector: [tiny]}\n  floor: 0.05\n  nms_iou: 0.5\n  providers: [CPUExecutionProvider]\n"
ROWS = [[32, 32, 16, 8, 0.1, 0.9, 0.0],            # sheep 0.9
        [10, 20, 4, 4, 0.04, 0.0, 0.0],            # below the floor
        [32.0001, 32, 16, 8, 0.300004, 0.2, 0.0]]  # deer 0.3


@pytest.fixture()
def repo(tmp_path):
    return tiny_repo(tmp_path, frames={"a": {"size": (128, 64)}, "b": {"size": (64, 128), "split": "test"}},
                     rows=ROWS, params=PARAMS)


def inputs(root: Path):
    return open_inputs(model="tiny", models=root / "models", data=root / "data" / "detector",
                       verified=root / "build" / "verified", providers=["CPUExecutionProvider"])


def test_run_model_equals_the_file_read_back(repo, tmp_path):
    info, images, model = inputs(repo)
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(line + "\n" for line in iter_lines(model, info.frames, images, floor=0.05)))
    want, got = read_raw(path), run_model(model, info.frames, images, floor=0.05)
    assert got.header == want.header and got.frames == ("a", "b") == want.frames and got.sizes == want.sizes
    for field in ("frame", "cls", "boxes", "score"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    # 2 boxes a frame (deer 0.3, sheep 0.9), in original pixels: frame a has scale 0.5, pad_y 16
    assert got.frame.tolist() == [0, 0, 1, 1] and got.cls.tolist() == [0, 1, 0, 1]
    assert got.boxes[1].tolist() == [48.0, 24.0, 80.0, 40.0] and got.score.tolist() == [0.3, 0.9, 0.3, 0.9]


def test_a_frame_without_an_image_is_refused_before_the_model_loads(repo):
    (repo / "data" / "detector" / "images" / "b.png").unlink()
    (repo / "build" / "verified" / "model-tiny.json").unlink()          # would fail later, if reached
    with pytest.raises(InputError) as err:
        inputs(repo)
    assert "1 frame(s) of frames.csv have no image" in str(err.value)


def test_a_set_the_fetch_stage_did_not_verify_is_refused_naming_the_params_file(repo):
    """No record of the set: the hint says where to add it (the params file read) and what to rerun;
    a model not of the set names the params file's ``detector.sets``."""
    record = repo / "build" / "verified" / "detection-detector.json"
    doc = json.loads(record.read_text())
    record.unlink()
    with pytest.raises(InputError) as err:
        open_inputs(model="tiny", models=repo / "models", data=repo / "data" / "detector",
                    verified=repo / "build" / "verified", providers=["CPUExecutionProvider"],
                    params_file="eval/params.yaml")
    assert "add the set to detector.sets in eval/params.yaml, then: dvc repro fetch" in str(err.value)
    doc["models"] = {"other": doc["models"]["tiny"]}
    record.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        open_inputs(model="tiny", models=repo / "models", data=repo / "data" / "detector",
                    verified=repo / "build" / "verified", providers=["CPUExecutionProvider"],
                    params_file="eval/params.yaml")
    assert "model 'tiny' is not a model of detection set 'detector'" in str(err.value)
    assert "eval/params.yaml:detector.sets" in str(err.value)


def test_a_manifest_other_than_the_verified_one_is_refused(repo):
    record = repo / "build" / "verified" / "detection-detector.json"
    doc = json.loads(record.read_text())
    doc["data"]["sha256"] = "0" * 64
    record.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        inputs(repo)
    assert "manifest changed since it was verified" in str(err.value)
