"""An Ultralytics data.yaml's names, split, images and labels (candor_eval/adopt/ultralytics_data.py), on a tiny
training repository built in tmp_path."""
from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from candor_eval.adopt.ultralytics_data import (
    class_names,
    label_path,
    label_problems,
    list_images,
    read_split,
    split_entries,
)
from candor_eval.common.errors import InputError
from tests.support_adopt import NAMES, ultralytics_repo


@pytest.mark.parametrize("doc, names", [
    ({"names": ["a", "b"]}, ("a", "b")),
    ({"names": {1: "b", 0: "a"}}, ("a", "b")),
    ({"names": {"0": "a", "1": "b"}, "nc": 2}, ("a", "b")),
    ({"nc": 3}, ("class_0", "class_1", "class_2")),
])
def test_class_names_in_index_order(doc, names):
    assert class_names(doc, where="data.yaml") == names


@pytest.mark.parametrize("doc, message", [
    ({}, "data.yaml:names: missing"),
    ({"names": {0: "a", 2: "c"}}, "data.yaml:names: the class indices are not 0..n-1"),
    ({"names": {"x": "a"}}, "data.yaml:names: a key is not a class index"),
    ({"names": ["a", ""]}, "data.yaml:names: an empty class name"),
    ({"names": "a b"}, "data.yaml:names: not a list or a mapping"),
    ({"names": ["a", "b"], "nc": 3}, "data.yaml:nc: not the number of names"),
    ({"nc": 0}, "data.yaml:nc: not a number of classes"),
])
def test_bad_names_are_refused_naming_the_key(doc, message):
    with pytest.raises(InputError, match=message):
        class_names(doc, where="data.yaml")


def test_split_entries_are_relative_to_the_root_which_is_relative_to_the_data_yaml():
    f = Path("repo/cfg/data.yaml")
    assert split_entries({"path": "../ds", "val": "images/val"}, file=f, split="val") == [
        Path("repo/cfg/../ds/images/val")]
    assert split_entries({"val": ["a", "/abs/b"]}, file=f, split="val") == [Path("repo/cfg/a"), Path("/abs/b")]
    assert split_entries({"path": "/data/ds", "validation": "v.txt"}, file=f, split="val") == [
        Path("/data/ds/v.txt")]


def test_a_missing_split_names_the_key_and_the_splits_there_are():
    with pytest.raises(InputError) as err:
        split_entries({"train": "images/train", "test": "images/test"}, file=Path("data.yaml"), split="val")
    assert "data.yaml:val: no such split" in err.value.message and "train, test" in err.value.message


@pytest.mark.parametrize("image, label", [
    ("/d/images/val/a.jpg", "/d/labels/val/a.txt"),
    ("/d/images/x/images/a.b.PNG", "/d/images/x/labels/a.b.txt"),     # the last /images/ only
    ("/d/pictures/a.jpg", "/d/pictures/a.txt"),                        # no /images/: beside the image
])
def test_label_path_is_ultralytics_rule(image, label):
    assert label_path(Path(image)) == Path(label)


@pytest.mark.parametrize("names", [NAMES, dict(enumerate(NAMES))])
def test_read_split_reads_names_images_and_labels(tmp_path, names):
    data_yaml = ultralytics_repo(tmp_path, names=names)
    split = read_split(data_yaml)
    val = tmp_path / "datasets" / "pets"
    assert split.names == tuple(NAMES)
    assert [p.name for p in split.images] == ["a.jpg", "b.jpg", "c.png"]
    assert split.labels == (val / "labels/val/a.txt", None, val / "labels/val/c.txt")
    assert [p.name for p in read_split(data_yaml, split="train").images] == ["t.jpg"]


def test_a_list_file_names_images_relative_to_its_folder(tmp_path):
    data_yaml = ultralytics_repo(tmp_path)
    ds = data_yaml.parent
    (ds / "val.txt").write_text(f"./images/val/a.jpg\nimages/val/c.png\n{ds / 'images/val/b.jpg'}\nnotes.md\n\n")
    assert [p.name for p in list_images([ds / "val.txt"], where="w")] == ["a.jpg", "b.jpg", "c.png"]
    (ds / "bad.txt").write_text("./images/val/zz.jpg\n")
    with pytest.raises(InputError, match="bad.txt:1: listed image not found"):
        list_images([ds / "bad.txt"], where="w")


def test_images_candor_cannot_read_an_empty_split_and_a_missing_folder_are_refused(tmp_path):
    (tmp_path / "v").mkdir()
    with pytest.raises(InputError, match="no images in the split"):
        list_images([tmp_path / "v"], where="data.yaml:val")
    with pytest.raises(InputError, match="split entry not found"):
        list_images([tmp_path / "nothing"], where="data.yaml:val")
    Image.new("RGB", (8, 8)).save(tmp_path / "v" / "a.tif")
    with pytest.raises(InputError, match="a.tif: an image format candor does not read"):
        list_images([tmp_path / "v"], where="data.yaml:val")


def test_labels_are_checked_by_candors_yolo_reader_naming_file_and_line(tmp_path):
    frames = {"a": ((64, 48), ["0 0.5 0.5 0.2 0.2", "3 0.5 0.5 0.2 0.2"]),          # class 3 of 3 names
              "b": ((64, 48), ["1 0.1 0.1 0.2 0.2 0.3 0.3 0.1"]),                     # a segment polygon
              "c": ((32, 32), ["2 0.9 0.5 0.4 0.4"])}                                  # past the right edge
    split = read_split(ultralytics_repo(tmp_path, frames=frames))
    problems = {p.where.split("/labels/val/")[1]: p.what for p in label_problems(split)}
    assert problems == {"a.txt:2.class": "class index out of range", "b.txt:1": "wrong number of fields",
                        "c.txt:1": "box outside the image"}
    assert label_problems(read_split(ultralytics_repo(tmp_path / "ok"))) == []
