"""What a model serves, as one value: its per-class thresholds and its NMS (:class:`Served`).

The keep rule lives here, once: a box is kept when ``score >= threshold`` of its class
(:meth:`Served.keeps`). The served path (:mod:`candor_eval.detection.latency`), the scorer's
operating point (:func:`candor_eval.detection.scoring.metrics.operating_point`) and its
thresholds-first pass (:mod:`candor_eval.detection.scoring.stream`) all call it.

This module loads numpy only (no pydantic, no YAML): the standalone COCO mode builds a
:class:`Served` without reading any params (:mod:`candor_eval.detection.scoring.coco_pair`). The
params that make one are :mod:`candor_eval.detection.config`'s.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from candor_eval.detection.match_defaults import MATCH_IOU


@dataclass(frozen=True)
class ServedNms:
    """What a model serves after its thresholds: greedy NMS at ``iou`` (suppress when IoU > iou;
    ``None``: no NMS, as the standalone COCO mode scores results), within each class or, with
    ``agnostic``, across the classes of a frame; then at most ``max_det`` boxes per frame, the
    highest-scored (``None``: no cap)."""

    iou: float | None
    max_det: int | None = None
    agnostic: bool = False

    @property
    def per_class(self) -> bool:
        """True when a box's fate depends on boxes of its own class only: same-class NMS and no
        cap. Then thresholding commutes with NMS and matching (:mod:`candor_eval.detection.scoring.metrics`),
        and every threshold can be read off one pass over the boxes above the floor.

        >>> ServedNms(0.5).per_class, ServedNms(0.5, max_det=300).per_class, ServedNms(0.5, agnostic=True).per_class
        (True, False, False)
        """
        return not self.agnostic and self.max_det is None


@dataclass(frozen=True)
class Served:
    """One model as served and scored: ``thresholds`` ``(C,)`` float64, the served threshold of each
    class index; ``nms`` its :class:`ServedNms`; ``match_iou`` the IoU at or above which the scorer
    matches a kept box to a label (``match.iou``; serving itself never reads it).

    >>> s = Served(np.array([0.3, 0.5]), ServedNms(0.5))
    >>> s.keeps(np.array([0.3, 0.3, 0.7]), np.array([0, 1, 1])).tolist()
    [True, False, True]
    """

    thresholds: np.ndarray
    nms: ServedNms
    match_iou: float = MATCH_IOU

    def __post_init__(self) -> None:
        object.__setattr__(self, "thresholds", np.asarray(self.thresholds, dtype=np.float64))

    @classmethod
    def at(cls, thresholds: np.ndarray | list[float], *, match_iou: float = MATCH_IOU) -> Served:
        """Thresholds ``(C,)`` alone: no NMS (the boxes are scored as given), matching at ``match_iou``."""
        return cls(np.asarray(thresholds, dtype=np.float64), ServedNms(None), match_iou)

    def keeps(self, score: np.ndarray, cls: np.ndarray) -> np.ndarray:
        """Bool, the shape of ``score``: the box (class index ``cls``) is kept, ``score >= thresholds[cls]``.
        The one keep rule of the project."""
        return np.asarray(score) >= self.thresholds[cls]
