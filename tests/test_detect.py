"""Tests for the detect stage and candor/detection/inference/onnx_model.py on a tiny constant ONNX model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from candor.detection.inference import detections_file
from stages import detect, fetch
from candor.common.errors import run_main
from tests.test_detect_support import constant_model, tiny_repo, ultralytics_output, write_card

PARAMS = "detector:\n  models: [tiny]\n  floor: 0.05\n  nms_iou: 0.5\n  providers: [CPUExecutionProvider]\n"

# input 64x64; frame a is 128x64 -> scale 0.5, pad_y 16; frame b is 64x128 -> scale 0.5, pad_x 16
ROWS = [[32, 32, 16, 8, 0.1, 0.9, 0.0],       # class sheep 0.9: a -> [48, 24, 80, 40]
        [10, 20, 4, 4, 0.04, 0.0, 0.0],       # below the floor
        [32.0001, 32, 16, 8, 0.300004, 0.2, 0.0]]   # deer 0.3 (rounds to 0.3)


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tiny_repo(tmp_path, frames={"a": {"size": (128, 64)}, "b": {"size": (64, 128), "split": "test"}}, rows=ROWS, params=PARAMS)


def round_candidates(boxes, scores, classes, *, floor):
    """The output rows of one frame's candidates, as the stage writes them."""
    return detections_file.candidate_rows(*detections_file.rounded_candidates(boxes, scores, classes, floor=floor))


def run_detect(out="build/detections/tiny.jsonl"):
    return run_main(detect.main, ["--model", "tiny", "--out", out])


def test_detect_writes_raw_boxes_in_original_pixels(repo):
    assert run_detect() == 0
    lines = Path("build/detections/tiny.jsonl").read_text().splitlines()
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
    assert run_detect("one.jsonl") == 0 and run_detect("two.jsonl") == 0
    assert Path("one.jsonl").read_bytes() == Path("two.jsonl").read_bytes()


def test_perturbation_below_precision_changes_nothing():
    rng = np.random.default_rng(0)
    boxes = np.round(rng.uniform(0, 1000, (50, 4)), 3) + 0.0002     # away from rounding boundaries
    scores = np.round(rng.uniform(0.05, 1, 50), 5) + 0.000002
    classes = rng.integers(0, 3, 50)
    base = round_candidates(boxes, scores, classes, floor=0.05)
    for eps in (1e-7, -1e-7, 3e-5):
        assert round_candidates(boxes + eps, scores + eps * 1e-2, classes, floor=0.05) == base
    # a change above the precision does show
    assert round_candidates(boxes + 0.002, scores, classes, floor=0.05) != base
    # -0.0 never appears
    assert round_candidates(np.array([[-0.0001, 0, 1, 1]]), np.array([0.5]), np.array([0]),
                            floor=0.05)[0][0] == 0.0
    assert str(round_candidates(np.array([[-0.0001, 0, 1, 1]]), np.array([0.5]), np.array([0]),
                                floor=0.05)[0][0]) == "0.0"


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
    assert not Path("build/detections/tiny.jsonl").exists()


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
    lines = Path("build/detections/tiny.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["layout"] == "ultralytics-t"
    assert json.loads(lines[1])["boxes"][1] == [48.0, 24.0, 80.0, 40.0, 0.9, 1]


def test_stale_verified_record_is_refused(repo, capsys):
    rec = Path("build/verified/model-tiny.json")
    rec.write_text(json.dumps({"sha256": "0" * 64}))
    assert run_detect() == 2
    assert "verified SHA-256 differs" in capsys.readouterr().err


def naive_round_candidates(boxes, scores, classes, *, floor):
    """The rounding and sort order row by row (the reference for the vectorised version)."""
    rows = []
    for b, s, c in zip(np.asarray(boxes, float), np.asarray(scores, float), classes):
        s = round(float(s), detections_file.SCORE_DECIMALS) + 0.0
        if s >= floor:
            rows.append([*(round(float(v), detections_file.BOX_DECIMALS) + 0.0 for v in b), s, int(c)])
    return sorted(rows, key=lambda r: (r[5], -r[4], r[0], r[1], r[2], r[3]))


def test_round_candidates_matches_the_row_by_row_definition():
    rng = np.random.default_rng(5)
    boxes = rng.uniform(-1, 700, (300, 4))
    boxes[::9] = boxes[1::9][: len(boxes[::9])]                 # duplicates: full sort key used
    scores = rng.uniform(0, 1, 300)
    scores[::4] = 0.5                                            # ties on score
    classes = rng.integers(0, 4, 300)
    got = round_candidates(boxes, scores, classes, floor=0.05)
    assert got == naive_round_candidates(boxes, scores, classes, floor=0.05)
    assert round_candidates(np.zeros((0, 4)), np.zeros(0), np.zeros(0, int), floor=0.05) == []


@pytest.mark.parametrize("frame, extra", [
    ("f0001", []),
    ("f0001", [8e-05, 1e-05]),                    # Python writes these in exponent form
    ("f0001", [1e16, 123456789012345678.0]),
    ("f0001", [float("nan"), float("inf")]),
    ("fr\u00e9me", []),                           # json.dumps escapes non-ASCII
    ('a"b\\c', []),
])
def test_json_line_is_byte_identical_to_json_dumps(frame, extra):
    rng = np.random.default_rng(9)
    b = np.round(rng.uniform(0, 5000, (200, 4)), 3)
    b[:3] = [[0.0, 0.001, 0.0001, 1.5], [640.0, 415.999, 0.1, 99.9], [1e-3, 2e-3, 3e-3, 5e-4]]
    s = np.round(rng.uniform(0, 1, 200), 5)
    s[: len(extra)] = extra
    rows = [[*r, int(k)] for r, k in zip(np.column_stack([b, s]).tolist(), rng.integers(0, 60, 200))]
    obj = {"frame": frame, "width": 640, "height": 416, "boxes": rows}
    line = detections_file.json_line(obj, floats=np.concatenate([b.ravel(), s]))
    assert line == json.dumps(obj, separators=(",", ":"))
