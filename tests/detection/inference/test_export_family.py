"""An Ultralytics or YOLOv5 export whose card declares no preprocess is refused with the line to add
(candor_eval/detection/inference/export_family.py, onnx_model.open_model), on the real Ultralytics fixture."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from candor_eval.common.errors import InputError
from candor_eval.detection.inference.export_family import PREPROCESS_LINE, export_family
from candor_eval.detection.inference.onnx_model import open_model
from tests.conftest import TESTS

FIXTURE = TESTS / "data" / "ultralytics"


@pytest.mark.parametrize("metadata, family", [
    ({"author": "Ultralytics", "description": "Ultralytics YOLOv8n model"}, "ultralytics"),
    ({"description": "Ultralytics YOLO11n model trained on coco.yaml"}, "ultralytics"),
    ({"stride": "32", "names": "{0: 'person'}"}, "yolov5"),
    ({"stride": "32", "names": "{}", "author": "me"}, None),     # YOLOv5 writes exactly stride and names
    ({}, None),
])
def test_export_family(metadata, family):
    assert export_family(metadata) == family


def card_copy(tmp_path: Path, *, preprocess: dict | None, metadata: dict[str, str] | None = None) -> Path:
    """The fixture's ONNX file (its metadata replaced by ``metadata`` when given) and card, with the
    card's ``preprocess`` block replaced (None: no block)."""
    onnx_file = tmp_path / "m.onnx"
    if metadata is None:
        shutil.copy(FIXTURE / "tiny-yolov8.onnx", onnx_file)
    else:
        import onnx

        model = onnx.load(str(FIXTURE / "tiny-yolov8.onnx"))
        del model.metadata_props[:]
        for k, v in metadata.items():
            model.metadata_props.add(key=k, value=v)
        onnx.save(model, str(onnx_file))
    card = yaml.safe_load((FIXTURE / "tiny-yolov8.yaml").read_text())
    card.update(onnx="m.onnx", sha256=hashlib.sha256(onnx_file.read_bytes()).hexdigest())
    card.pop("preprocess")
    if preprocess is not None:
        card["preprocess"] = preprocess
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(card))
    return tmp_path / "m.yaml"


@pytest.mark.parametrize("metadata, family", [(None, "ultralytics"), ({"stride": "32", "names": "{}"}, "yolov5")])
def test_a_card_without_preprocess_is_refused_with_the_line_to_add(tmp_path, metadata, family):
    card = card_copy(tmp_path, preprocess=None, metadata=metadata)
    with pytest.raises(InputError) as err:
        open_model(card, providers=["CPUExecutionProvider"])
    text = str(err.value)
    assert f"{card}: preprocess" in text and family in text and PREPROCESS_LINE in text


@pytest.mark.parametrize("preprocess", [{"resize": "opencv-linear"}, {"resize": "pillow-bilinear"}])
def test_a_declared_preprocess_is_served_as_declared(tmp_path, preprocess):
    model = open_model(card_copy(tmp_path, preprocess=preprocess), providers=["CPUExecutionProvider"])
    assert model.card.preprocess.resize == preprocess["resize"]


def test_a_model_without_exporter_metadata_keeps_the_default(tmp_path):
    model = open_model(card_copy(tmp_path, preprocess=None, metadata={}), providers=["CPUExecutionProvider"])
    assert model.card.preprocess.resize == "pillow-bilinear"
