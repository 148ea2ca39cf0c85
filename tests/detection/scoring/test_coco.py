"""Tests for candor_eval/detection/scoring/coco.py: COCO ground truth, one typed path, every bad entry named."""
from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.scoring.coco import ground_truth_problems, read_coco, refused, stem
from tests.conftest import TESTS

DATA = TESTS / "data" / "detector"


def _gt_fields(gt):
    return (gt.classes, gt.frames, gt.sizes.tolist(), gt.label_frame.tolist(), gt.label_index.tolist(),
            gt.label_class.tolist(), gt.label_boxes.tolist(), gt.label_crowd.tolist())


def test_coco_reader_and_crowd():
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    assert gt.frames == ("f1", "f2", "f3", "f4") and gt.classes == ("deer", "sheep", "relic")
    assert gt.label_crowd.tolist() == [False, False, False, True, False, False]
    assert gt.label_boxes[3].tolist() == [60.0, 0.0, 100.0, 40.0]
    assert gt.label_index.tolist() == [0, 1, 0, 1, 0, 1]
    assert img_map == {1: 0, 2: 1, 3: 2, 4: 3} and cat_map == {1: 0, 2: 1, 3: 2}
    assert [gt.sizes.dtype, gt.label_frame.dtype, gt.label_boxes.dtype, gt.label_crowd.dtype] == \
        ["int64", "int64", "float64", "bool"]


def test_label_index_follows_the_listed_order_and_absent_iscrowd_is_not_a_crowd(tmp_path):
    doc = {"images": [{"id": 7, "file_name": "b.jpg", "width": 100, "height": 50},
                      {"id": 3, "file_name": "a.jpg", "width": 100, "height": 50}],
           "categories": [{"id": 2, "name": "sheep"}, {"id": 1, "name": "deer"}],
           "annotations": [{"image_id": 7, "category_id": 2, "bbox": [0, 0, 10, 10], "iscrowd": 1},
                           {"image_id": 3, "category_id": 1, "bbox": [1, 2, 3, 4]},
                           {"image_id": 7, "category_id": 1, "bbox": [5, 5, 5, 5], "iscrowd": 0}],
           "info": {"note": "ignored"}}
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(doc))
    gt, img_map, cat_map = read_coco(p)
    assert _gt_fields(gt) == (("deer", "sheep"), ("a", "b"), [[100, 50], [100, 50]], [1, 0, 1], [0, 0, 1],
                              [1, 0, 0], [[0, 0, 10, 10], [1, 2, 4, 6], [5, 5, 10, 10]], [True, False, False])
    assert img_map == {3: 0, 7: 1} and cat_map == {1: 0, 2: 1}
    assert ground_truth_problems(p.read_bytes(), where="gt.json") == []   # the walk agrees: nothing to name


def test_coco_unknown_class_against_fixed_classes():
    with pytest.raises(InputError, match="unknown class name"):
        read_coco(DATA / "coco_gt.json", classes=["deer", "sheep"])


def test_coco_bad_annotation_is_named(tmp_path):
    doc = json.loads((DATA / "coco_gt.json").read_text())
    doc["annotations"][2]["bbox"] = [0, 0, -5, 3]
    doc["annotations"][3]["image_id"] = 42
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_coco(p)
    assert "annotations[2].bbox" in err.value.message and "annotations[3].image_id" in err.value.message


@pytest.mark.parametrize("where, bad, named", [
    ("annotations", {"iscrowd": True}, "annotations[5].iscrowd: not 0 or 1"),
    ("annotations", {"iscrowd": None}, "annotations[5].iscrowd: not 0 or 1"),
    ("annotations", {"iscrowd": 2}, "annotations[5].iscrowd: not 0 or 1"),
    ("images", {"width": 0}, "images[3].width: not a positive size"),
    ("images", {"height": -4}, "images[3].height: not a positive size"),
    ("annotations", {"image_id": 1.0}, "annotations[5].image_id: unknown image id"),
    ("annotations", {"bbox": [0, 0, 1]}, "annotations[5].bbox: bad box"),
    ("annotations", {"image_id": 99}, "annotations[5].image_id: unknown image id"),
    ("annotations", {"bbox": [0, 0, 1e6, 1]}, "annotations[5].bbox: box outside the image"),
    ("images", {"width": True}, "images[3]: bad image"),
    ("images", {"file_name": "f1.png"}, "duplicate frame ids"),
    ("categories", {"id": 1.0}, "categories[2]: bad category"),
])
def test_every_refused_entry_is_named(tmp_path, where, bad, named):
    """Booleans, floats, unknown ids, boxes outside, duplicate frames: refused, with file and entry."""
    doc = json.loads((DATA / "coco_gt.json").read_text())
    doc[where][-1] = {**doc[where][-1], **bad}
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_coco(p)
    assert f"gt.json:{named}" in err.value.message or named in err.value.message


@pytest.mark.parametrize("field, value, named", [
    ("category_id", 2 ** 70, "annotations[0].category_id: unknown category id"),   # beyond 64 bits
    ("bbox", [0, 0, 1, 10 ** 400], "annotations[0].bbox: bad box"),              # beyond float64
])
def test_numbers_out_of_range_are_named(tmp_path, field, value, named):
    doc = json.loads((DATA / "coco_gt.json").read_text())
    doc["annotations"][0][field] = value
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_coco(p)
    assert named in err.value.message


def test_a_refusal_the_walk_cannot_name_keeps_the_decoders_message():
    err = refused([], where="gt.json", err=ValueError("Expected `int`, got `float` - at `$.images[0].id`"))
    assert err.message == ("gt.json: not readable by the typed decoder "
                           "(got Expected `int`, got `float` - at `$.images[0].id`)")


@pytest.mark.parametrize("text, message", [
    ('{"images": [], "categories": []}', "not a COCO ground-truth file"),
    ('{"images": [\n 1,}', "not valid JSON .* at line 2"),
])
def test_not_a_ground_truth_file(tmp_path, text, message):
    p = tmp_path / "gt.json"
    p.write_text(text)
    with pytest.raises(InputError, match=message):
        read_coco(p)


def test_coco_box_must_lie_inside_its_image(tmp_path):
    doc = {"images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 50}],
           "categories": [{"id": 1, "name": "deer"}],
           "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 100, 50]},
                           {"id": 2, "image_id": 1, "category_id": 1, "bbox": [99.95, 10, 0.1, 5]}]}
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(doc))
    gt, _, _ = read_coco(path)                    # the whole image, and a 0.05 px overhang: fine
    assert gt.label_boxes.tolist() == [[0, 0, 100, 50], [99.95, 10, 100.05, 15]]
    doc["annotations"].append({"id": 3, "image_id": 1, "category_id": 1, "bbox": [90, 10, 20, 5]})
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_coco(path)
    assert "gt.json:annotations[2].bbox: box outside the image" in err.value.message


@pytest.mark.parametrize("name", ["a.jpg", "a.b.png", ".hidden", "noext", "trail.", "..", "dir/x.jpg", "a//b.c"])
def test_stem_is_purepath_stem(name):
    assert stem(name) == PurePosixPath(name).stem


@pytest.mark.parametrize("change, message", [
    (lambda d: d["images"].append({**d["images"][0], "file_name": "zz.png"}), "image id(s) listed more than once"),
    (lambda d: d["categories"].append({"id": d["categories"][0]["id"], "name": "zz"}),
     "category id(s) listed more than once"),
    (lambda d: d["categories"].append({"id": 99, "name": d["categories"][0]["name"]}),
     "category name(s) listed more than once"),
    (lambda d: [a.update(id=5) for a in d["annotations"]], "annotation id(s) listed more than once"),
])
def test_repeated_ids_are_refused(tmp_path, change, message):
    doc = json.loads((DATA / "coco_gt.json").read_text())
    change(doc)
    (tmp_path / "gt.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=re.escape(message)):
        read_coco(tmp_path / "gt.json")


def test_a_bom_is_dropped_and_deep_nesting_is_named(tmp_path):
    (tmp_path / "gt.json").write_bytes(b"\xef\xbb\xbf" + (DATA / "coco_gt.json").read_bytes())
    assert read_coco(tmp_path / "gt.json")[0].frames == ("f1", "f2", "f3", "f4")
    (tmp_path / "gt.json").write_text('{"images": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError, match="gt.json"):
        read_coco(tmp_path / "gt.json")


def test_a_ground_truth_file_is_a_regular_file_of_bounded_size(tmp_path, monkeypatch):
    """A symlink to /dev/zero (read whole, it never ends) or a file over the cap is named, never read."""
    import candor_eval.detection.scoring.coco as coco

    assert coco.COCO_MAX_BYTES == 2 ** 30
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"zero.json: not a regular file .*expected a COCO JSON file of at most"):
        read_coco(tmp_path / "zero.json")
    (tmp_path / "gt.json").write_bytes((DATA / "coco_gt.json").read_bytes())
    size = (tmp_path / "gt.json").stat().st_size
    monkeypatch.setattr(coco, "COCO_MAX_BYTES", size)
    assert read_coco(tmp_path / "gt.json")[0].frames == ("f1", "f2", "f3", "f4")          # exactly the cap: read
    monkeypatch.setattr(coco, "COCO_MAX_BYTES", size - 1)
    with pytest.raises(InputError, match=f"gt.json: larger than {size - 1} bytes"):
        read_coco(tmp_path / "gt.json")
