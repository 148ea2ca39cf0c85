"""Tests for candor_eval/detection/scoring/truth.py: YOLO txt, COCO JSON, or both (agreeing)."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.frames import image_size, read_frames
from candor_eval.detection.scoring.columns import GroundTruth
from candor_eval.detection.scoring.truth import AGREEMENT_PX, check_agreement, read_truth, twinned_frames
from tests.conftest import ROOT
from tests.support_detect import make_dataset

# frames 128x64: a holds a sheep [48, 24, 80, 40] and a deer [92, 40, 108, 56]; b a deer [0, 0, 16, 16]
FRAMES = {"a": {"size": (128, 64), "labels": ["1 0.5 0.5 0.25 0.25", "0 0.78125 0.75 0.125 0.25"]},
          "b": {"size": (128, 64), "split": "test", "labels": ["0 0.0625 0.125 0.125 0.25"]}}
SIZES = {"a": (128, 64), "b": (128, 64)}
COCO = {"images": [{"id": 8, "file_name": "b.png", "width": 128, "height": 64},
                   {"id": 7, "file_name": "a.png", "width": 128, "height": 64}],
        "categories": [{"id": 1, "name": "deer"}, {"id": 2, "name": "sheep"}, {"id": 3, "name": "relic"}],
        "annotations": [{"id": 1, "image_id": 7, "category_id": 2, "bbox": [48, 24, 32, 16]},
                        {"id": 2, "image_id": 7, "category_id": 1, "bbox": [92, 40, 16, 16]},
                        {"id": 3, "image_id": 8, "category_id": 1, "bbox": [0, 0, 16, 16]}]}


@pytest.fixture()
def data(tmp_path) -> Path:
    return make_dataset(tmp_path, FRAMES)


def write_coco(data: Path, doc: dict) -> None:
    (data / "coco.json").write_text(json.dumps(doc))


def labels(gt) -> list[tuple[str, int, str, list[float]]]:
    return [(gt.frames[f], int(k), gt.classes[c], b.tolist())
            for f, k, c, b in zip(gt.label_frame, gt.label_index, gt.label_class, gt.label_boxes)]


EXPECTED = [("a", 0, "sheep", [48.0, 24.0, 80.0, 40.0]), ("a", 1, "deer", [92.0, 40.0, 108.0, 56.0]),
            ("b", 0, "deer", [0.0, 0.0, 16.0, 16.0])]


def test_yolo_only(data):
    t = read_truth(data, frames=["a", "b"], sizes=SIZES)
    assert labels(t.gt) == EXPECTED and t.image_ids is None and t.category_ids is None


def test_coco_only_in_the_requested_frame_order(data):
    shutil.rmtree(data / "labels")
    write_coco(data, COCO)
    t = read_truth(data, frames=["b", "a"], sizes=SIZES)
    assert t.gt.frames == ("b", "a") and t.gt.classes == ("deer", "sheep", "relic")   # classes.txt order
    assert labels(t.gt) == [EXPECTED[2], EXPECTED[0], EXPECTED[1]]
    assert t.image_ids == {"a": 7, "b": 8} and t.category_ids == {"deer": 1, "sheep": 2, "relic": 3}
    (data / "classes.txt").unlink()                     # no classes.txt: category names by ascending id
    assert read_truth(data, frames=["a"], sizes=SIZES).gt.classes == ("deer", "sheep", "relic")


def test_both_agreeing_within_the_tolerance_give_the_yolo_labels(data):
    doc = copy.deepcopy(COCO)
    doc["annotations"][0]["bbox"] = [48.9, 23.1, 32, 16]          # every coordinate within 1 px
    doc["annotations"] = doc["annotations"][::-1]                 # order within a frame is free
    write_coco(data, doc)
    t = read_truth(data, frames=["a", "b"], sizes=SIZES)
    assert labels(t.gt) == EXPECTED and t.image_ids == {"a": 7, "b": 8}


@pytest.mark.parametrize("change, why", [
    (lambda d: d["annotations"][1].update(bbox=[92 + AGREEMENT_PX + 0.5, 40, 16, 16]),
     "deer: box [92.0, 40.0, 108.0, 56.0] of the YOLO labels has no twin in coco.json"),
    (lambda d: d["annotations"][1].update(category_id=2), "deer: 1 box(es) in the YOLO labels, 0 in coco.json"),
    (lambda d: d["annotations"].append({"id": 4, "image_id": 7, "category_id": 3, "bbox": [0, 0, 4, 4]}),
     "relic: 0 box(es) in the YOLO labels, 1 in coco.json"),
    (lambda d: d["annotations"][1].update(iscrowd=1), "1 crowd annotation(s) in coco.json (YOLO has no crowd)"),
])
def test_disagreeing_labels_name_the_folder_and_the_frame(data, change, why):
    doc = copy.deepcopy(COCO)
    change(doc)
    write_coco(data, doc)
    with pytest.raises(InputError) as err:
        read_truth(data, frames=["a", "b"], sizes=SIZES)
    (p,) = err.value.problems
    assert p.where == f"{data}: frame a" and p.what == "labels/ and coco.json disagree" and p.got == why


def test_neither_format_is_an_error_naming_the_folder(data):
    shutil.rmtree(data / "labels")
    with pytest.raises(InputError) as err:
        read_truth(data, frames=["a"], sizes=SIZES)
    (p,) = err.value.problems
    assert p.where == str(data) and p.what == "no ground truth in the data set folder" and "coco.json" in p.expected


def test_class_lists_must_agree(data):
    doc = copy.deepcopy(COCO)
    doc["categories"] = doc["categories"][:2]                     # no relic category
    write_coco(data, doc)
    with pytest.raises(InputError) as err:
        read_truth(data, frames=["a", "b"], sizes=SIZES)
    (p,) = err.value.problems
    assert p.where.endswith("coco.json:categories")
    assert p.expected == "[deer, sheep, relic]" and p.got == "'[deer, sheep]'"


def test_coco_must_hold_every_frame_at_its_real_size(data):
    doc = copy.deepcopy(COCO)
    doc["images"][0]["width"] = 100
    write_coco(data, doc)
    with pytest.raises(InputError) as err:
        read_truth(data, frames=["a", "b"], sizes=SIZES)
    assert err.value.problems[0].where.endswith("coco.json:images b") and err.value.problems[0].got == "100 x 64"
    doc = copy.deepcopy(COCO)
    doc["images"] = doc["images"][1:]
    doc["annotations"] = doc["annotations"][:2]
    write_coco(data, doc)
    with pytest.raises(InputError) as err:
        read_truth(data, frames=["a", "b"], sizes=SIZES)
    assert "not images of the file" in err.value.problems[0].what and err.value.problems[0].got == "['b']"


def test_the_demo_yolo_labels_and_coco_json_agree():
    """The committed demo set has both formats: they hold the same labels, in the same order, within 0.001 px."""
    data = ROOT / "data" / "detector"
    frames = read_frames(data / "frames.csv").frames
    sizes = {f: image_size(next((data / "images").glob(f"{f}.*"))) for f in frames}
    t = read_truth(data, frames=frames, sizes=sizes)         # raises when they disagree
    from candor_eval.detection.scoring.coco import read_coco
    coco, _, _ = read_coco(data / "coco.json", classes=t.gt.classes)
    assert len(t.gt.label_frame) == len(coco.label_frame) > 1000
    assert np.array_equal(t.gt.label_class, coco.label_class) and np.array_equal(t.gt.label_index, coco.label_index)
    assert np.abs(t.gt.label_boxes - coco.label_boxes).max() < 1e-3


def _gt(label_frame, label_class, boxes, crowd=None) -> GroundTruth:
    n = len(label_frame)
    return GroundTruth(classes=("deer", "sheep"), frames=("a", "b", "c", "d"), sizes=np.ones((4, 2), np.int64),
                       label_frame=np.array(label_frame, np.int64), label_index=np.arange(n),
                       label_class=np.array(label_class, np.int64), label_boxes=np.array(boxes, float).reshape(n, 4),
                       label_crowd=np.zeros(n, bool) if crowd is None else np.array(crowd))


def test_twinned_frames_are_those_whose_boxes_pair_at_their_own_positions():
    """a: each YOLO box's closest COCO box is its twin at its own position (0.4 px off) -> twinned. b: the
    COCO twins come in the other order, so the fast test cannot say (False), yet the frames agree box
    by box. c: a crowd annotation; d: a box 3 px off -> not twinned, and both disagree."""
    box1, box2 = [0, 0, 10, 10], [20, 0, 30, 10]
    yolo = _gt([0, 0, 1, 1, 2, 3], [0, 0, 0, 0, 1, 1], [box1, box2, box1, box2, box1, box1])
    coco = _gt([0, 0, 1, 1, 2, 2, 3], [0, 0, 0, 0, 1, 1, 1],
               [np.add(box1, 0.4), np.add(box2, -0.4), box2, box1, box1, box2, np.add(box1, 3)],
               crowd=[False, False, False, False, False, True, False])
    assert twinned_frames(yolo, coco, tol=AGREEMENT_PX).tolist() == [True, False, False, False]
    with pytest.raises(InputError) as err:
        check_agreement(yolo, coco, where="data")
    assert [p.where for p in err.value.problems] == ["data: frame c", "data: frame d"]
