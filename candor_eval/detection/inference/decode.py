"""Decoders: a detector's raw output tensor -> candidate boxes in model-input pixels.

Supported output layouts (``C`` = number of classes, ``N`` = number of anchors):

- ``ultralytics``   ``[1, 4+C, N]``: rows ``cx, cy, w, h`` then one score per class
  (YOLOv8/v9/v11 ONNX export);
- ``ultralytics-t`` ``[1, N, 4+C]``: the same, transposed;
- ``yolov5``        ``[1, N, 5+C]``: ``cx, cy, w, h, objectness`` then class
  probabilities; a class's score is ``objectness * class probability``.

Box coordinates are centre/size in model-input pixels. Each anchor yields at
most one candidate: its best class (highest score; ties go to the lower class
index), kept when that score is ``>= floor`` (Ultralytics' ``multi_label=False``).
No threshold per class and no NMS happen here: those belong to scoring.

The layout is taken from the model card's ``output_layout`` when given (its first
word, so ``ultralytics [1, 4+C, N]`` reads as ``ultralytics``), else
inferred from the shape and ``C``: ``[1, 4+C, N]`` is ``ultralytics`` (preferred
when ``N == 4+C`` too), ``[1, N, 4+C]`` is ``ultralytics-t``, ``[1, N, 5+C]`` is
``yolov5``. Any other shape is an input error naming the shape and the layouts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeGuard, get_args

import numpy as np

from candor_eval.common.errors import fail

Layout = Literal["ultralytics", "ultralytics-t", "yolov5"]
LAYOUTS: tuple[Layout, ...] = get_args(Layout)
LAYOUT_SHAPES = {"ultralytics": "[1, 4+C, N]", "ultralytics-t": "[1, N, 4+C]", "yolov5": "[1, N, 5+C]"}


def supported_text(num_classes: int) -> str:
    """The supported layouts, spelled out for ``C = num_classes``."""
    c = num_classes
    return (f"one of ultralytics [1, 4+C, N] = [1, {4 + c}, N], ultralytics-t [1, N, 4+C] = [1, N, {4 + c}], "
            f"yolov5 [1, N, 5+C] = [1, N, {5 + c}] with C = {c} classes")


def _is_layout(name: str) -> TypeGuard[Layout]:
    return name in LAYOUTS


def infer_layout(shape: tuple[int, ...] | list[int], *, num_classes: int, declared: str | None = None,
                 where: str = "model output") -> Layout:
    """The layout of an output of ``shape`` for ``num_classes`` classes (or an InputError).

    ``declared`` (the card's ``output_layout``) wins when given, but must fit the shape.
    Dynamic dimensions (None or a string) are accepted for ``N`` only.
    """
    shape = tuple(shape)
    c = num_classes

    def fits(layout: str) -> bool:
        if len(shape) != 3:
            return False
        if not (shape[0] == 1 or shape[0] is None or isinstance(shape[0], str)):
            return False
        if layout == "ultralytics":
            return shape[1] == 4 + c
        if layout == "ultralytics-t":
            return shape[2] == 4 + c
        return shape[2] == 5 + c

    if declared is not None:
        # "ultralytics" or a self-describing "ultralytics [1, 4+C, N]": the first word names the layout
        declared = declared.split()[0] if declared.strip() else declared
        if not _is_layout(declared):
            raise fail(f"{where}: output_layout", "unknown output layout",
                       expected=" or ".join(LAYOUTS), got=declared)
        if not fits(declared):
            raise fail(where, f"output shape does not fit the declared layout {declared} "
                              f"{LAYOUT_SHAPES[declared]}", expected=supported_text(c), got=list(shape))
        return declared
    for layout in LAYOUTS:
        if fits(layout):
            return layout
    raise fail(where, "unsupported output shape", expected=supported_text(c), got=list(shape),
               hint="export the model in the Ultralytics layout, or set output_layout in its card")


@dataclass(frozen=True)
class Candidates:
    """Decoded candidates of one frame, in model-input pixels.

    ``boxes`` ``(K, 4)`` float64 xyxy; ``scores`` ``(K,)`` float64; ``classes`` ``(K,)`` int64.
    Rows are in anchor order.
    """

    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray


def decode(output: np.ndarray, *, layout: Layout, num_classes: int, floor: float) -> Candidates:
    """Decode one frame's output tensor (batch of 1) into candidates with score >= ``floor``.

    >>> out = np.zeros((1, 6, 2), np.float32); out[0, :, 0] = [10, 10, 4, 2, 0.1, 0.9]
    >>> c = decode(out, layout="ultralytics", num_classes=2, floor=0.5)
    >>> c.boxes.tolist(), c.scores.tolist(), c.classes.tolist()
    ([[8.0, 9.0, 12.0, 11.0]], [0.8999999761581421], [1])
    """
    # fields x anchors, in the output's own dtype: the argmax and the floor filter need no float64
    # copy of the whole output; only what is kept is converted (exactly) to float64
    fields = np.asarray(output)[0] if layout == "ultralytics" else np.asarray(output)[0].T
    if layout == "yolov5":
        cls_scores = fields[5:5 + num_classes].astype(np.float64) * fields[4:5].astype(np.float64)
    else:
        cls_scores = fields[4:4 + num_classes]
    if cls_scores.shape[0] == 0:
        best = np.zeros(fields.shape[1], dtype=np.int64)
        score = np.zeros(fields.shape[1], dtype=np.float64)
        keep = np.flatnonzero(score >= floor)
        best, score = best[keep], score[keep]
    else:
        # the best score per anchor is the column maximum (a fast row-wise reduction); the argmax (the
        # class, ties to the lower index) is needed only for the anchors that pass the floor
        top = cls_scores.max(axis=0).astype(np.float64)
        keep = np.flatnonzero(top >= floor)
        best, score = np.argmax(cls_scores[:, keep], axis=0).astype(np.int64), top[keep]
    cx, cy, w, h = fields[:4, keep].astype(np.float64)
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1) if len(keep) else np.zeros((0, 4))
    return Candidates(boxes=boxes, scores=score, classes=best)
