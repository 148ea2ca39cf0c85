"""Tests for candor_eval/detection/scoring/coco_results.py: COCO results reading (typed, in pieces) and writing."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import candor_eval.detection.scoring.coco_results as cr
from candor_eval.common.errors import InputError
from candor_eval.detection.scoring.coco import read_coco
from candor_eval.detection.scoring.coco_results import array_pieces, coco_results, read_coco_results, results_problems
from candor_eval.detection.scoring.columns import DetectionTable
from tests.conftest import TESTS

DATA = TESTS / "data" / "detector"
GOOD = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}


def read(path: Path) -> DetectionTable:
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    return read_coco_results(path, image_map=img_map, category_map=cat_map, classes=gt.classes)


def by_hand(dets: list[dict]) -> tuple[list, list, list, list]:
    """Frame and class indices (ids 1.. -> 0..), xyxy boxes, scores, computed without the reader."""
    return ([d["image_id"] - 1 for d in dets], [d["category_id"] - 1 for d in dets],
            [[x, y, x + w, y + h] for x, y, w, h in (d["bbox"] for d in dets)], [float(d["score"]) for d in dets])


def _random_results(rng, n):
    return [{"image_id": int(rng.integers(1, 5)), "category_id": int(rng.integers(1, 4)),
             "bbox": [float(v) for v in rng.uniform(0, 50, 4).round(2)], "score": round(float(rng.uniform()), 4)}
            for _ in range(n)]


def test_coco_results_round_trip():
    det = read(DATA / "coco_results.json")
    assert len(det.score) == 10 and det.frame.tolist()[:4] == [0, 0, 0, 0]
    back = coco_results(det, frame_ids=[1, 2, 3, 4], category_ids=[1, 2, 3])
    original = json.loads((DATA / "coco_results.json").read_text())
    assert back == [{**d, "bbox": [float(v) for v in d["bbox"]], "score": float(d["score"])} for d in original]


def test_coco_results_export_rounds():
    det = DetectionTable(classes=("a",), frame=np.array([0]), cls=np.array([0]),
                         boxes=np.array([[1.00049, 2.0, 3.5, 4.25]]), score=np.array([0.123456]))
    assert coco_results(det, frame_ids=[7], category_ids=[3]) == [
        {"image_id": 7, "category_id": 3, "bbox": [1.0, 2.0, 2.5, 2.25], "score": 0.12346}]
    out = coco_results(det, frame_ids=np.array([7]), category_ids=np.array([3]))[0]   # ids as numpy arrays too
    assert [type(out[k]) for k in ("image_id", "category_id", "score")] == [int, int, float]
    assert {type(v) for v in out["bbox"]} == {float}


@pytest.mark.parametrize("piece", [16, 300, 10 ** 7])
def test_read_in_pieces_equals_a_hand_decode(tmp_path, monkeypatch, piece):
    dets = _random_results(np.random.default_rng(3), 400) + [{**GOOD, "bbox": [1, 2, 3, 4], "score": 1}]
    dets[5]["note"] = "},{"                                    # cuts inside strings and nested values:
    dets[9]["parts"] = [{"x": 1}, {"y": "},{"}]                  # such a piece fails, the file is decoded whole
    p = tmp_path / "dt.json"
    p.write_text(json.dumps(dets, separators=(",", ":")))
    monkeypatch.setattr(cr, "RESULTS_PIECE", piece)
    det = read(p)
    frame, cls, boxes, score = by_hand(dets)
    assert (det.frame.tolist(), det.cls.tolist(), det.boxes.tolist(), det.score.tolist()) == (frame, cls, boxes, score)
    dtypes = [det.frame.dtype, det.cls.dtype, det.boxes.dtype, det.score.dtype]
    assert dtypes == ["int64", "int64", "float64", "float64"]
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    assert results_problems(p.read_bytes(), where="dt.json", image_map=img_map, category_map=cat_map) == []


@pytest.mark.parametrize("bad, field", [
    ({"bbox": [0, "1", 2, 3]}, "[1].bbox"), ({"bbox": [0, 0, 1, True]}, "[1].bbox"), ({"bbox": [0, 0, 1]}, "[1].bbox"),
    ({"bbox": [0, 0, 1, 1, 1]}, "[1].bbox"), ({"bbox": [0, 0, 1, None]}, "[1].bbox"), ({"bbox": "0011"}, "[1].bbox"),
    ({"bbox": [0, 0, 1, [1]]}, "[1].bbox"), ({"bbox": [0, 0, -1, 1]}, "[1].bbox"),
    ({"score": True}, "[1].score"), ({"score": False}, "[1].score"), ({"score": 1e400}, "[1].score"),
    ({"image_id": 1.0}, "[1].image_id"), ({"image_id": True}, "[1].image_id"), ({"image_id": 99}, "[1].image_id"),
    ({"category_id": 9}, "[1].category_id"), ({"category_id": None}, "[1].category_id"),
])
def test_bad_entries_are_named(tmp_path, bad, field):
    p = tmp_path / "dt.json"
    p.write_text(json.dumps([{**GOOD, "extra": "ignored"}, {**GOOD, **bad}]).replace("Infinity", "1e400"))
    with pytest.raises(InputError) as err:
        read(p)
    assert f"dt.json{field}" in err.value.message and "dt.json[0]" not in err.value.message


def test_json_errors_keep_stdlib_messages(tmp_path):
    p = tmp_path / "dt.json"
    # NaN is not JSON: the typed decoder refuses it, the standard library parses it, the walk names the entry
    p.write_text('[{"image_id": 1, "category_id": 1, "bbox": [0, 0, NaN, 1], "score": 0.5}]')
    with pytest.raises(InputError, match=r"\[0\]\.bbox"):
        read(p)
    p.write_text('[{"image_id": 1,\n "score": }]')
    with pytest.raises(InputError, match="not valid JSON .* at line 2"):
        read(p)
    p.write_bytes(b'[{"name": "\xff"}]')
    with pytest.raises(InputError, match="not UTF-8"):
        read(p)
    p.write_text('{"image_id": 1}')
    with pytest.raises(InputError, match="not a COCO results file"):
        read(p)


def test_array_pieces_are_arrays_of_consecutive_entries():
    dets = _random_results(np.random.default_rng(2), 50)
    raw = json.dumps(dets, separators=(",", ":")).encode()
    for size in (1, 7, 100, 1000, 10 ** 6):
        pieces = list(array_pieces(raw, size=size))
        assert [d for piece in pieces for d in json.loads(piece)] == dets
        assert size > len(raw) or len(pieces) > 1
    assert list(array_pieces(b"[]", size=1)) == [b"[]"]
    # a cut inside a string or a nested list leaves a piece no strict parser accepts
    tricky = b'[{"a":"x},{y"},{"b":[{"c":1},{"d":2}]}]'
    pieces = list(array_pieces(tricky, size=1))
    assert pieces[0] == b'[{"a":"x}]'
    with pytest.raises(json.JSONDecodeError):
        json.loads(pieces[0])
