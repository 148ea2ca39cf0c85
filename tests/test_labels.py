"""Tests for candor/detection/scoring/labels.py: YOLO, COCO, COCO results and frames.csv readers with validation."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from candor.common.errors import InputError
from candor.detection.frames import read_frames
from candor.detection.scoring.labels import DetectionTable, coco_results, read_coco, read_coco_results, read_yolo

DATA = Path(__file__).parent / "data" / "detector"


def yolo_set(tmp_path: Path, labels: dict[str, str], classes="deer\nsheep\n") -> Path:
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    (tmp_path / "classes.txt").write_text(classes)
    for frame, text in labels.items():
        Image.new("RGB", (200, 100)).save(tmp_path / "images" / f"{frame}.jpg")
        if text is not None:
            (tmp_path / "labels" / f"{frame}.txt").write_text(text)
    return tmp_path


def test_yolo_reads_pixels_and_label_indices(tmp_path):
    root = yolo_set(tmp_path, {"b": "1 0.5 0.5 0.5 0.2\n\n0 0.1 0.1 0.2 0.2\n", "a": None, "c": ""})
    gt = read_yolo(root)
    assert gt.frames == ("a", "b", "c") and gt.classes == ("deer", "sheep")
    assert gt.sizes.tolist() == [[200, 100]] * 3
    assert gt.label_frame.tolist() == [1, 1] and gt.label_index.tolist() == [0, 1]
    assert gt.label_class.tolist() == [1, 0]
    assert gt.label_boxes.tolist() == [[50.0, 40.0, 150.0, 60.0], [0.0, 0.0, 40.0, 20.0]]
    assert not gt.label_crowd.any()


@pytest.mark.parametrize("line, what", [
    ("2 0.5 0.5 0.1 0.1", "class index out of range"),
    ("0 0.5 0.5 0.1", "wrong number of fields"),
    ("x 0.5 0.5 0.1 0.1", "not numbers"),
    ("0 1.5 0.5 0.1 0.1", "coordinates out of range"),
    ("0 0.5 0.5 0 0.1", "coordinates out of range"),
])
def test_yolo_errors_name_file_and_line(tmp_path, line, what):
    root = yolo_set(tmp_path, {"a": "0 0.5 0.5 0.1 0.1\n" + line + "\n"})
    with pytest.raises(InputError) as err:
        read_yolo(root)
    assert "labels/a.txt:2" in err.value.message and what in err.value.message


def test_yolo_missing_image_and_duplicate_classes(tmp_path):
    root = yolo_set(tmp_path, {"a": ""})
    with pytest.raises(InputError, match="no image for frame 'zz'"):
        read_yolo(root, frames=["a", "zz"])
    (root / "classes.txt").write_text("deer\ndeer\n")
    with pytest.raises(InputError, match="duplicate class names"):
        read_yolo(root)


def test_coco_reader_and_crowd():
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    assert gt.frames == ("f1", "f2", "f3", "f4") and gt.classes == ("deer", "sheep", "relic")
    assert gt.label_crowd.tolist() == [False, False, False, True, False, False]
    assert gt.label_boxes[3].tolist() == [60.0, 0.0, 100.0, 40.0]
    assert gt.label_index.tolist() == [0, 1, 0, 1, 0, 1]
    assert img_map == {1: 0, 2: 1, 3: 2, 4: 3} and cat_map == {1: 0, 2: 1, 3: 2}


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


def test_coco_results_round_trip(tmp_path):
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    det = read_coco_results(DATA / "coco_results.json", image_map=img_map, category_map=cat_map, classes=gt.classes)
    assert len(det.score) == 10 and det.frame.tolist()[:4] == [0, 0, 0, 0]
    back = coco_results(det, frame_ids=[1, 2, 3, 4], category_ids=[1, 2, 3])
    original = json.loads((DATA / "coco_results.json").read_text())
    assert back == [{**d, "bbox": [float(v) for v in d["bbox"]], "score": float(d["score"])} for d in original]


def test_coco_results_export_rounds():
    det = DetectionTable(classes=("a",), frame=np.array([0]), cls=np.array([0]),
                         boxes=np.array([[1.00049, 2.0, 3.5, 4.25]]), score=np.array([0.123456]))
    assert coco_results(det, frame_ids=[7], category_ids=[3]) == [
        {"image_id": 7, "category_id": 3, "bbox": [1.0, 2.0, 2.5, 2.25], "score": 0.12346}]


def test_read_frames_validation(tmp_path):
    p = tmp_path / "frames.csv"
    p.write_text("frame,session,zoom,split\nb,s1,1,test\na,s1,0.5,dev\n")
    info = read_frames(p)
    assert info.frames == ("a", "b") and info.split == ("dev", "test") and info.zoom == ("0.5", "1")
    p.write_text("frame,session,zoom,split\na,s1,1,train\na,s1,1,dev\n")
    with pytest.raises(InputError) as err:
        read_frames(p)
    assert "row 2.split" in err.value.message and "row 3.frame" in err.value.message
    p.write_text("frame,zoom\na,1\n")
    with pytest.raises(InputError, match="missing column"):
        read_frames(p)


def test_coco_results_fast_path_equals_checking_loop(tmp_path, monkeypatch):
    import candor.detection.scoring.labels as labels

    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    rng = np.random.default_rng(5)
    dets = [{"image_id": int(rng.integers(1, 5)), "category_id": int(rng.integers(1, 4)),
             "bbox": [float(v) for v in rng.uniform(0, 50, 4).round(3)], "score": float(rng.uniform())}
            for _ in range(300)] + [{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}]
    p = tmp_path / "dt.json"
    p.write_text(json.dumps(dets))
    calls = []
    typed_fn = labels._coco_results_typed
    monkeypatch.setattr(labels, "_coco_results_typed", lambda *a, **k: calls.append(1) or typed_fn(*a, **k))
    typed = read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    assert calls
    monkeypatch.setattr(labels, "_coco_results_typed", lambda *a, **k: None)
    fast = read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    monkeypatch.setattr(labels, "_coco_results_fast", lambda *a, **k: None)
    slow = read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    for name in ("frame", "cls", "boxes", "score"):
        assert np.array_equal(getattr(typed, name), getattr(slow, name))
        assert np.array_equal(getattr(fast, name), getattr(slow, name))
        assert getattr(typed, name).dtype == getattr(slow, name).dtype


@pytest.mark.parametrize("bad, field", [
    ({"bbox": [0, "1", 2, 3]}, "[1].bbox"),
    ({"score": True}, "[1].score"),
    ({"image_id": 1.0}, "[1].image_id"),
    ({"category_id": 9}, "[1].category_id"),
])
def test_coco_results_bad_entries_are_named(tmp_path, bad, field):
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    good = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}
    p = tmp_path / "dt.json"
    p.write_text(json.dumps([good, {**good, **bad}]))
    with pytest.raises(InputError) as err:
        read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    assert field in err.value.message


@pytest.mark.parametrize("line, ok", [
    ("0 0.5 0.5 1.0 1.0", True),            # the whole image
    ("0 0.9995 0.5 0.002 0.2", True),       # overhangs by 0.0005: rounding, tolerated
    ("0 0.95 0.5 0.25 0.2", False),         # x2 = 1.075: past the right edge
    ("0 0.05 0.5 0.2 0.2", False),          # x1 = -0.05: past the left edge
    ("0 0.5 0.01 0.2 0.1", False),          # y1 = -0.04: past the top
])
def test_yolo_box_must_lie_inside_the_image(line, ok):
    from candor.detection.scoring.labels import parse_yolo_lines

    classes, boxes, problems = parse_yolo_lines(line, where="labels/a.txt", n_classes=1, width=100, height=50)
    assert (problems == []) is ok
    if not ok:
        assert problems[0].where == "labels/a.txt:1" and "outside the image" in problems[0].what


def _gt_fields(gt):
    return (gt.classes, gt.frames, gt.sizes.tolist(), gt.label_frame.tolist(), gt.label_index.tolist(),
            gt.label_class.tolist(), gt.label_boxes.tolist(), gt.label_crowd.tolist())


def test_coco_annotations_fast_path_equals_checking_loop(tmp_path, monkeypatch):
    import candor.detection.scoring.labels as labels

    doc = json.loads((DATA / "coco_gt.json").read_text())
    doc["annotations"] = doc["annotations"][::-1]  # label index follows the listed order within each frame
    for a in doc["annotations"][::2]:
        if not a.get("iscrowd"):
            a.pop("iscrowd", None)                   # absent iscrowd: not a crowd
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(doc))
    calls = []
    typed_fn = labels._coco_gt_typed
    monkeypatch.setattr(labels, "_coco_gt_typed", lambda *a, **k: calls.append(1) or typed_fn(*a, **k))
    typed = read_coco(p)
    assert calls and typed_fn(p, classes=None) is not None          # the typed decoder took this file
    monkeypatch.setattr(labels, "_coco_gt_typed", lambda *a, **k: None)
    fast = read_coco(p)
    monkeypatch.setattr(labels, "_annotations_fast", lambda *a, **k: None)
    slow = read_coco(p)
    assert _gt_fields(fast[0]) == _gt_fields(slow[0]) and fast[1:] == slow[1:]
    assert _gt_fields(typed[0]) == _gt_fields(slow[0]) and typed[1:] == slow[1:]
    assert [getattr(typed[0], f).dtype for f in ("sizes", "label_frame", "label_boxes", "label_crowd")] == \
        [getattr(slow[0], f).dtype for f in ("sizes", "label_frame", "label_boxes", "label_crowd")]


def test_coco_boolean_and_float_ids_keep_the_loop_semantics(tmp_path):
    doc = json.loads((DATA / "coco_gt.json").read_text())
    doc["annotations"][0]["iscrowd"] = True   # a JSON boolean: bool(value), as the loop reads it
    doc["annotations"][1]["image_id"] = 1.0   # equal to image id 1 (dict lookup), as before
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(doc))
    gt, _, _ = read_coco(p)
    assert gt.label_crowd[0] and gt.label_frame[1] == 0


def test_json_fallback_keeps_stdlib_messages(tmp_path):
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    p = tmp_path / "dt.json"
    # NaN is not JSON: orjson refuses it, the standard library parses it, validation names the entry
    p.write_text('[{"image_id": 1, "category_id": 1, "bbox": [0, 0, NaN, 1], "score": 0.5}]')
    with pytest.raises(InputError, match=r"\[0\]\.bbox"):
        read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    p.write_text('[{"image_id": 1,\n "score": }]')
    with pytest.raises(InputError, match="not valid JSON .* at line 2"):
        read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    p.write_bytes(b'[{"name": "\xff"}]')
    with pytest.raises(InputError, match="not UTF-8"):
        read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)


@pytest.mark.parametrize("bad", [[0, 0, 1, True], [0, 0, 1], [0, 0, 1, None], "0011", [0, 0, 1, [1]]])
def test_coco_results_fast_path_rejects_what_the_loop_rejects(tmp_path, bad):
    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    good = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}
    p = tmp_path / "dt.json"
    p.write_text(json.dumps([good] * 3 + [{**good, "bbox": bad}]))
    with pytest.raises(InputError, match=r"\[3\]\.bbox"):
        read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)


@pytest.mark.parametrize("name", ["a.jpg", "a.b.png", ".hidden", "noext", "trail.", "..", "dir/x.jpg", "a//b.c"])
def test_stem_is_purepath_stem(name):
    from pathlib import PurePosixPath

    from candor.detection.scoring.labels import _stem
    assert _stem(name) == PurePosixPath(name).stem


def test_coco_box_must_lie_inside_its_image(tmp_path):
    import json

    from candor.detection.scoring.labels import read_coco

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


@pytest.mark.parametrize("bad", [{"image_id": True}, {"image_id": 1.0}, {"score": False}, {"bbox": [0, 0, 1]},
                                 {"bbox": [0, 0, 1, 1, 1]}, {"bbox": [0, 0, 1, "1"]}, {"score": 1e400},
                                 {"category_id": None}])
def test_typed_decoder_refuses_what_the_loop_refuses(tmp_path, bad):
    from candor.detection.scoring.labels import _coco_results_typed

    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    good = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5, "extra": "ignored"}
    p = tmp_path / "dt.json"
    p.write_text(json.dumps([good, {**good, **bad}]).replace("Infinity", "1e400"))
    assert _coco_results_typed(p, image_map=img_map, category_map=cat_map, classes=gt.classes) is None
    p.write_text(json.dumps([good, good]))
    ok = _coco_results_typed(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    assert ok is not None and ok.boxes.tolist() == [[0.0, 0.0, 1.0, 1.0]] * 2


@pytest.mark.parametrize("where, bad", [
    ("annotations", {"iscrowd": True}), ("annotations", {"image_id": 1.0}), ("annotations", {"bbox": [0, 0, 1]}),
    ("annotations", {"image_id": 99}), ("annotations", {"bbox": [0, 0, 1e6, 1]}), ("annotations", {"iscrowd": None}),
    ("images", {"width": True}), ("images", {"file_name": "f1.png"}), ("categories", {"id": 1.0}),
])
def test_typed_ground_truth_decoder_leaves_doubt_to_the_checking_path(tmp_path, where, bad):
    """Booleans, floats, unknown ids, boxes outside, duplicate frames: None, and the checking path decides."""
    from candor.detection.scoring.labels import _coco_gt_typed

    doc = json.loads((DATA / "coco_gt.json").read_text())
    doc["info"] = {"note": "ignored, as by the loop"}
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(doc))
    assert _coco_gt_typed(p, classes=None) is not None
    doc[where][-1] = {**doc[where][-1], **bad}
    p.write_text(json.dumps(doc))
    assert _coco_gt_typed(p, classes=None) is None


def _random_results(rng, n):
    return [{"image_id": int(rng.integers(1, 5)), "category_id": int(rng.integers(1, 4)),
             "bbox": [float(v) for v in rng.uniform(0, 50, 4).round(2)], "score": round(float(rng.uniform()), 4)}
            for _ in range(n)]


def test_array_pieces_are_arrays_of_consecutive_entries():
    from candor.detection.scoring.labels import _array_pieces

    rng = np.random.default_rng(2)
    dets = _random_results(rng, 50)
    raw = json.dumps(dets, separators=(",", ":")).encode()
    for size in (1, 7, 100, 1000, 10 ** 6):
        pieces = list(_array_pieces(raw, size=size))
        assert [d for piece in pieces for d in json.loads(piece)] == dets
        assert size > len(raw) or len(pieces) > 1
    assert list(_array_pieces(b"[]", size=1)) == [b"[]"]
    # a cut inside a string or a nested list leaves a piece no strict parser accepts
    tricky = b'[{"a":"x},{y"},{"b":[{"c":1},{"d":2}]}]'
    pieces = list(_array_pieces(tricky, size=1))
    assert pieces[0] == b'[{"a":"x}]'
    with pytest.raises(json.JSONDecodeError):
        json.loads(pieces[0])


def test_a_valid_file_whose_piece_cut_falls_inside_a_string_is_still_read_typed(tmp_path, monkeypatch):
    import candor.detection.scoring.labels as labels

    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    good = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}
    p = tmp_path / "dt.json"
    p.write_text(json.dumps([{**good, "note": "x},{y"}, good], separators=(",", ":")))
    monkeypatch.setattr(labels, "RESULTS_PIECE", 1)       # the first cut lands inside "x},{y"
    ok = labels._coco_results_typed(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
    assert ok is not None and ok.boxes.tolist() == [[0.0, 0.0, 1.0, 1.0]] * 2


def test_results_read_in_pieces_equal_the_checking_loop(tmp_path, monkeypatch):
    import candor.detection.scoring.labels as labels

    gt, img_map, cat_map = read_coco(DATA / "coco_gt.json")
    rng = np.random.default_rng(3)
    dets = _random_results(rng, 400)
    dets[5]["note"] = "},{"                                    # cuts inside strings and nested values:
    dets[9]["parts"] = [{"x": 1}, {"y": "},{"}]                  # the typed path refuses them, the loop reads
    for text in (json.dumps(dets, separators=(",", ":")), json.dumps(dets[10:], separators=(",", ":"))):
        p = tmp_path / "dt.json"
        p.write_text(text)
        got = {}
        for piece in (16, 300, 10 ** 7):
            monkeypatch.setattr(labels, "RESULTS_PIECE", piece)
            got[piece] = read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
        monkeypatch.setattr(labels, "_coco_results_typed", lambda *a, **k: None)
        monkeypatch.setattr(labels, "_coco_results_fast", lambda *a, **k: None)
        slow = read_coco_results(p, image_map=img_map, category_map=cat_map, classes=gt.classes)
        monkeypatch.undo()
        for table in got.values():
            for name in ("frame", "cls", "boxes", "score"):
                assert np.array_equal(getattr(table, name), getattr(slow, name))
    # with no strings to trip on, the pieces are decoded by the typed path
    p.write_text(json.dumps(dets[10:], separators=(",", ":")))
    monkeypatch.setattr(labels, "RESULTS_PIECE", 16)
    assert labels._coco_results_typed(p, image_map=img_map, category_map=cat_map, classes=gt.classes) is not None
