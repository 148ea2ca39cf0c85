"""The detector track's sections of ``params.yaml``, validated once.

- ``detector``: ``models`` (model card names under ``models/``), ``floor`` (raw
  boxes below it are never stored), ``nms_iou`` (same-class NMS in scoring),
  ``providers`` (onnxruntime execution providers, in order).
- ``thresholds``: ``default`` plus per-class overrides by class *name*; every
  value must be in ``[detector.floor, 1]`` and every name a known class.
- ``match``: ``iou`` (match when IoU >= it), ``min_support`` (classes with fewer
  labels are unqualified), ``critical`` (action-target class names),
  ``bands`` (ascending object-size band edges, px at model input).
- ``reinference``: the tolerance of the re-inference check (:mod:`candor.detection.scoring.reinference`):
  ``box_px`` per coordinate in original px, ``score``; no defaults, ``params.yaml`` is the
  one place they are declared.

The detect stage reads only ``detector.floor`` and ``detector.providers``; the
score-detection stage reads the rest, so a threshold or NMS change never reruns inference.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from candor.common.errors import InputError, Problem, fail
from candor.detection.match_defaults import BAND_EDGES, MATCH_IOU, MIN_SUPPORT
from candor.common.params import load_yaml


class DetectorParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    models: list[str] = Field(default_factory=list)
    floor: float = Field(default=0.05, ge=0.0, le=1.0)
    nms_iou: float = Field(default=0.5, gt=0.0, le=1.0)
    providers: list[str] = Field(default_factory=lambda: ["CPUExecutionProvider"], min_length=1)


class MatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    iou: float = Field(default=MATCH_IOU, gt=0.0, le=1.0)
    min_support: int = Field(default=MIN_SUPPORT, ge=0)
    critical: list[str] = Field(default_factory=list)
    bands: list[float] = Field(default_factory=lambda: list(BAND_EDGES))

    @field_validator("bands")
    @classmethod
    def ascending(cls, v: list[float]) -> list[float]:
        if any(b <= a for a, b in zip(v, v[1:])) or any(x <= 0 for x in v):
            raise ValueError("band edges must be positive and strictly ascending")
        return v


class ReinferenceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    box_px: float = Field(gt=0.0, allow_inf_nan=False)
    score: float = Field(gt=0.0, lt=1.0, allow_inf_nan=False)


def threshold_vector(thresholds: dict[str, float], *, classes: tuple[str, ...] | list[str], floor: float,
                     where: str = "params.yaml:thresholds") -> np.ndarray:
    """Per-class thresholds ``(C,)`` in ``classes`` order from ``{default, <name>: value}``.

    Unknown names, a missing default, values outside ``[floor, 1]`` or not numbers
    are one InputError listing the valid names and the floor.
    """
    problems = []
    valid = ", ".join(classes)
    if "default" not in thresholds:
        problems.append(Problem(f"{where}.default", "missing", expected="a number in [floor, 1]"))
    for name, value in thresholds.items():
        if name != "default" and name not in classes:
            problems.append(Problem(f"{where}.{name}", "unknown class name", expected=f"default or one of: {valid}",
                                    got=repr(name)))
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append(Problem(f"{where}.{name}", "not a number", got=repr(value)))
        elif value < floor or value > 1:
            problems.append(Problem(f"{where}.{name}", "threshold outside [detector.floor, 1]",
                                    expected=f">= detector.floor = {floor} and <= 1", got=repr(value)))
    if problems:
        raise InputError(problems, hint="raw boxes below detector.floor are never stored; lower the floor and "
                                        "rerun detect to use a lower threshold")
    default = float(thresholds["default"])
    return np.array([float(thresholds.get(c, default)) for c in classes], dtype=np.float64)


def check_critical(critical: list[str], *, classes: tuple[str, ...] | list[str],
                   where: str = "params.yaml:match.critical") -> None:
    """Every critical class must be a known class name."""
    bad = [c for c in critical if c not in classes]
    if bad:
        raise InputError([Problem(where, "unknown class name", expected="one of: " + ", ".join(classes), got=repr(b))
                          for b in bad])


def load_thresholds(params: str | Path) -> dict[str, float]:
    """The raw ``thresholds`` mapping of a params file (validated later by :func:`threshold_vector`)."""
    doc = load_yaml(params) or {}
    thr = doc.get("thresholds") if isinstance(doc, dict) else None
    if not isinstance(thr, dict):
        raise fail(f"{params}:thresholds", "missing or not a mapping", expected="{default: 0.35, <class>: ...}")
    return thr
