"""The model card of an ONNX export from its metadata and shapes (candor_eval/adopt/onnx_card.py): the real
Ultralytics fixture, tiny models with an Ultralytics export's metadata, and the refusals."""
from __future__ import annotations

import hashlib

import pytest
import yaml

from candor_eval.adopt.onnx_card import (
    ULTRALYTICS_PREPROCESS,
    OnnxFacts,
    card_fields,
    end_to_end,
    input_size,
    metadata_imgsz,
    metadata_names,
    read_facts,
    with_kept,
)
from candor_eval.common.errors import InputError
from candor_eval.common.params import validate
from candor_eval.detection.model_card import ModelCard
from tests.conftest import TESTS
from tests.support_adopt import NAMES, ultralytics_onnx

FIXTURE = TESTS / "data" / "ultralytics"


def card_of(path, **kw):
    blob = path.read_bytes()
    return card_fields(read_facts(blob, where=str(path)), onnx="m.onnx", sha256=hashlib.sha256(blob).hexdigest(),
                       where=str(path), **kw)


def test_the_real_ultralytics_export_gives_the_fixtures_card():
    """tests/data/ultralytics/ holds a YOLOv8 exported by Ultralytics itself and its hand-written card."""
    card = card_of(FIXTURE / "tiny-yolov8.onnx")
    written = yaml.safe_load((FIXTURE / "tiny-yolov8.yaml").read_text())
    assert {k: card[k] for k in ("sha256", "classes", "input_size", "output_layout")} == {
        k: written[k] for k in ("sha256", "classes", "input_size", "output_layout")}
    assert card["preprocess"] == {"resize": "opencv-linear", "exif": "apply", "colour": "rgb", "scale": 255}
    validate(ModelCard, card, where="m.yaml")


def test_a_tiny_export_with_ultralytics_metadata(tmp_path):
    ultralytics_onnx(tmp_path / "m.onnx", input_hw=(64, 96))
    card = card_of(tmp_path / "m.onnx")
    assert card["classes"] == NAMES and card["input_size"] == [64, 96] and card["output_layout"] == "ultralytics"
    assert card["onnx"] == "m.onnx" and card["sha256"] == hashlib.sha256((tmp_path / "m.onnx").read_bytes()).hexdigest()


def test_classes_given_rename_the_outputs_or_name_a_model_that_has_none(tmp_path):
    ultralytics_onnx(tmp_path / "m.onnx")
    assert card_of(tmp_path / "m.onnx", classes=["a", "b", "c"])["classes"] == ["a", "b", "c"]
    ultralytics_onnx(tmp_path / "bare.onnx", drop=("names", "author", "description"))
    assert card_of(tmp_path / "bare.onnx", classes=["a", "b", "c"])["output_layout"] == "ultralytics"
    with pytest.raises(InputError, match="the model names no classes") as err:
        card_of(tmp_path / "bare.onnx")
    assert "--classes a,b" in str(err.value)
    with pytest.raises(InputError, match="--classes: not one name per class of the model"):
        card_of(tmp_path / "m.onnx", classes=["a", "b"])


@pytest.mark.parametrize("build, message", [
    (dict(metadata={"task": "segment"}), "metadata task: not a detection model"),
    (dict(metadata={"task": "pose"}), "metadata task: not a detection model"),
    (dict(metadata={"end2end": "True"}), "an end-to-end export"),
    (dict(metadata={"args": "{'nms': True, 'batch': 1}"}), "an end-to-end export"),
    (dict(output=(1, 4 + 4, 16)), "m.onnx: output: unsupported output shape"),           # a head of 4 classes
    (dict(names=["a", "b"], output=(1, 4 + 3, 16)), "unsupported output shape"),    # names 2, a head of 3
    (dict(output=(1, 16, 5 + 3)), "not the ultralytics head for 3 classes"),        # fits yolov5 [1, N, 5+C]
    (dict(metadata={"imgsz": "[32, 32]"}), "metadata imgsz: not the input's size"),
    (dict(metadata={"imgsz": "640x640"}), "metadata imgsz: not readable"),
    (dict(metadata={"names": "__import__('os').getcwd()"}), "metadata names: not readable"),
    (dict(metadata={"names": "{0: 'a', 2: 'b'}"}), "metadata names: not class names by index 0..n-1"),
    (dict(dynamic_input=True), "dynamic input size"),
])
def test_refused(tmp_path, build, message):
    ultralytics_onnx(tmp_path / "m.onnx", **build)
    with pytest.raises(InputError, match=message):
        card_of(tmp_path / "m.onnx")


def test_a_dynamic_input_says_how_to_export_it_static(tmp_path):
    ultralytics_onnx(tmp_path / "m.onnx", dynamic_input=True, metadata={"imgsz": "[640, 640]"})
    with pytest.raises(InputError) as err:
        card_of(tmp_path / "m.onnx")
    assert "yolo export format=onnx dynamic=False imgsz=640" in str(err.value)


def test_a_file_onnxruntime_cannot_load(tmp_path):
    with pytest.raises(InputError, match="x.onnx: onnxruntime cannot load the model"):
        read_facts(b"not onnx", where="x.onnx")


@pytest.mark.parametrize("shape, size", [((1, 3, 64, 96), [64, 96]), (("batch", 3, 320, 320), [320, 320])])
def test_input_size(shape, size):
    assert input_size(shape, imgsz=None, where="m") == size


@pytest.mark.parametrize("shape, message", [
    ((4, 3, 64, 64), "not an image input"), ((1, 1, 64, 64), "not an image input"), ((1, 3, 64), "not an image"),
    ((1, 3, "h", "w"), "dynamic input size"), ((1, 3, None, 64), "dynamic input size")])
def test_input_size_refuses(shape, message):
    with pytest.raises(InputError, match=message):
        input_size(shape, imgsz=None, where="m")


def test_metadata_readers():
    assert metadata_names("['a', 'b']", where="m") == ("a", "b")
    assert metadata_imgsz("(64, 32)", where="m") == [64, 32]
    assert end_to_end({}) is False and end_to_end({"end2end": "False", "args": "not a dict"}) is False


def test_without_metadata_the_layout_comes_from_the_shape():
    facts = OnnxFacts(metadata={}, input_shape=(1, 3, 64, 64), output_shape=(1, "anchors", 5 + 2))
    card = card_fields(facts, onnx="m.onnx", sha256="0" * 64, classes=["a", "b"], where="m.onnx")
    assert card["output_layout"] == "yolov5" and card["preprocess"] == ULTRALYTICS_PREPROCESS


def test_an_earlier_cards_own_fields_are_kept_and_its_evaluation_only_for_the_same_bytes():
    card = {"onnx": "m.onnx", "sha256": "b" * 64, "classes": ["a"], "preprocess": dict(ULTRALYTICS_PREPROCESS)}
    old = {"sha256": "a" * 64, "description": "v2", "source": "s3://bucket/m.onnx", "class_map": {"a": "a"},
           "preprocess": {"resize": "pillow-bilinear"}, "evaluation": {"micro": {"f1": 0.5}},
           "eval_manifest_sha256": "c" * 64, "input_size": [1, 1]}
    assert with_kept(card, old) == {"onnx": "m.onnx", "sha256": "b" * 64, "source": "s3://bucket/m.onnx",
                                    "description": "v2", "classes": ["a"], "preprocess": {"resize": "pillow-bilinear"},
                                    "class_map": {"a": "a"}}
    same = with_kept(card, {**old, "sha256": "b" * 64})
    assert same["evaluation"] == {"micro": {"f1": 0.5}} and same["eval_manifest_sha256"] == "c" * 64
    assert with_kept(card, None) == card
