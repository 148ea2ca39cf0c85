"""The served contract: what differs between two packages."""
from __future__ import annotations

from candor_eval.detection.config import ServedNms
from candor_eval.detection.model_card import ModelCard, Preprocess
from candor_eval.detection.served_contract import contract, differing_keys

SHA = "0" * 64


def card(**kw) -> ModelCard:
    return ModelCard(onnx="m.onnx", sha256=SHA, input_size=[320, 320], **kw)


def test_equal_packages_differ_nowhere_whatever_their_weights():
    a = contract(card(), onnx_sha256="a" * 64, thresholds={"deer": 0.3}, nms=ServedNms(0.5, 300))
    b = contract(card(), onnx_sha256="b" * 64, thresholds={"deer": 0.3}, nms=ServedNms(0.5, 300))
    assert differing_keys(a, b) == []


def test_every_changed_part_of_the_package_is_named():
    a = contract(card(), onnx_sha256=SHA, thresholds={"deer": 0.3, "boar": 0.4}, nms=ServedNms(0.5, 300))
    b = contract(card(preprocess=Preprocess(resize="opencv-linear"), output_layout="yolov5"), onnx_sha256=SHA,
                 thresholds={"deer": 0.2, "boar": 0.4}, nms=ServedNms(0.7, None, agnostic=True))
    assert differing_keys(a, b) == ["nms.agnostic", "nms.iou", "nms.max_det", "output_layout", "preprocess.resize",
                                    "thresholds.deer"]


def test_a_class_served_by_one_model_only_differs():
    a = contract(card(), onnx_sha256=SHA, thresholds={"deer": 0.3}, nms=ServedNms(0.5))
    b = contract(card(), onnx_sha256=SHA, thresholds={"deer": 0.3, "boar": 0.3}, nms=ServedNms(0.5))
    assert differing_keys(a, b) == ["thresholds.boar"]


def test_training_sessions_are_recorded_not_compared():
    a = contract(card(training_sessions=["s1"]), onnx_sha256=SHA, thresholds={}, nms=ServedNms(0.5))
    b = contract(card(), onnx_sha256=SHA, thresholds={}, nms=ServedNms(0.5))
    assert a["training_sessions"] == ["s1"] and differing_keys(a, b) == []

