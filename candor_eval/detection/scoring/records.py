"""The scoring room's record types, at the bottom of the room: they import nothing of it.

Every stage of scoring passes these values down the chain; the code that builds each lives in
its own module (named below), so a module that reads a record never depends on the readers,
the matcher or the tallies that made it.

Shapes legend (``F`` frames of the scene, ``L`` labels, ``D`` detections, ``C`` classes,
``K`` = ``len(FP_KINDS)`` = 5 FP kinds; a box is ``(4,)`` float64 ``x1, y1, x2, y2`` in original
pixels; an index is int64 unless said):

======================  ===========================================================================
record                  arrays
======================  ===========================================================================
:class:`Scene`          per frame ``(F,)``: ``frames``, ``split``, ``session``, ``zoom`` (str),
                        ``scale`` (float64); per label ``(L,)``: ``label_frame`` (into the
                        frames), ``label_index`` (within its frame), ``label_class`` (into
                        ``classes``), ``label_crowd`` (bool), ``label_boxes`` ``(L, 4)``.
                        Built by :mod:`~candor_eval.detection.scoring.scene`.
:class:`Scored`         per detection after NMS ``(D,)``: ``frame``, ``cls``, ``score`` (float64),
                        ``label`` (matched label or -1), ``ignored`` (bool), ``boxes`` ``(D, 4)``;
                        per label ``(L,)``: ``label_score`` (float64, ``-inf``: unmatched);
                        ``ap``: an :class:`APMatches` of the same boxes, or None.
                        Built by :mod:`~candor_eval.detection.scoring.nms_match`.
:class:`OperatingPoint` per detection ``(D,)`` bool: ``kept``, ``tp``, ``fp``; per label ``(L,)``
                        bool: ``found``, ``fn``. Built by
                        :func:`~candor_eval.detection.scoring.metrics.operating_point`.
:class:`Anatomy`        ``fp_kind`` ``(D,)`` int8 (-1: not a kept FP), ``fn_aimed`` ``(L,)`` bool.
                        Built by :mod:`~candor_eval.detection.scoring.anatomy`.
:class:`Outcomes`       per frame ``(F,)`` int64: ``tp``, ``fp``, ``fn``, ``fn_aimed``,
                        ``fp_kinds`` ``(F, K)``; per label ``(L,)``: ``found`` (bool), ``tp_iou``,
                        ``tp_edge`` (float64, NaN: not found). Built by
                        :mod:`~candor_eval.detection.scoring.stream`.
:class:`APMatches`      per kept detection ``(D,)``: ``frame`` int32, ``cls`` int16, ``score``
                        float64, ``tp`` and ``ignored`` uint16 (bit ``i``: at IoU threshold ``i``):
                        18 bytes a box. Built by :mod:`~candor_eval.detection.scoring.coco_ap`
                        (or beside the operating point's match, :mod:`~candor_eval.detection.scoring.nms_match`).
:class:`FrameGroups`    ``split``, ``zoom`` per group ``(G,)`` (tuples of str), ``of_frame`` ``(F,)``
                        (-1: not counted). Built by :func:`~candor_eval.detection.scoring.tally.frame_groups`.
:class:`Counts`         four ints and the rates read off them (definitions:
                        :mod:`~candor_eval.detection.scoring.metrics`).
:class:`Curve`          per grid threshold ``(T,)``: ``grid`` float64, ``tp``, ``fp``, ``fn`` int64.
                        Built by :meth:`~candor_eval.detection.scoring.tally.Tally.curves`.
======================  ===========================================================================

What a model serves (thresholds, NMS, the matching IoU) is one value beside these,
:class:`candor_eval.detection.served.Served`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from candor_eval.common.rounding import ratio

STRICT_IOU = 0.75      # COCO's strict AP75 bar: a TP at or above it is "strict" (Outcomes.tp_strict)


@dataclass(frozen=True)
class Scene:
    """Everything scoring needs about frames and labels (truth), aligned arrays.

    ``classes``: names, index order (the data set's classes the model is scored on,
    :mod:`candor_eval.detection.scoring.scope`).
    Per frame ``(F,)``: ``frames`` ids, ``split``, ``session``, ``zoom`` (str arrays),
    ``scale`` (letterbox scale of the frame at the model's input).
    Per label ``(L,)``: ``label_frame``, ``label_index`` (within its frame),
    ``label_class``, ``label_boxes`` ``(L, 4)`` xyxy original px, ``label_crowd``.
    """

    classes: tuple[str, ...]
    frames: np.ndarray
    split: np.ndarray
    session: np.ndarray
    zoom: np.ndarray
    scale: np.ndarray
    label_frame: np.ndarray
    label_index: np.ndarray
    label_class: np.ndarray
    label_boxes: np.ndarray
    label_crowd: np.ndarray


@dataclass(frozen=True)
class Scored:
    """The matched arrays of one model on one scene (before any threshold).

    Per detection after NMS ``(D,)``, ordered by frame, class, score descending
    (ties in input order): ``frame``, ``cls``, ``boxes``, ``score``,
    ``label`` (matched label index or -1), ``ignored`` (inside a crowd region).
    Per label: ``label_score`` = score of the detection that matched it
    (``-inf`` when none): the label is found at threshold ``t`` iff
    ``label_score >= t``. ``ap``: the COCO AP matches of the same boxes (:class:`APMatches`,
    frames as ``frame``), when they were matched for it in the same pass, else None.
    """

    scene: Scene
    frame: np.ndarray
    cls: np.ndarray
    boxes: np.ndarray
    score: np.ndarray
    label: np.ndarray
    ignored: np.ndarray
    label_score: np.ndarray
    match_iou: float
    ap: APMatches | None = None


@dataclass(frozen=True)
class OperatingPoint:
    """The outcome of every detection and label at per-class thresholds.

    ``kept`` ``(D,)``: score >= threshold of its class; ``tp``/``fp`` ``(D,)``
    among kept; ``found`` ``(L,)`` label matched by a kept detection;
    ``fn`` ``(L,)`` non-crowd label not found.
    """

    kept: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    found: np.ndarray
    fn: np.ndarray


@dataclass(frozen=True)
class Anatomy:
    """``fp_kind`` ``(D,)`` int8: the index into
    :data:`~candor_eval.detection.scoring.anatomy.FP_KINDS` of each kept FP, ``-1`` for every other
    detection; ``fn_aimed`` ``(L,)`` bool: FN labels some localisation or class-confusion FP was
    aimed at."""

    fp_kind: np.ndarray
    fn_aimed: np.ndarray


@dataclass(frozen=True)
class Outcomes:
    """Per frame of ``scene``: ``tp``, ``fp``, ``fn`` at the operating point, ``fp_kinds`` ``(F, 5)``
    the FPs by kind of :data:`~candor_eval.detection.scoring.anatomy.FP_KINDS`, ``fn_aimed`` the aimed
    FNs; per label: ``found`` (matched by a kept detection), ``tp_iou`` and ``tp_edge`` (the IoU and
    edge error of the detection that found it, :mod:`candor_eval.detection.scoring.box_quality`; ``NaN``
    when not found). The rows of the outcome tables are read off these."""

    scene: Scene
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    found: np.ndarray
    fp_kinds: np.ndarray
    fn_aimed: np.ndarray
    tp_iou: np.ndarray
    tp_edge: np.ndarray

    @classmethod
    def empty(cls, scene: Scene, *, n_kinds: int) -> Outcomes:
        """Zeros for every frame and label of ``scene`` (NaN box errors), ``n_kinds`` FP kinds."""
        n_f, n_l = len(scene.frames), len(scene.label_frame)
        return cls(scene=scene, tp=np.zeros(n_f, np.int64), fp=np.zeros(n_f, np.int64), fn=np.zeros(n_f, np.int64),
                   found=np.zeros(n_l, bool), fp_kinds=np.zeros((n_f, n_kinds), np.int64),
                   fn_aimed=np.zeros(n_f, np.int64), tp_iou=np.full(n_l, np.nan), tp_edge=np.full(n_l, np.nan))

    def tp_strict(self) -> np.ndarray:
        """Per frame: true positives whose IoU is at least :data:`STRICT_IOU` (COCO's strict AP75 bar)."""
        strict = self.found & (self.tp_iou >= STRICT_IOU)
        return np.bincount(self.scene.label_frame[strict], minlength=len(self.scene.frames))


@dataclass(frozen=True)
class APMatches:
    """Steps 1-2 of COCO AP's definition (:mod:`candor_eval.detection.scoring.coco_ap`) for some frames
    (whole frames: matching never crosses one): per kept detection ``(D,)`` its ``frame`` (int32),
    class ``cls`` (int16), ``score`` (float64), and ``tp``, ``ignored`` (uint16): bit ``i`` set when
    it is a match, or ignored, at IoU threshold ``i``. 18 bytes per detection, no boxes. Each
    image's detections of a class come in their visit order (score descending, ties in input
    order), which the stable sort of :func:`~candor_eval.detection.scoring.coco_ap.accumulate` keeps
    for ties within an image."""

    frame: np.ndarray
    cls: np.ndarray
    score: np.ndarray
    tp: np.ndarray
    ignored: np.ndarray

    @staticmethod
    def concat(parts: list[APMatches]) -> APMatches:
        """The matches of several disjoint sets of frames as one, in the order given. ``parts`` is
        emptied field by field as it is read, so the peak is the whole plus one field, not twice it."""
        fields = {"frame": np.int32, "cls": np.int16, "score": np.float64, "tp": np.uint16, "ignored": np.uint16}
        columns = {f: [getattr(p, f) for p in parts] for f in fields}
        parts.clear()
        out = {}
        for f, dtype in fields.items():
            out[f] = np.concatenate(columns[f]) if columns[f] else np.zeros(0, dtype)
            columns[f].clear()
        return APMatches(**out)

    def of_frames(self, mask: np.ndarray) -> APMatches:
        """The matches of the frames where ``mask`` ``(F,)`` is true, in the same order."""
        keep = np.asarray(mask, bool)[self.frame]
        return APMatches(self.frame[keep], self.cls[keep], self.score[keep], self.tp[keep], self.ignored[keep])


class APMatchesByClass:
    """:class:`APMatches` kept class by class as the chunks come (:meth:`add`), for the AP's curves,
    which need every box of a class in score order: per box its ``frame`` int32, ``score`` float64,
    ``tp`` and ``ignored`` uint16, 16 bytes (the class is the list's). Each class's boxes stay in the
    order they came (each chunk's in its order), so a class's boxes of an image keep their visit
    order. :meth:`take` hands a class's boxes over once, as one :class:`APMatches`, and lets go of them.

    >>> ap = APMatchesByClass(2)
    >>> ap.add(APMatches(np.array([0, 0, 1], np.int32), np.array([1, 0, 1], np.int16), np.array([0.9, 0.8, 0.7]),
    ...                  np.ones(3, np.uint16), np.zeros(3, np.uint16)))
    >>> ap.take(1).frame.tolist(), ap.take(0).score.tolist(), ap.take(0).frame.tolist()
    ([0, 1], [0.8], [])
    """

    def __init__(self, n_classes: int) -> None:
        self.parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in range(n_classes)]

    def add(self, m: APMatches) -> None:
        """Keep the matches of some frames (after those of the frames added before)."""
        order = np.argsort(m.cls, kind="stable")              # each class's boxes in their order
        bounds = np.searchsorted(m.cls[order], np.arange(len(self.parts) + 1))
        for k in np.flatnonzero(np.diff(bounds)).tolist():
            idx = order[bounds[k]:bounds[k + 1]]
            self.parts[k].append((m.frame[idx], m.score[idx], m.tp[idx], m.ignored[idx]))

    def take(self, k: int) -> APMatches:
        """Class ``k``'s boxes in the order they came (class column ``k``), then none are kept."""
        parts, self.parts[k] = self.parts[k], []
        cols = [np.concatenate([p[j] for p in parts]) if parts else np.zeros(0, dt)
                for j, dt in enumerate((np.int32, np.float64, np.uint16, np.uint16))]
        return APMatches(cols[0], np.full(len(cols[0]), k, np.int16), cols[1], cols[2], cols[3])

    @classmethod
    def of(cls, m: APMatches, n_classes: int) -> APMatchesByClass:
        """The matches ``m`` of one piece, by class."""
        out = cls(n_classes)
        out.add(m)
        return out


@dataclass(frozen=True)
class FrameGroups:
    """Frames grouped by (split, zoom), the finest grouping any block sums over: ``split[g]`` and
    ``zoom[g]`` per group, ``of_frame`` ``(F,)`` each scene frame's group (``-1``: not counted)."""

    split: tuple[str, ...]
    zoom: tuple[str, ...]
    of_frame: np.ndarray


@dataclass(frozen=True)
class Counts:
    """TP/FP/FN on a set of frames, with the derived rates."""

    tp: int
    fp: int
    fn: int
    frames: int

    @property
    def precision(self) -> float | None:
        return ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float | None:
        return ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def fp_per_frame(self) -> float | None:
        return ratio(self.fp, self.frames)

    def as_dict(self) -> dict:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "tp": self.tp, "fp": self.fp, "fn": self.fn,
                "fp_per_frame": self.fp_per_frame, "frames": self.frames}


@dataclass(frozen=True)
class Curve:
    """Counts of one class (or all classes) at each threshold of the curve ``grid``."""

    grid: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray

    def rows(self) -> list[tuple[float, float | None, float | None, float | None]]:
        """(threshold, precision, recall, f1) per point, rates None when undefined."""
        # the rates of Counts(tp, fp, fn, 0), without making one per point
        return [(t, ratio(a, a + b), ratio(a, a + c), ratio(2 * a, 2 * a + b + c))
                for t, a, b, c in zip(self.grid.tolist(), self.tp.tolist(), self.fp.tolist(), self.fn.tolist())]
