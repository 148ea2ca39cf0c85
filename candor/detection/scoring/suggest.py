"""Threshold suggestion on dev frames only (held-out discipline: docs/detector.md, "suggest-thresholds").

Only the dev frames are read: the test frames' lines of the detections file are skipped
by frame id without being parsed, and their YOLO label files are never opened (a
``coco.json`` is one file: it is read whole and its other frames dropped before scoring).
Per class, the suggestion is the threshold of best F1 on the 0.01 grid from
``detector.floor`` (:func:`candor.detection.scoring.metrics.best_thresholds`: ties go to the
highest); a class with fewer than ``match.min_support`` labels, or no true positive at any
threshold, keeps the model's served default. The current values are the model's served
thresholds (:meth:`candor.detection.config.Thresholds.served`), and the suggested change is
a ``dvc exp run`` line that sets ``thresholds_by_model.<model>.<class>`` only
(:func:`exp_run_line`): the other models keep theirs.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from candor.common.errors import fail
from candor.detection.config import DetectorParams, MatchParams, Thresholds
from candor.detection.model_card import ModelCard
from candor.detection.frames import load_frames
from candor.detection.inference.detections_file import read_raw
from candor.detection.scoring.metrics import best_thresholds, curves, score_detections, threshold_grid
from candor.detection.scoring.scene import build_scene


@dataclass(frozen=True)
class Suggestion:
    """Per class (scene order): dev ``support`` (non-crowd labels), ``current`` (served) and ``best``
    threshold; ``default``: the model's served default."""

    model: str
    frames: int
    default: float
    classes: tuple[str, ...]
    support: dict[str, int]
    current: dict[str, float]
    best: dict[str, float]

    def changes(self) -> dict[str, float]:
        """The classes whose suggestion differs from the current threshold."""
        return {c: self.best[c] for c in self.classes if abs(self.best[c] - self.current[c]) > 1e-9}


def suggest_thresholds(model: str, *, card: ModelCard, data: Path, detections: Path, detector: DetectorParams,
                       match: MatchParams, thresholds: Thresholds) -> Suggestion:
    """Best-F1 thresholds of ``model`` (its card ``card``) on the dev frames of ``data`` (see the
    module docstring)."""
    info = load_frames(Path(data))
    dev = tuple(f for f, sp in zip(info.frames, info.split) if sp == "dev")
    if not dev:
        raise fail(str(Path(data) / "frames.csv"), "no dev frames to tune on", expected="frames with split=dev")
    raw = read_raw(Path(detections) / f"{model}.jsonl", keep_frames=set(dev))
    if raw.header.get("floor") != detector.floor:
        raise fail(model, "detections were made at another detector.floor", hint="dvc repro detect")
    inputs = build_scene(data=Path(data), raw=raw, input_hw=tuple(raw.header["input_size"]), frames=dev,
                         class_map=card.class_map, card=model)
    scene, dframe, dcls = inputs.scene, inputs.det_frame, inputs.det_class
    assert set(scene.split.tolist()) == {"dev"}  # invariant: only dev frames were read
    current = thresholds.vector(model, classes=scene.classes, known=inputs.scope.data, floor=detector.floor)
    default = float(thresholds.served(model)["default"])
    s = score_detections(scene, frame=dframe, cls=dcls, boxes=raw.boxes, score=raw.score,
                         nms_iou=detector.nms_iou, match_iou=match.iou)
    cv = curves(s, thresholds=threshold_grid(detector.floor), frame_mask=np.ones(len(dev), bool))
    support = {c: int(((scene.label_class == i) & ~scene.label_crowd).sum()) for i, c in enumerate(scene.classes)}
    best = best_thresholds(cv, support=support, min_support=match.min_support, default=default)
    return Suggestion(model=model, frames=len(dev), default=default, classes=scene.classes, support=support,
                      current={c: float(current[i]) for i, c in enumerate(scene.classes)}, best=best)


def exp_run_line(model: str, changes: dict[str, float]) -> str:
    """The ``dvc exp run`` command that applies ``changes`` (class -> threshold) to ``model`` only:
    ``thresholds_by_model.<model>.<class>``, with DVC's ``++`` (set the key, adding it when
    ``params.yaml`` does not have it yet).

    >>> exp_run_line("demo-v2", {"deer": 0.27, "mill": 0.4})
    'dvc exp run -S ++thresholds_by_model.demo-v2.deer=0.27 -S ++thresholds_by_model.demo-v2.mill=0.4'
    """
    return "dvc exp run " + " ".join(f"-S {shlex.quote(f'++thresholds_by_model.{model}.{c}={t:g}')}"
                                     for c, t in changes.items())
