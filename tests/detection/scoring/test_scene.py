"""Tests for candor_eval/detection/scoring/scene.py: the scene a model is scored on, from a detector data
set (frames.csv, YOLO labels) and one model's raw detections, or from a COCO ground truth.

Definitions checked: a frame's ``scale`` is ``min(input_w / width, input_h / height)``; the scene's
classes are the data classes the model covers, in the data's order, and the labels of the others are
set apart; detections are re-indexed to the scene's frames and classes; detections that do not cover
exactly the data set's frames are stale."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.detections_file import RawDetections
from candor_eval.detection.scoring.columns import GroundTruth
from candor_eval.detection.scoring.records import Scene
from candor_eval.detection.scoring.scene import build_scene, coco_scene
from tests.support_detect import make_dataset

FRAMES = {"a": {"size": (128, 64), "labels": ["0 0.5 0.5 0.25 0.5"], "zoom": "2", "session": "s1"},
          "b": {"size": (64, 128), "labels": ["2 0.5 0.5 0.5 0.25", "1 0.5 0.5 0.25 0.125"], "split": "test",
                "session": "s2"}}


def raw(classes: list[str], frames=("a", "b")) -> RawDetections:
    """Three detections: (frame a, model class 0), (b, 1), (b, 0)."""
    sizes = {"a": (128, 64), "b": (64, 128)}
    return RawDetections(header={"classes": classes}, frames=tuple(frames), sizes={f: sizes[f] for f in frames},
                         frame=np.array([0, 1, 1]), cls=np.array([0, 1, 0]),
                         boxes=np.array([[48, 16, 80, 48], [16, 48, 48, 80], [0, 0, 4, 4]], float),
                         score=np.array([0.9, 0.8, 0.3]))


def test_the_scene_of_a_data_set_for_a_model_of_every_class(tmp_path):
    """Input 64x64: frame a (128x64) has scale 0.5, frame b (64x128) 0.5; the deer label of a is the
    YOLO box (cx 64, cy 32, w 32, h 32) in original pixels."""
    data = make_dataset(tmp_path, FRAMES)
    inputs = build_scene(data=data, raw=raw(["deer", "sheep", "relic"]), input_hw=(64, 64))
    sc = inputs.scene
    assert isinstance(sc, Scene) and sc.classes == ("deer", "sheep", "relic")
    assert sc.frames.tolist() == ["a", "b"] and sc.split.tolist() == ["dev", "test"]
    assert sc.session.tolist() == ["s1", "s2"] and sc.zoom.tolist() == ["2", "1"]
    assert sc.scale.tolist() == [0.5, 0.5]
    assert sc.label_frame.tolist() == [0, 1, 1] and sc.label_class.tolist() == [0, 2, 1]
    assert sc.label_boxes[0].tolist() == [48.0, 16.0, 80.0, 48.0]
    assert inputs.det_frame.tolist() == [0, 1, 1] and inputs.det_class.tolist() == [0, 1, 0]
    assert inputs.outside.classes == () and len(inputs.outside.label_frame) == 0


def test_a_model_of_a_subset_scores_its_classes_and_sets_the_others_apart(tmp_path):
    """Card classes [relic, deer] onto data classes: the scene's classes are (deer, relic), in the
    data's order; the sheep label of frame b is out of scope; model class 0 (relic) is scene class 1."""
    data = make_dataset(tmp_path, FRAMES)
    inputs = build_scene(data=data, raw=raw(["relic", "deer"]), input_hw=(64, 64),
                         class_map={"relic": "relic", "deer": "deer"})
    sc = inputs.scene
    assert sc.classes == ("deer", "relic")
    assert sc.label_class.tolist() == [0, 1] and sc.label_frame.tolist() == [0, 1]
    assert inputs.det_class.tolist() == [1, 0, 1]
    assert inputs.outside.classes == ("sheep",) and inputs.outside.label_frame.tolist() == [1]


def test_detections_missing_a_frame_are_stale(tmp_path):
    data = make_dataset(tmp_path, FRAMES)
    stale = raw(["deer", "sheep", "relic"], frames=("a",))
    with pytest.raises(InputError, match="the detections do not cover exactly the data set's frames"):
        build_scene(data=data, raw=stale, input_hw=(64, 64))


def test_the_scene_of_a_coco_ground_truth():
    """One split ``all``, empty session and zoom, scale 1 (bands in original pixels)."""
    gt = GroundTruth(classes=("cat",), frames=("x", "y"), sizes=np.array([[10, 10], [20, 20]]),
                     label_frame=np.array([1]), label_index=np.array([0]), label_class=np.array([0]),
                     label_boxes=np.array([[1.0, 2.0, 3.0, 4.0]]), label_crowd=np.array([True]))
    sc = coco_scene(gt)
    assert sc.frames.tolist() == ["x", "y"] and sc.split.tolist() == ["all", "all"]
    assert sc.session.tolist() == ["", ""] and sc.zoom.tolist() == ["", ""] and sc.scale.tolist() == [1.0, 1.0]
    assert sc.label_crowd.tolist() == [True] and sc.label_boxes.tolist() == [[1.0, 2.0, 3.0, 4.0]]
