"""Tests for candor_eval/detection/config.py: the detector track's params models, validated once.

Definitions checked: a set or model name is one path segment; a set lists each model once; a model
serves the shared NMS with its own ``nms_by_model`` keys replacing them; a model's served thresholds
are the shared mapping with its ``thresholds_by_model`` keys replacing them, every value in
``[floor, 1]`` and every name ``default`` or a known class; critical classes are known classes."""
from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from candor_eval.common.errors import InputError
from candor_eval.common.params import validate
from candor_eval.detection.config import (
    DEFAULT_THRESHOLD,
    HINT_FLOOR,
    ClusterView,
    DetectorParams,
    MatchParams,
    ReinferenceParams,
    ServedNms,
    ThresholdParams,
    check_critical,
    threshold_problems,
)


@pytest.mark.parametrize("sets, message", [
    ({"s": ["m", "m"]}, "lists a model twice: ['m']"),
    ({"s": []}, "lists no models"),
    ({"..": ["m"]}, "is not a set or model name"),
    ({"s": ["a/b"]}, "is not a set or model name"),
])
def test_sets_refuse_bad_names_empty_sets_and_a_model_twice(sets, message):
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        DetectorParams(sets=sets)


def test_models_are_every_model_once_in_order_of_first_appearance():
    assert DetectorParams(sets={"a": ["m2", "m1"], "b": ["m3", "m2"]}).models == ["m2", "m1", "m3"]
    assert DetectorParams().models == []


def test_served_nms_replaces_only_the_keys_a_model_names():
    """Shared nms_iou 0.5, cap 100: model y changes the IoU only, model z lifts the cap."""
    p = DetectorParams(sets={"s": ["x", "y", "z"]}, max_det=100,
                       nms_by_model={"y": {"nms_iou": 0.7}, "z": {"max_det": None, "nms_agnostic": True}})
    assert p.served_nms("x") == ServedNms(iou=0.5, max_det=100, agnostic=False)
    assert p.served_nms("y") == ServedNms(iou=0.7, max_det=100, agnostic=False)
    assert p.served_nms("z") == ServedNms(iou=0.5, max_det=None, agnostic=True)
    assert p.served_nms(None) == p.served_nms("x")


def test_nms_by_model_must_name_a_model_of_the_sets():
    with pytest.raises(ValidationError, match="nms_by_model names 'q', not a model of detector.sets"):
        DetectorParams(sets={"s": ["x"]}, nms_by_model={"q": {"nms_iou": 0.6}})


def test_match_params_refuse_a_critical_class_twice_and_unsorted_bands():
    with pytest.raises(ValidationError, match=r"a class listed twice: \['deer'\]"):
        MatchParams(critical=["deer", "sheep", "deer"])
    for bands in ([48, 16], [16, 16], [0, 16]):
        with pytest.raises(ValidationError, match="strictly ascending"):
            MatchParams(bands=bands)
    assert MatchParams(bands=[16, 48]).bands == [16, 48]


@pytest.mark.parametrize("score, ok", [(0.001, True), (0.999, True), (0.0, False), (1.0, False)])
def test_the_reinference_score_tolerance_is_a_probability(score, ok):
    """Strictly between 0 and 1 (candor_eval.common.params.Probability)."""
    if ok:
        assert ReinferenceParams(box_px=0.5, score=score).score == score
    else:
        with pytest.raises(ValidationError):
            ReinferenceParams(box_px=0.5, score=score)


def test_threshold_problems_name_each_bad_key():
    """Unknown names, non-numbers (a bool is not a number) and values outside [floor, 1]; one problem each."""
    got = threshold_problems({"default": 0.3, "dear": 0.2, "deer": True, "sheep": 0.01, "relic": 1.5},
                             known=["deer", "sheep", "relic"], floor=0.05, where="p.yaml:thresholds")
    assert [(p.where, p.what) for p in got] == [
        ("p.yaml:thresholds.dear", "unknown class name"),
        ("p.yaml:thresholds.deer", "not a number"),
        ("p.yaml:thresholds.sheep", "threshold outside [detector.floor, 1]"),
        ("p.yaml:thresholds.relic", "threshold outside [detector.floor, 1]")]


def test_class_thresholds_are_the_served_mapping_in_class_order():
    """Shared {default 0.35, deer 0.2}, model m: {deer 0.3, default 0.5}: m serves deer 0.3 and 0.5
    for the classes neither mapping names; another model serves the shared mapping."""
    params = ThresholdParams({"default": 0.35, "deer": 0.2, "sheep": 0.25}, {"m": {"deer": 0.3, "default": 0.5}})
    classes = ("sheep", "deer", "relic")
    assert params.class_thresholds("m", classes=classes, floor=0.05).tolist() == [0.25, 0.3, 0.5]
    assert params.class_thresholds("other", classes=classes, floor=0.05).tolist() == [0.25, 0.2, 0.35]
    assert params.class_thresholds(None, classes=classes, floor=0.05).dtype == np.float64


def test_class_thresholds_refuse_a_missing_default_and_values_below_the_floor():
    with pytest.raises(InputError, match="thresholds.default: missing") as err:
        ThresholdParams({"deer": 0.3}, where="p.yaml").class_thresholds(None, classes=("deer",), floor=0.05)
    assert err.value.hint is None
    with pytest.raises(InputError, match=r"thresholds_by_model.m.deer: threshold outside") as err:
        ThresholdParams({"default": 0.3}, {"m": {"deer": 0.01}}, where="p.yaml").class_thresholds(
            "m", classes=("deer",), floor=0.05)
    assert err.value.hint == HINT_FLOOR


def test_class_thresholds_check_names_against_known_classes():
    """A model covering a subset of the data's classes may name thresholds of every data class."""
    params = ThresholdParams({"default": 0.3, "relic": 0.6})
    assert params.class_thresholds(None, classes=("deer",), known=("deer", "relic"), floor=0.05).tolist() == [0.3]
    with pytest.raises(InputError, match="thresholds.relic: unknown class name"):
        params.class_thresholds(None, classes=("deer",), floor=0.05)


def test_from_sections_needs_a_mapping_and_check_models_names_strays():
    with pytest.raises(InputError, match="p.yaml:thresholds: not a mapping"):
        ThresholdParams.from_sections([0.3], {}, where="p.yaml")
    assert ThresholdParams.from_sections(None, {}, where="p.yaml").shared == {"default": DEFAULT_THRESHOLD} \
        and DEFAULT_THRESHOLD == 0.25                                    # Ultralytics' predict conf
    params = ThresholdParams.from_sections({"default": 0.3}, {"m": {}, "q": {}}, where="p.yaml")
    params.check_models(["m", "q"])
    with pytest.raises(InputError, match="p.yaml:thresholds_by_model.q: not a model of detector.sets"):
        params.check_models(["m"])


def test_check_critical_names_each_unknown_class():
    check_critical(["deer"], classes=("deer", "sheep"), where="p.yaml")
    with pytest.raises(InputError, match="p.yaml:match.critical: unknown class name") as err:
        check_critical(["boar", "deer", "wolf"], classes=("deer",), where="p.yaml")
    assert len(err.value.problems) == 2


def test_cluster_view_by_set_overrides_the_detection_default():
    view = ClusterView(detection="frame", by_set={"birds": "session"})
    assert (view.detection_of("birds"), view.detection_of("detector")) == ("session", "frame")


@pytest.mark.parametrize("doc, key", [
    ({"nms_iou": True}, "nms_iou"), ({"max_det": True}, "max_det"), ({"floor": "0.05"}, "floor"),
    ({"sets": {"s": ["x"]}, "nms_by_model": {"x": {"nms_iou": True}}}, "nms_by_model.x.nms_iou"),
    ({"sets": {"s": ["x"]}, "nms_by_model": {"x": {"max_det": False}}}, "nms_by_model.x.max_det"),
])
def test_a_served_nms_number_is_never_a_bool_nor_text(doc, key):
    """``nms_iou: true`` would be 1.0 (NMS off) and ``max_det: true`` a cap of 1: both are errors."""
    with pytest.raises(InputError, match=rf"^p.yaml:detector.{key}: .*must be a number"):
        validate(DetectorParams, doc, where="p.yaml:detector")
