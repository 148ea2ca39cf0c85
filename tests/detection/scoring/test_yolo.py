"""Tests for candor_eval/detection/scoring/yolo.py: the YOLO reader and its validation."""
from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from candor_eval.common.errors import InputError
from candor_eval.detection.scoring.yolo import parse_yolo_lines, read_yolo


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


@pytest.mark.parametrize("line, ok", [
    ("0 0.5 0.5 1.0 1.0", True),            # the whole image
    ("0 0.9995 0.5 0.002 0.2", True),       # overhangs by 0.0005: rounding, tolerated
    ("0 0.95 0.5 0.25 0.2", False),         # x2 = 1.075: past the right edge
    ("0 0.05 0.5 0.2 0.2", False),          # x1 = -0.05: past the left edge
    ("0 0.5 0.01 0.2 0.1", False),          # y1 = -0.04: past the top
])
def test_yolo_box_must_lie_inside_the_image(line, ok):
    classes, boxes, problems = parse_yolo_lines(line, where="labels/a.txt", n_classes=1, width=100, height=50)
    assert (problems == []) is ok
    if not ok:
        assert problems[0].where == "labels/a.txt:1" and "outside the image" in problems[0].what


def test_a_repeated_label_line_and_a_label_file_without_an_image_are_refused(tmp_path):
    (tmp_path / "twice").mkdir()
    (tmp_path / "orphan").mkdir()
    root = yolo_set(tmp_path / "twice", {"a": "0 0.5 0.5 0.2 0.2\n1 0.2 0.2 0.1 0.1\n0 0.5 0.5 0.2 0.2\n"})
    with pytest.raises(InputError, match=r"a.txt:3: the same label twice \(first on line 1\)"):
        read_yolo(root)
    root = yolo_set(tmp_path / "orphan", {"a": ""})
    (root / "labels" / "z.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    with pytest.raises(InputError, match="z.txt: label file without an image"):
        read_yolo(root)


@pytest.mark.parametrize("cls", ["\u0661", "+1", "1_0", "1.0"])
def test_a_class_index_must_be_ascii_digits(cls):
    *_, problems = parse_yolo_lines(f"{cls} 0.5 0.5 0.2 0.2\n", where="a.txt", n_classes=20, width=10, height=10)
    assert [p.what for p in problems] == ["not numbers"]


def test_a_bom_is_dropped_and_utf16_is_named(tmp_path):
    root = yolo_set(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n"}, classes="deer\nsheep\n")
    (root / "classes.txt").write_bytes(b"\xef\xbb\xbfdeer\nsheep\n")
    (root / "labels" / "a.txt").write_bytes(b"\xef\xbb\xbf0 0.5 0.5 0.2 0.2\n")
    gt = read_yolo(root)
    assert gt.classes == ("deer", "sheep") and gt.label_class.tolist() == [0]
    (root / "labels" / "a.txt").write_bytes("0 0.5 0.5 0.2 0.2\n".encode("utf-16"))
    with pytest.raises(InputError, match="a.txt: not UTF-8 text"):
        read_yolo(root)


def test_label_files_are_capped_regular_files(tmp_path, monkeypatch):
    """A label file that is a symlink to /dev/zero, or larger than the cap, is refused, never read whole."""
    from candor_eval.detection.scoring import yolo

    root = yolo_set(tmp_path, {"a": "0 0.5 0.5 0.2 0.2\n", "b": None})
    (root / "labels" / "b.txt").symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"labels/b.txt: not a regular file"):
        read_yolo(root)
    (root / "labels" / "b.txt").unlink()
    monkeypatch.setattr(yolo, "LABEL_MAX_BYTES", 18)       # a.txt holds 18 bytes
    read_yolo(root)
    monkeypatch.setattr(yolo, "LABEL_MAX_BYTES", 17)
    with pytest.raises(InputError, match=r"labels/a.txt: larger than 17 bytes"):
        read_yolo(root)
