"""Tests for candor_eval/detection/inference/halve.py: bit-identical to Pillow's BILINEAR halving, on random images."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from candor_eval.detection.inference.halve import EDGE_FAR, EDGE_NEAR, PRECISION_BITS, Halver, fits


def pillow_half(hwc: np.ndarray) -> np.ndarray:
    h, w = hwc.shape[:2]
    return np.asarray(Image.fromarray(hwc).resize((w // 2, h // 2), Image.BILINEAR))


def halve(hwc: np.ndarray) -> np.ndarray:
    planar = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    return Halver(planar.shape)(planar).transpose(1, 2, 0)


@pytest.mark.parametrize("w, h, ok", [
    (640, 416, True), (4, 4, True), (4, 8, True), (100, 200, True),
    (100, 202, False),                    # taller than 2 W: Pillow 13 resizes vertically first
    (2, 4, False), (4, 2, False), (641, 416, False), (640, 417, False),
])
def test_fits(w, h, ok):
    assert fits(w, h) is ok


def test_edge_weights_are_pillows_three_sevenths_and_one_seventh():
    assert (EDGE_NEAR, EDGE_FAR) == (1797559, 599186)
    assert 2 * EDGE_NEAR + EDGE_FAR == 1 << PRECISION_BITS


def test_hand_computed_4x4():
    # row 0 = 0, 10, 20, 30: first = (0*3 + 10*3 + 20*1) / 7 = 7.14 -> 7, last = (10 + 60 + 90) / 7 -> 23
    a = (np.arange(16, dtype=np.uint8).reshape(1, 4, 4) * 10)
    assert Halver((1, 4, 4))(a).tolist() == [[[36, 52], [98, 114]]]


def test_matches_pillow_on_random_sizes_and_contents():
    rng = np.random.default_rng(20261130)
    sizes = [(4, 4), (6, 4), (4, 8), (8, 6), (42, 84), (640, 416), (320, 640)]
    sizes += [(int(2 * rng.integers(2, 80)), 0) for _ in range(60)]
    for w, h in sizes:
        if h == 0:
            h = int(2 * rng.integers(2, w + 1))          # up to 2 W, the fitting range
        assert fits(w, h)
        kind = rng.integers(0, 3)
        if kind == 0:
            img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        elif kind == 1:       # extremes only: the largest sums and the rounding boundaries
            img = rng.choice(np.array([0, 1, 254, 255], np.uint8), (h, w, 3))
        else:                 # smooth gradients, as in photos
            y, x = np.mgrid[0:h, 0:w]
            img = np.stack([(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), (x + y) % 256], -1).astype(np.uint8)
        assert np.array_equal(halve(img), pillow_half(img)), (w, h, kind)


def test_single_channel_and_constant_image():
    rng = np.random.default_rng(1)
    gray = rng.integers(0, 256, (30, 50), dtype=np.uint8)
    ref = np.asarray(Image.fromarray(gray).resize((25, 15), Image.BILINEAR))
    assert np.array_equal(Halver((1, 30, 50))(gray[None].copy())[0], ref)
    flat = np.full((3, 8, 8), 255, np.uint8)
    assert (Halver((3, 8, 8))(flat) == 255).all()


def test_result_is_reused_buffer_and_inputs_are_checked():
    halver = Halver((3, 4, 4))
    a = halver(np.zeros((3, 4, 4), np.uint8))
    b = halver(np.full((3, 4, 4), 9, np.uint8))
    assert a is b and (a == 9).all()
    with pytest.raises(ValueError, match="shape"):
        halver(np.zeros((3, 4, 6), np.uint8))
    with pytest.raises(ValueError, match="C-contiguous uint8"):
        halver(np.zeros((3, 4, 4), np.uint16))
    with pytest.raises(ValueError, match="no exact halving"):
        Halver((3, 10, 4))
