"""Tests for candor_eval/detection/inference/letterbox.py: geometry, tensor content, and the round trip."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from candor_eval.detection.inference.letterbox import (
    PAD_VALUE,
    Letterboxer,
    letterbox_image,
    plan,
    to_input,
    to_original,
)
from candor_eval.detection.model_card import Preprocess


@pytest.mark.parametrize("w, h, iw, ih, scale, new, pad", [
    (1280, 831, 1280, 1280, 1.0, (1280, 831), (0, 224)),
    (1280, 831, 640, 640, 0.5, (640, 416), (0, 112)),      # 415.5 rounds to 416 (banker's: 416)
    (200, 100, 400, 400, 2.0, (400, 200), (0, 100)),
    (100, 300, 320, 320, 320 / 300, (107, 320), (106, 0)),
])
def test_plan(w, h, iw, ih, scale, new, pad):
    lb = plan(w, h, input_w=iw, input_h=ih)
    assert lb.scale == pytest.approx(scale)
    assert (lb.new_w, lb.new_h) == new
    assert (lb.pad_x, lb.pad_y) == pad


def test_tensor_shape_range_and_padding():
    img = Image.new("RGB", (200, 100), (255, 0, 0))
    lb = plan(200, 100, input_w=400, input_h=400)
    t = letterbox_image(img, lb)
    assert t.shape == (1, 3, 400, 400) and t.dtype == np.float32
    assert t[0, :, 0, 0].tolist() == pytest.approx([PAD_VALUE / 255] * 3)
    assert t[0, :, 200, 200].tolist() == pytest.approx([1.0, 0.0, 0.0])


@pytest.mark.parametrize("size, inp", [((200, 100), 400), ((333, 217), 640), ((1280, 831), 640)])
def test_drawn_box_round_trip_within_half_pixel_over_scale(size, inp):
    """A rectangle drawn in the frame, found in the tensor, mapped back: within 0.5/scale px."""
    w, h = size
    box = np.array([[0.3 * w, 0.25 * h, 0.8 * w, 0.7 * h]]).round()
    arr = np.zeros((h, w, 3), np.uint8)
    x1, y1, x2, y2 = box[0].astype(int)
    arr[y1:y2, x1:x2] = 255
    lb = plan(w, h, input_w=inp, input_h=inp)
    t = letterbox_image(Image.fromarray(arr), lb)[0, 0]
    # sub-pixel extent in the tensor: the covered fraction of each row/column (bilinear keeps area)
    cols = (t[lb.pad_y:lb.pad_y + lb.new_h] > 0.5).any(axis=0)
    rows = (t[:, lb.pad_x:lb.pad_x + lb.new_w] > 0.5).any(axis=1)
    xs, ys = np.flatnonzero(cols), np.flatnonzero(rows)
    found = np.array([[xs[0], ys[0], xs[-1] + 1, ys[-1] + 1]], float)
    back = to_original(found, lb)
    tol = 1.0 / lb.scale   # stretch (<= 0.5 input px) plus edge quantisation at 50% (<= 0.5 input px)
    assert np.abs(back - box).max() <= tol
    # the geometric maps are inverse to well within 0.5 px
    assert np.abs(to_original(to_input(box, lb), lb) - box).max() < 1e-9


def test_round_trip_random_boxes_within_half_pixel():
    rng = np.random.default_rng(1)
    for w, h, inp in [(1280, 831, 1280), (1280, 831, 640), (50, 900, 320)]:
        lb = plan(w, h, input_w=inp, input_h=inp)
        xy = rng.uniform(0, [w / 2, h / 2], (50, 2))
        boxes = np.hstack([xy, xy + rng.uniform(1, [w / 2, h / 2], (50, 2))])
        assert np.abs(to_original(to_input(boxes, lb), lb) - boxes).max() <= 0.5


def test_to_original_clips_to_frame():
    lb = plan(200, 100, input_w=400, input_h=400)
    assert to_original(np.array([[-10, 50, 500, 390]]), lb).tolist() == [[0.0, 0.0, 200.0, 100.0]]


def reference_tensor(image: Image.Image, lb) -> np.ndarray:
    """The letterbox by its definition: Pillow resize, uint8 grey canvas, float32 / 255."""
    rgb = image.convert("RGB")
    if rgb.size != (lb.new_w, lb.new_h):
        rgb = rgb.resize((lb.new_w, lb.new_h), Image.BILINEAR)
    canvas = np.full((lb.input_h, lb.input_w, 3), PAD_VALUE, dtype=np.uint8)
    canvas[lb.pad_y:lb.pad_y + lb.new_h, lb.pad_x:lb.pad_x + lb.new_w] = np.asarray(rgb)
    return canvas.transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255.0)


@pytest.mark.parametrize("size, mode, inp, fast", [
    ((640, 416), "RGB", (320, 320), True),      # the demo: an exact halving (fast path)
    ((128, 256), "RGB", (64, 128), True),       # halving at H = 2 W, padded in x
    ((64, 200), "RGB", (32, 100), False),       # taller than 2 W: Pillow path
    ((333, 217), "RGB", (320, 320), False),     # not a halving: Pillow path
    ((640, 416), "L", (320, 320), True),        # converted to RGB first
    ((640, 416), "RGBA", (320, 320), True),
    ((160, 104), "RGB", (160, 160), False),     # no resize at all
])
def test_letterboxer_is_bit_identical_to_the_definition(size, mode, inp, fast):
    rng = np.random.default_rng(7)
    w, h = size
    img = Image.fromarray(rng.integers(0, 256, (h, w, 4), dtype=np.uint8), "RGBA").convert(mode)
    lb = plan(w, h, input_w=inp[0], input_h=inp[1])
    ref = reference_tensor(img, lb)
    assert np.array_equal(letterbox_image(img, lb), ref)
    lbx = Letterboxer(input_w=inp[0], input_h=inp[1])
    assert np.array_equal(lbx(img, lb), ref)
    assert (lbx._halver is not None) is fast       # the path taken is the one documented


def test_letterboxer_reuses_its_tensor_and_repaints_the_border():
    rng = np.random.default_rng(3)
    lbx = Letterboxer(input_w=320, input_h=320)
    frames = [(640, 416), (320, 640), (640, 416), (333, 217)]     # the border moves between calls
    for w, h in frames:
        img = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
        lb = plan(w, h, input_w=320, input_h=320)
        t = lbx(img, lb)
        assert t is lbx(img, lb)
        assert np.array_equal(t, reference_tensor(img, lb))
    with pytest.raises(ValueError, match="letterboxer for 320x320"):
        lbx(img, plan(w, h, input_w=640, input_h=640))


@pytest.mark.parametrize("size, inp", [((640, 416), (320, 320)), ((333, 217), (320, 320)), ((100, 300), (320, 320)),
                                       ((160, 104), (160, 160))])
def test_opencv_linear_is_ultralytics_letterbox(size, inp):
    """cv2.resize INTER_LINEAR of the BGR frame, copyMakeBorder with 114, flipped to RGB, / 255."""
    import cv2  # a runtime requirement (opencv-linear cards)
    rng = np.random.default_rng(11)
    w, h = size
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    lb = plan(w, h, input_w=inp[0], input_h=inp[1])
    bgr = cv2.resize(np.ascontiguousarray(rgb[..., ::-1]), (lb.new_w, lb.new_h), interpolation=cv2.INTER_LINEAR)
    dw, dh = (inp[0] - lb.new_w) / 2, (inp[1] - lb.new_h) / 2
    top, bottom, left, right = round(dh - 0.1), round(dh + 0.1), round(dw - 0.1), round(dw + 0.1)
    bgr = cv2.copyMakeBorder(bgr, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(114, 114, 114))
    ref = (bgr[..., ::-1].transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255)).astype(np.float32)
    pre = Preprocess(resize="opencv-linear")
    img = Image.fromarray(rgb)
    assert np.array_equal(letterbox_image(img, lb, preprocess=pre), ref)
    lbx = Letterboxer(input_w=inp[0], input_h=inp[1], preprocess=pre)
    assert np.array_equal(lbx(img, lb), ref) and lbx._halver is None


def test_default_preprocess_is_pillow_bilinear_rgb_255():
    rng = np.random.default_rng(5)
    img = Image.fromarray(rng.integers(0, 256, (416, 640, 3), dtype=np.uint8))
    lb = plan(640, 416, input_w=320, input_h=320)
    explicit = Preprocess(resize="pillow-bilinear", exif="ignore", colour="rgb", scale=255)
    assert np.array_equal(letterbox_image(img, lb), letterbox_image(img, lb, preprocess=explicit))
    boxer = Letterboxer(input_w=320, input_h=320, preprocess=explicit)
    assert np.array_equal(boxer(img, lb), reference_tensor(img, lb))


def test_colour_and_scale():
    img = Image.new("RGB", (4, 2), (10, 20, 30))
    lb = plan(4, 2, input_w=4, input_h=4)
    t = letterbox_image(img, lb, preprocess=Preprocess(colour="bgr", scale=1))
    assert t[0, :, 1, 0].tolist() == [30, 20, 10]                 # the frame, channels reversed, not scaled
    assert t[0, :, 0, 0].tolist() == [PAD_VALUE] * 3              # the border: 114 / scale
