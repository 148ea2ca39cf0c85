"""Tests for candor_eval/detection/inference/decode.py: each layout on a synthetic tensor, and the shape errors."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.inference.decode import decode, infer_layout

# two anchors, three classes; anchor 0: box centre (20, 30) size 10x4, class 2 at 0.8;
# anchor 1: box centre (5, 5) size 2x2, best class 0 at 0.04 (below the floor)
ROWS = np.array([[20, 30, 10, 4, 0.1, 0.2, 0.8],
                 [5, 5, 2, 2, 0.04, 0.01, 0.0]], np.float32)


@pytest.mark.parametrize("layout, tensor", [
    ("ultralytics", ROWS.T[None]),          # [1, 4+C, N]
    ("ultralytics-t", ROWS[None]),          # [1, N, 4+C]
])
def test_ultralytics_layouts(layout, tensor):
    assert infer_layout(tensor.shape, num_classes=3) == layout
    c = decode(tensor, layout=layout, num_classes=3, floor=0.05)
    assert c.boxes.tolist() == [[15.0, 28.0, 25.0, 32.0]]
    assert c.classes.tolist() == [2]
    assert c.scores.tolist() == [pytest.approx(0.8)]


def test_yolov5_layout_multiplies_objectness():
    rows = np.array([[20, 30, 10, 4, 0.5, 0.1, 0.2, 0.8],     # obj .5 -> class 2 at .4
                     [5, 5, 2, 2, 0.05, 1.0, 0.0, 0.0]], np.float32)   # .05 * 1 = .05 >= floor
    t = rows[None]
    assert infer_layout(t.shape, num_classes=3) == "yolov5"
    c = decode(t, layout="yolov5", num_classes=3, floor=0.05)
    assert c.classes.tolist() == [2, 0]
    assert c.scores.tolist() == [pytest.approx(0.4), pytest.approx(0.05)]
    assert c.boxes[1].tolist() == [4.0, 4.0, 6.0, 6.0]


def test_class_score_tie_goes_to_lower_class():
    t = np.array([[[1, 1, 2, 2, 0.5, 0.5, 0.1]]], np.float32)
    assert decode(t, layout="ultralytics-t", num_classes=3, floor=0.0).classes.tolist() == [0]


def test_nothing_above_floor_is_empty():
    c = decode(ROWS[None], layout="ultralytics-t", num_classes=3, floor=0.9)
    assert c.boxes.shape == (0, 4) and c.scores.tolist() == []


@pytest.mark.parametrize("shape", [(1, 84, 10, 2), (1, 9, 10), (2, 7), (3, 7, 10)])
def test_unsupported_shape_names_shape_and_layouts(shape):
    with pytest.raises(InputError) as err:
        infer_layout(shape, num_classes=3)
    msg = err.value.message
    assert str(list(shape)) in msg
    for name in ("ultralytics [1, 4+C, N]", "ultralytics-t", "yolov5 [1, N, 5+C]"):
        assert name in msg


def test_declared_layout_wins_and_must_fit():
    # [1, 7, 7] fits both ultralytics and ultralytics-t for C=3: the card decides
    assert infer_layout((1, 7, 7), num_classes=3) == "ultralytics"
    assert infer_layout((1, 7, 7), num_classes=3, declared="ultralytics-t") == "ultralytics-t"
    assert infer_layout((1, 7, 9), num_classes=3, declared="ultralytics [1, 4+C, N]") == "ultralytics"
    with pytest.raises(InputError, match="does not fit the declared layout yolov5"):
        infer_layout((1, 7, 10), num_classes=3, declared="yolov5")
    with pytest.raises(InputError, match="unknown output layout"):
        infer_layout((1, 7, 10), num_classes=3, declared="yolov8")


def test_dynamic_anchor_dimension_accepted():
    assert infer_layout(("batch", 7, "anchors"), num_classes=3) == "ultralytics"


def naive_decode(output, *, layout, num_classes, floor):
    """The definition row by row in float64 (the reference for the vectorised decoder)."""
    rows = (output[0].T if layout == "ultralytics" else output[0]).astype(np.float64)
    boxes, scores, classes = [], [], []
    for r in rows:
        cls = r[5:5 + num_classes] * r[4] if layout == "yolov5" else r[4:4 + num_classes]
        best = int(np.argmax(cls))
        if cls[best] >= floor:
            cx, cy, w, h = r[:4]
            boxes.append([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
            scores.append(cls[best])
            classes.append(best)
    return np.array(boxes).reshape(-1, 4), np.array(scores), np.array(classes, dtype=np.int64)


@pytest.mark.parametrize("layout", ["ultralytics", "ultralytics-t", "yolov5"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_matches_the_row_by_row_definition_on_random_outputs(layout, dtype):
    rng = np.random.default_rng(11)
    c, n = 10, 400
    extra = 5 if layout == "yolov5" else 4
    rows = np.hstack([rng.uniform(0, 320, (n, 4)), rng.uniform(0, 1, (n, extra - 4 + c))]).astype(dtype)
    rows[::7, extra:extra + 2] = rows[::7, extra + 2:extra + 3]        # ties between classes
    out = (rows.T if layout == "ultralytics" else rows)[None]
    for floor in (0.0, 0.05, 0.5, 0.9):
        got = decode(out, layout=layout, num_classes=c, floor=floor)
        boxes, scores, classes = naive_decode(out, layout=layout, num_classes=c, floor=floor)
        assert got.boxes.dtype == np.float64 and got.scores.dtype == np.float64
        assert np.array_equal(got.boxes, boxes) and np.array_equal(got.scores, scores)
        assert np.array_equal(got.classes, classes)
