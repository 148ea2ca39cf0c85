"""The column tables every label and detection reader returns, so the scorer never knows the format.

- :class:`GroundTruth`: frames (id, width, height) and labels (frame index, index within
  the frame, class index, xyxy box in original pixels, crowd flag).
- :class:`DetectionTable`: detections (frame index, class index, xyxy box in original
  pixels, score), in the order read.

A label box may overhang its image by ``EDGE_TOLERANCE`` of the image's size (rounding);
more is an input error (:func:`inside_image`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# A label box may overhang the image by this much (normalised) for rounding; more is an error.
EDGE_TOLERANCE = 1e-3


@dataclass(frozen=True)
class GroundTruth:
    """Frames and labels; arrays are aligned per label (``L``) or per frame (``F``)."""

    classes: tuple[str, ...]
    frames: tuple[str, ...]
    sizes: np.ndarray         # (F, 2) int64: width, height
    label_frame: np.ndarray   # (L,) int64 index into frames
    label_index: np.ndarray   # (L,) int64 index of the label within its frame
    label_class: np.ndarray   # (L,) int64 index into classes
    label_boxes: np.ndarray   # (L, 4) float64 xyxy, original pixels
    label_crowd: np.ndarray   # (L,) bool


@dataclass(frozen=True)
class DetectionTable:
    """Detections aligned per row (``D``); class indices refer to ``classes``."""

    classes: tuple[str, ...]
    frame: np.ndarray    # (D,) int64 index into the ground truth's frames
    cls: np.ndarray      # (D,) int64
    boxes: np.ndarray    # (D, 4) float64 xyxy, original pixels
    score: np.ndarray    # (D,) float64


def inside_image(xywh: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: each ``[x, y, w, h]`` box lies inside its image ``sizes`` ``(N, 2)`` (width, height),
    overhanging by at most ``EDGE_TOLERANCE`` of the image's size (rounding).

    >>> inside_image(np.array([[0.0, 0.0, 100.0, 50.0], [99.95, 0, 0.1, 1], [90, 0, 20, 1]]),
    ...              np.array([[100, 50]] * 3)).tolist()
    [True, True, False]
    """
    tol = EDGE_TOLERANCE * sizes
    lo = xywh[:, :2] >= -tol
    hi = xywh[:, :2] + xywh[:, 2:] <= sizes + tol
    return (lo & hi).all(axis=1)


def xywh_to_xyxy(box: np.ndarray) -> np.ndarray:
    """``(N, 4)`` ``[x, y, w, h]`` as ``[x1, y1, x2, y2]`` (float64)."""
    return np.concatenate([box[:, :2], box[:, :2] + box[:, 2:]], axis=1)


def lookup(ids: np.ndarray, mapping: dict[int, int]) -> np.ndarray | None:
    """``ids`` (int64) mapped through ``mapping``; None when any id is not a key.

    >>> lookup(np.array([7, 3, 7]), {3: 0, 7: 1}).tolist()
    [1, 0, 1]
    >>> lookup(np.array([4]), {3: 0}) is None
    True
    """
    keys = np.array(sorted(mapping), dtype=np.int64)
    vals = np.array([mapping[k] for k in keys.tolist()], dtype=np.int64)
    if len(keys) == 0:
        return None if len(ids) else ids.astype(np.int64)
    pos = np.clip(np.searchsorted(keys, ids), 0, len(keys) - 1)
    if not np.array_equal(keys[pos], ids):
        return None
    return vals[pos]
