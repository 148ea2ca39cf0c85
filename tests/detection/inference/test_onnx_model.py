"""Tests for candor_eval/detection/inference/onnx_model.py on tiny constant ONNX models: the bytes are
hashed and checked against the card (and the fetch stage's record) before onnxruntime sees them,
then the static input shape and the output layout are read."""
from __future__ import annotations

import json

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.inference.onnx_model import check_model_record, open_model
from tests.support_detect import CLASSES, constant_model, ultralytics_output, write_card

ROWS = [[32, 32, 10, 10, 0.9, 0.0, 0.0]]   # one anchor: a deer at the centre


@pytest.fixture
def card(tmp_path):
    sha = constant_model(tmp_path / "m.onnx", ultralytics_output(ROWS), input_hw=(64, 96))
    return write_card(tmp_path, "m", sha)


def test_open_model_reads_the_static_input_and_the_layout(card):
    """[1, 3, 64, 96] input; output [1, 4 + 3, 8]: the Ultralytics layout; classes from the card."""
    m = open_model(card, providers=["CPUExecutionProvider"])
    assert (m.name, m.input_h, m.input_w, m.layout, m.classes) == ("m", 64, 96, "ultralytics", tuple(CLASSES))
    out = m.run(np.zeros((1, 3, 64, 96), np.float32))
    assert out.shape == (1, 7, 8) and out[0, :, 0].tolist() == pytest.approx(ROWS[0])


def test_changed_bytes_are_refused_before_onnxruntime_loads_them(card, monkeypatch):
    import onnxruntime

    def boom(*a, **k):
        raise AssertionError("onnxruntime must not load an unchecked model")

    monkeypatch.setattr(onnxruntime, "InferenceSession", boom)
    onnx = card.with_suffix(".onnx")
    onnx.write_bytes(onnx.read_bytes() + b"\0")
    with pytest.raises(InputError, match="SHA-256 mismatch; refusing to load the model"):
        open_model(card, providers=["CPUExecutionProvider"])


def test_check_model_record_needs_the_cards_sha256(tmp_path):
    """The record must exist and name the card's SHA-256 (else: rerun the fetch stage)."""
    record = tmp_path / "model-m.json"
    with pytest.raises(InputError, match="verified record not found"):
        check_model_record(record, card_sha256="a" * 64)
    record.write_text(json.dumps({"sha256": "b" * 64}))
    with pytest.raises(InputError, match="verified SHA-256 differs from the model card"):
        check_model_record(record, card_sha256="a" * 64)
    check_model_record(record, card_sha256="b" * 64)


def test_open_model_checks_the_verified_record_when_given(card, tmp_path):
    with pytest.raises(InputError, match="verified record not found"):
        open_model(card, providers=["CPUExecutionProvider"], verified=tmp_path / "model-m.json")


def test_a_dynamic_input_is_refused(tmp_path):
    sha = constant_model(tmp_path / "d.onnx", ultralytics_output(ROWS), dynamic_input=True)
    with pytest.raises(InputError, match=r"input shape is not a static \[1, 3, H, W\]"):
        open_model(write_card(tmp_path, "d", sha), providers=["CPUExecutionProvider"])


def test_a_card_input_size_must_be_the_models(tmp_path):
    sha = constant_model(tmp_path / "s.onnx", ultralytics_output(ROWS), input_hw=(64, 64))
    with pytest.raises(InputError, match="card disagrees with the model's input shape"):
        open_model(write_card(tmp_path, "s", sha, input_size=[32, 32]), providers=["CPUExecutionProvider"])


def test_an_unavailable_provider_is_refused_naming_the_params_key(card):
    with pytest.raises(InputError, match="^params.yaml:detector.providers: provider not available"):
        open_model(card, providers=["NoSuchExecutionProvider"])
    with pytest.raises(InputError, match="^eval/params.yaml:detector.providers: provider not available"):
        open_model(card, providers=["NoSuchExecutionProvider"], params_file="eval/params.yaml")
