"""Letterbox: fit a frame into the model's static input, keeping its aspect ratio.

Definition (the served path's, Ultralytics' ``LetterBox(auto=False)``), for the card's
``preprocess`` (:class:`~candor_eval.detection.model_card.Preprocess`):

- ``scale = min(in_w / w, in_h / h)`` (one factor for both axes, up or down);
- the frame, converted to RGB, is resized to ``new_w = round(w * scale)``,
  ``new_h = round(h * scale)`` by ``preprocess.resize``: ``pillow-bilinear`` is Pillow
  ``Image.BILINEAR`` (antialiased when shrinking), ``opencv-linear`` is OpenCV
  ``cv2.resize(..., interpolation=cv2.INTER_LINEAR)`` as Ultralytics' ``LetterBox`` calls it
  (OpenCV is imported only for such a card). No resize when the size is already right;
- it is pasted at ``(pad_x, pad_y) = ((in_w - new_w) // 2, (in_h - new_h) // 2)``
  on a canvas filled with grey 114 (Ultralytics' ``round(d / 2 - 0.1)``, the same integers);
- the tensor is ``float32 [1, 3, in_h, in_w]`` in ``preprocess.colour`` order, values
  ``pixel / preprocess.scale`` (defaults: RGB, ``/ 255``; Ultralytics' predictor flips its
  BGR letterbox to RGB and divides by 255: the same tensor).

A point maps original -> input as ``x * scale + pad_x`` and back as
``(x - pad_x) / scale`` (:func:`to_original`), then clipped to the frame.
The two maps are exact inverses (up to float rounding). Because the resized
size is rounded to whole pixels, the pixels themselves may be stretched by at
most half an input pixel at the far edge, so an object drawn in the frame is
found in the tensor within 0.5 input pixels of ``to_input`` of its box, i.e.
within ``0.5 / scale`` original pixels after mapping back (tested).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from candor_eval.detection.inference.halve import Halver, fits
from candor_eval.detection.model_card import Preprocess

PAD_VALUE = 114
DEFAULT_PREPROCESS = Preprocess()


@dataclass(frozen=True)
class Letterbox:
    """How one frame of ``orig_w x orig_h`` sits in an ``input_w x input_h`` tensor."""

    orig_w: int
    orig_h: int
    input_w: int
    input_h: int
    scale: float
    new_w: int
    new_h: int
    pad_x: int
    pad_y: int


def plan(orig_w: int, orig_h: int, *, input_w: int, input_h: int) -> Letterbox:
    """The letterbox geometry of a frame (see the module docstring)."""
    if orig_w <= 0 or orig_h <= 0:
        raise ValueError(f"frame size must be positive, got {orig_w}x{orig_h}")
    scale = min(input_w / orig_w, input_h / orig_h)
    new_w = min(input_w, max(1, int(round(orig_w * scale))))
    new_h = min(input_h, max(1, int(round(orig_h * scale))))
    return Letterbox(orig_w, orig_h, input_w, input_h, scale, new_w, new_h,
                     (input_w - new_w) // 2, (input_h - new_h) // 2)


def letterbox_image(image: Image.Image, lb: Letterbox, *, preprocess: Preprocess = DEFAULT_PREPROCESS) -> np.ndarray:
    """The model input tensor ``float32 [1, 3, input_h, input_w]`` for ``image`` (the definition:
    resize, paste on grey, channel order, scaling; :class:`Letterboxer` is the fast equivalent)."""
    tensor = np.empty((1, 3, lb.input_h, lb.input_w), dtype=np.float32)
    _fill(tensor, _resized_planar(image.convert("RGB"), lb, resize=preprocess.resize), lb, preprocess)
    return tensor


def _resized_planar(rgb: Image.Image, lb: Letterbox, *, resize: str) -> np.ndarray:
    """The RGB frame resized to ``new_w x new_h`` by ``resize``, as a ``(3, new_h, new_w)`` view."""
    if resize == "opencv-linear":
        import cv2  # only a card that asks for OpenCV pays for importing it

        arr = np.asarray(rgb, dtype=np.uint8)
        if rgb.size != (lb.new_w, lb.new_h):   # per channel: the same pixels as Ultralytics' BGR resize
            return cv2.resize(arr, (lb.new_w, lb.new_h), interpolation=cv2.INTER_LINEAR).transpose(2, 0, 1)
        return arr.transpose(2, 0, 1)
    if rgb.size != (lb.new_w, lb.new_h):
        rgb = rgb.resize((lb.new_w, lb.new_h), Image.Resampling.BILINEAR)
    return np.asarray(rgb, dtype=np.uint8).transpose(2, 0, 1)


def _fill(tensor: np.ndarray, planar: np.ndarray, lb: Letterbox, preprocess: Preprocess) -> None:
    """Write the resized planar RGB pixels ``(3, new_h, new_w)`` and the grey border into ``tensor``
    (in ``preprocess.colour`` order, divided by ``preprocess.scale``)."""
    scale = np.float32(preprocess.scale)
    pad = np.float32(PAD_VALUE) / scale
    if preprocess.colour == "bgr":
        planar = planar[::-1]
    t = tensor[0]
    y0, y1, x0, x1 = lb.pad_y, lb.pad_y + lb.new_h, lb.pad_x, lb.pad_x + lb.new_w
    t[:, :y0] = pad
    t[:, y1:] = pad
    t[:, y0:y1, :x0] = pad
    t[:, y0:y1, x1:] = pad
    np.divide(planar, scale, out=t[:, y0:y1, x0:x1], dtype=np.float32, casting="unsafe")


class Letterboxer:
    """:func:`letterbox_image` into one reused tensor, bit-identical, faster for exact halvings.

    With ``pillow-bilinear``, a frame whose letterbox halves it exactly (``new_w = w / 2``,
    ``new_h = h / 2``, see :func:`candor_eval.detection.inference.halve.fits`) is converted to planar RGB and halved by
    :class:`candor_eval.detection.inference.halve.Halver`; any other geometry or resize goes through
    :func:`letterbox_image`'s own resize. The returned tensor is owned by the letterboxer and
    overwritten by the next call (use it, e.g. run the model, before letterboxing the
    next frame); one letterboxer per thread. It keeps the buffers of the last frame size.
    """

    def __init__(self, *, input_w: int, input_h: int, preprocess: Preprocess = DEFAULT_PREPROCESS) -> None:
        self.input_w, self.input_h, self.preprocess = input_w, input_h, preprocess
        self._tensor = np.empty((1, 3, input_h, input_w), dtype=np.float32)
        self._planar = np.empty((3, 0, 0), np.uint8)
        self._halver: Halver | None = None

    def __call__(self, image: Image.Image, lb: Letterbox) -> np.ndarray:
        if (lb.input_w, lb.input_h) != (self.input_w, self.input_h):
            raise ValueError(f"letterbox for {lb.input_w}x{lb.input_h}, letterboxer for {self.input_w}x{self.input_h}")
        rgb = image if image.mode == "RGB" else image.convert("RGB")
        w, h = rgb.size
        pre = self.preprocess
        if pre.resize == "pillow-bilinear" and (lb.new_w * 2, lb.new_h * 2) == (w, h) and fits(w, h):
            if self._halver is None or self._halver.shape != (3, h, w):
                self._planar, self._halver = np.empty((3, h, w), np.uint8), Halver((3, h, w))
            for band, name in zip(self._planar, "RGB"):   # Pillow packs one band at a time: no HWC transpose
                band[...] = np.frombuffer(rgb.tobytes("raw", name), np.uint8).reshape(h, w)
            _fill(self._tensor, self._halver(self._planar), lb, pre)
        else:
            _fill(self._tensor, _resized_planar(rgb, lb, resize=pre.resize), lb, pre)
        return self._tensor


def to_input(boxes: np.ndarray, lb: Letterbox) -> np.ndarray:
    """Boxes ``(N, 4)`` xyxy in original pixels -> model-input pixels."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    pad = np.array([lb.pad_x, lb.pad_y, lb.pad_x, lb.pad_y], dtype=np.float64)
    return b * lb.scale + pad


def to_original(boxes: np.ndarray, lb: Letterbox) -> np.ndarray:
    """Boxes ``(N, 4)`` xyxy in model-input pixels -> original pixels, clipped to the frame."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    pad = np.array([lb.pad_x, lb.pad_y, lb.pad_x, lb.pad_y], dtype=np.float64)
    out = (b - pad) / lb.scale
    out[:, [0, 2]] = np.clip(out[:, [0, 2]], 0, lb.orig_w)
    out[:, [1, 3]] = np.clip(out[:, [1, 3]], 0, lb.orig_h)
    return out

