"""Tests for candor_eval/detection/scoring/coco_pair.py: a ground truth / detections pair scored by hand.

Definitions checked: without thresholds every detection counts and without ``nms_iou`` there is no
NMS; with per-class thresholds, a detection counts when ``score >= class_thresholds[class]``; a
class-agnostic NMS runs after the thresholds, as served; ``ap`` is of every detection as given."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.detection.scoring.coco_pair import score_coco_pair
from candor_eval.detection.scoring.columns import DetectionTable, GroundTruth

CLASSES = ("cat", "dog")
BOX = [0.0, 0.0, 10.0, 10.0]
# frame x: a cat label; frame y: a dog label
GT = GroundTruth(classes=CLASSES, frames=("x", "y"), sizes=np.array([[20, 20], [20, 20]]),
                 label_frame=np.array([0, 1]), label_index=np.array([0, 0]), label_class=np.array([0, 1]),
                 label_boxes=np.array([BOX, BOX]), label_crowd=np.zeros(2, bool))
# x: cat 0.9 on the cat (TP), its near-duplicate 0.8; y: cat 0.7 on the dog (FP), dog 0.2 on the dog
DET = DetectionTable(classes=CLASSES, frame=np.array([0, 0, 1, 1]), cls=np.array([0, 0, 0, 1]),
                     boxes=np.array([BOX, [0, 0, 10, 10.5], BOX, BOX]), score=np.array([0.9, 0.8, 0.7, 0.2]))


def micro(**kw) -> tuple[int, int, int]:
    m = score_coco_pair(GT, DET, **kw)["all"]["micro"]
    return m["tp"], m["fp"], m["fn"]


@pytest.mark.parametrize("kw, counts", [
    ({}, (2, 2, 0)),                                                   # every detection, no NMS
    ({"nms_iou": 0.5}, (2, 1, 0)),                                     # the duplicate cat goes
    ({"nms_iou": 0.5, "class_thresholds": np.array([0.5, 0.5])}, (1, 1, 1)),   # the dog at 0.2 goes
    ({"nms_iou": 0.5, "agnostic": True}, (1, 1, 1)),                   # the cat at 0.7 suppresses the dog
    ({"nms_iou": 0.5, "agnostic": True, "class_thresholds": np.array([0.75, 0.1])}, (2, 0, 0)),  # thresholds first
    ({"nms_iou": 0.5, "max_det": 1}, (1, 1, 1)),                       # one box per frame: y keeps the cat
])
def test_hand_counts(kw, counts):
    assert micro(**kw) == counts


def test_per_class_rates_and_the_counts_behind_them():
    """nms 0.5: cat TP 1 FP 1 (precision 0.5), dog TP 1 (recall 1); every rate has its k of n."""
    out = score_coco_pair(GT, DET, nms_iou=0.5, min_support=1)
    cat, dog = out["all"]["per_class"]["cat"], out["all"]["per_class"]["dog"]
    assert (cat["precision"], cat["recall"], dog["precision"], dog["recall"]) == (0.5, 1.0, 1.0, 1.0)
    assert cat["qualified"] and dog["support"] == 1
    assert out["counts"]["all.micro.precision"]["k"] == 2 and out["counts"]["all.micro.precision"]["n"] == 3


def test_the_ap_block_ignores_thresholds_and_nms():
    """AP is of the results as given (what pycocotools scores): the same with or without them."""
    plain = score_coco_pair(GT, DET)["ap"]
    served = score_coco_pair(GT, DET, nms_iou=0.5, class_thresholds=np.array([0.95, 0.95]))["ap"]
    assert plain == served
