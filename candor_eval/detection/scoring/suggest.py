"""Threshold suggestion on dev frames only (held-out discipline: docs/detector.md, "suggest-thresholds").

Only the dev frames are read: the test frames' lines of the detections file are skipped
by frame id without being parsed, and their YOLO label files are never opened (a
``coco.json`` is one file: it is read whole and its other frames dropped before scoring).
Per class, the suggestion is the threshold of best F1 on the 0.01 grid from
``detector.floor`` (:func:`candor_eval.detection.scoring.metrics.best_thresholds`: ties go to the
highest); a class with fewer than ``match.min_support`` labels, or no true positive at any
threshold, keeps the model's served default. The current values are the model's served
thresholds (:meth:`candor_eval.detection.config.ThresholdParams.served`), and the suggested change is
a ``dvc exp run`` line that sets ``thresholds_by_model.<model>.<class>`` only
(:func:`exp_run_line`): the other models keep theirs.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from candor_eval.common.errors import fail
from candor_eval.detection.config import DetectorParams, MatchParams, ScoreParams, ThresholdParams
from candor_eval.detection.detections_file import iter_chunks, read_index
from candor_eval.detection.frames import load_frames
from candor_eval.detection.model_card import ModelCard
from candor_eval.detection.scoring.metrics import best_thresholds, threshold_grid
from candor_eval.detection.scoring.scene import build_scene
from candor_eval.detection.scoring.stream import score_stream
from candor_eval.detection.scoring.tally import Tally, frame_groups


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
                       match: MatchParams, threshold_params: ThresholdParams) -> Suggestion:
    """Best-F1 thresholds of ``model`` (its card ``card``) on the dev frames of ``data`` (see the
    module docstring)."""
    info = load_frames(Path(data))
    dev = tuple(f for f, sp in zip(info.frames, info.split) if sp == "dev")
    if not dev:
        raise fail(str(Path(data) / "frames.csv"), "no dev frames to tune on", expected="frames with split=dev")
    path = Path(detections) / f"{model}.jsonl"
    raw = read_index(path, keep_frames=set(dev))
    if raw.header.get("floor") != detector.floor:
        raise fail(model, "detections were made at another detector.floor", hint="dvc repro detect")
    inputs = build_scene(data=Path(data), raw=raw, input_hw=tuple(raw.header["input_size"]), frames=dev,
                         class_map=card.class_map, card=model)
    scene = inputs.scene
    assert set(scene.split.tolist()) == {"dev"}  # invariant: only dev frames were read
    params = ScoreParams(detector=detector, match=match, threshold_params=threshold_params)
    served = params.served(model, classes=scene.classes, known=inputs.scope.data)
    current = served.thresholds
    default = float(threshold_params.served(model)["default"])
    tally = Tally.empty(frame_groups(scene), classes=scene.classes, band_edges=[],
                        grid=threshold_grid(detector.floor), matrix=False)
    tally, _ = score_stream(inputs, iter_chunks(path, keep_frames=set(dev)), served, tally=tally, critical=[],
                            where=str(path))
    cv = tally.curves()
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
