"""A COCO annotation file and the folder of its images (candor_eval/adopt/coco_data.py)."""
from __future__ import annotations

import json

import pytest
from PIL import Image

from candor_eval.adopt.coco_data import find_image, read_coco_set
from candor_eval.common.errors import InputError
from tests.support_adopt import coco_export


@pytest.mark.parametrize("folders", [False, True])
def test_the_set_is_the_files_images_found_by_name_or_base_name(tmp_path, folders):
    coco, images = coco_export(tmp_path, folders=folders)
    Image.new("RGB", (8, 8)).save(images / "unlisted.jpg")          # not in the file: not in the set
    found = read_coco_set(coco, images=images)
    assert found.classes == ("cat", "dog")
    assert found.images == (images.absolute() / "x.jpg", images.absolute() / "y.png")


def test_find_image_prefers_the_full_file_name(tmp_path):
    (tmp_path / "val").mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "val" / "a.jpg")
    Image.new("RGB", (8, 8)).save(tmp_path / "a.jpg")
    assert find_image("val/a.jpg", tmp_path) == (tmp_path / "val" / "a.jpg").absolute()
    assert find_image("train/a.jpg", tmp_path) == (tmp_path / "a.jpg").absolute()
    assert find_image("b.jpg", tmp_path) is None


def test_a_missing_image_and_a_wrong_size_are_named_by_entry(tmp_path):
    coco, images = coco_export(tmp_path, said={"y.png": (21, 20)})
    (images / "x.jpg").unlink()
    with pytest.raises(InputError) as err:
        read_coco_set(coco, images=images)
    text = err.value.message
    assert "instances_val.json:images[0]: image not found" in text
    assert "instances_val.json:images[1]: width and height differ from the image's (expected 20 x 20" in text


def test_a_bad_coco_file_is_refused_by_candors_reader(tmp_path):
    coco, images = coco_export(tmp_path)
    doc = json.loads(coco.read_text())
    doc["annotations"][0]["category_id"] = 7
    coco.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="category_id"):
        read_coco_set(coco, images=images)
