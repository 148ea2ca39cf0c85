"""The detector track's sections of the params file (``params.yaml``, or the one given with ``--params``),
validated once.

- ``detector``: ``sets`` (detection set name -> the model card names under ``models/`` scored on
  it, reference first; :mod:`candor_eval.detection.sets`), ``floor`` (raw boxes below it are never stored),
  the served NMS of every model: ``nms_iou`` (suppress when IoU > it), ``max_det`` (boxes per frame
  after NMS, ``null``: no cap), ``nms_agnostic`` (across classes; default within each class), and
  ``nms_by_model.<model>``: the keys of those three that model serves differently
  (:meth:`DetectorParams.served_nms`; the demo models serve the shared values),
  ``providers`` (onnxruntime execution providers, in order), ``executor`` (where the detect stage
  runs the models: ``local``, in its own process, or ``ray``, in shards on the Ray cluster named by
  ``RAY_ADDRESS``, :mod:`candor_eval.detection.inference.ray_executor`; same output bytes).
- ``thresholds``: the shared served thresholds, ``default`` plus per-class overrides by
  class *name*; the default a sweep edits (``dvc exp run -S thresholds.deer=0.3``). Absent (a new
  project), every class is served at :data:`DEFAULT_THRESHOLD` = 0.25, the confidence threshold
  Ultralytics' predictor serves by default (its ``conf``); given, the section must name its
  ``default``.
- ``thresholds_by_model``: per model name, the keys of ``thresholds`` that model serves
  differently (``{demo-v2: {deer: 0.25}}``; default empty: every model serves the shared
  values). A model's served thresholds are the shared mapping with its own keys replacing
  the same keys (:meth:`ThresholdParams.served`): a model's ``default`` changes only the classes
  that neither mapping names. Every value must be in ``[detector.floor, 1]``, every name
  ``default`` or a class of the data set, every model name a model of ``detector.sets``.
- ``match``: ``iou`` (match when IoU >= it), ``min_support`` (classes with fewer
  labels are unqualified), ``critical`` (action-target class names),
  ``bands`` (ascending object-size band edges, px at model input).
- ``reinference``: the tolerance of the re-inference check (:mod:`candor_eval.detection.scoring.reinference`):
  ``box_px`` per coordinate in original px, ``score``; no defaults, the params file is the
  one place they are declared.

Nothing here opens the params file: each stage reads its sections (``candor_eval.common.params.section``)
and passes these models (:class:`ScoreParams`: what scoring reads; :meth:`ThresholdParams.from_sections`: the
two threshold sections, which are free mappings checked against a data set's classes later).
The detect stage reads only ``detector.floor``, ``detector.providers`` and ``detector.executor``; the
score-detection stage reads the rest, so a threshold or NMS change never reruns inference.
Model cards hold no thresholds (:mod:`candor_eval.detection.model_card`): these sections are the
one home of the served values.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.names import NAME  # a set or model name: the one rule of names
from candor_eval.common.params import DEFAULT_PARAMS, Integer, Number, Probability, is_number
from candor_eval.common.unique import repeated
from candor_eval.detection.match_defaults import BAND_EDGES, MATCH_IOU, MIN_SUPPORT
from candor_eval.detection.served import Served, ServedNms

DEFAULT_THRESHOLD = 0.25     # every class's served threshold when ``thresholds`` is absent: Ultralytics' predict conf


class NmsOverride(BaseModel):
    """``detector.nms_by_model.<model>``: the served-NMS keys of ``detector`` that model serves
    differently (a key left out keeps the shared value; ``max_det: null`` lifts a shared cap)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    nms_iou: Number | None = Field(default=None, gt=0.0, le=1.0)
    max_det: Integer | None = Field(default=None, ge=1)
    nms_agnostic: bool | None = None


class DetectorParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    sets: dict[str, list[str]] = Field(default_factory=dict)
    floor: Number = Field(default=0.05, ge=0.0, le=1.0)
    nms_iou: Number = Field(default=0.5, gt=0.0, le=1.0)
    max_det: Integer | None = Field(default=None, ge=1)
    nms_agnostic: bool = False
    nms_by_model: dict[str, NmsOverride] = Field(default_factory=dict)
    providers: list[str] = Field(default_factory=lambda: ["CPUExecutionProvider"], min_length=1)
    executor: Literal["local", "ray"] = "local"

    @field_validator("sets")
    @classmethod
    def named_sets_of_models(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        """Set and model names are single path segments; each set lists at least one model, once."""
        for name, models in v.items():
            bad = [n for n in (name, *models) if not NAME.fullmatch(n) or set(n) == {"."}]
            if bad:
                raise ValueError(f"{bad[0]!r} is not a set or model name (letters, digits, '_', '-', '.')")
            if not models:
                raise ValueError(f"set {name!r} lists no models")
            if dup := repeated(models):
                raise ValueError(f"set {name!r} lists a model twice: {dup}")
        return v

    @model_validator(mode="after")
    def nms_of_known_models(self) -> DetectorParams:
        """Every model of ``nms_by_model`` is a model of ``sets`` (a misspelled one would serve the
        shared NMS without a word)."""
        bad = [m for m in self.nms_by_model if m not in self.models]
        if bad:
            raise ValueError(f"nms_by_model names {bad[0]!r}, not a model of detector.sets ({', '.join(self.models)})")
        return self

    def served_nms(self, model: str | None) -> ServedNms:
        """Model ``model``'s served NMS: the shared ``nms_iou``, ``max_det``, ``nms_agnostic`` with the
        keys of its ``nms_by_model`` entry replacing them (``None``: the shared values).

        >>> p = DetectorParams(sets={"s": ["x", "y"]}, max_det=300,
        ...                    nms_by_model={"y": {"nms_iou": 0.7, "max_det": None}})
        >>> p.served_nms("x"), p.served_nms("y")
        (ServedNms(iou=0.5, max_det=300, agnostic=False), ServedNms(iou=0.7, max_det=None, agnostic=False))
        """
        own = self.nms_by_model.get(model) if model is not None else None
        got = {} if own is None else {k: getattr(own, k) for k in own.model_fields_set}
        return ServedNms(iou=got.get("nms_iou") or self.nms_iou, max_det=got.get("max_det", self.max_det),
                         agnostic=bool(got.get("nms_agnostic", self.nms_agnostic)))

    @property
    def models(self) -> list[str]:
        """Every model of every set, once, in order of first appearance.

        >>> DetectorParams(sets={"a": ["m1", "m2"], "b": ["m3", "m1"]}).models
        ['m1', 'm2', 'm3']
        """
        return list(dict.fromkeys(m for models in self.sets.values() for m in models))


class MatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    iou: Number = Field(default=MATCH_IOU, gt=0.0, le=1.0)
    min_support: Integer = Field(default=MIN_SUPPORT, ge=0)
    critical: list[str] = Field(default_factory=list)
    bands: list[Number] = Field(default_factory=lambda: list(BAND_EDGES))

    @field_validator("critical")
    @classmethod
    def each_class_once(cls, v: list[str]) -> list[str]:
        if dup := repeated(v):
            raise ValueError(f"a class listed twice: {dup}")
        return v

    @field_validator("bands")
    @classmethod
    def ascending(cls, v: list[float]) -> list[float]:
        if any(b <= a for a, b in zip(v, v[1:])) or any(x <= 0 for x in v):
            raise ValueError("band edges must be positive and strictly ascending")
        return v


class ReinferenceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    box_px: Number = Field(gt=0.0, allow_inf_nan=False)
    score: Probability


class ThresholdsByModel(RootModel[dict[str, dict[str, Any]]]):
    """``thresholds_by_model``: model name -> the ``thresholds`` keys it serves differently
    (values checked with the shared ones by :meth:`ThresholdParams.class_thresholds`). Default: empty."""

    model_config = ConfigDict(defer_build=True)

    root: dict[str, dict[str, Any]] = Field(default_factory=dict)


HINT_FLOOR = ("raw boxes below detector.floor are never stored; lower the floor and rerun detect to use a "
              "lower threshold")


def threshold_problems(mapping: dict[str, Any], *, known: tuple[str, ...] | list[str], floor: float,
                       where: str) -> list[Problem]:
    """The problems of one thresholds mapping: names not ``default`` nor in ``known``, values that are
    not numbers or lie outside ``[floor, 1]``."""
    problems = []
    valid = ", ".join(known)
    for name, value in mapping.items():
        if name != "default" and name not in known:
            problems.append(Problem(f"{where}.{name}", "unknown class name", expected=f"default or one of: {valid}",
                                    got=repr(name)))
            continue
        if not is_number(value):
            problems.append(Problem(f"{where}.{name}", "not a number", got=repr(value)))
        elif not (floor <= value <= 1):            # NaN fails every comparison: refused too
            problems.append(Problem(f"{where}.{name}", "threshold outside [detector.floor, 1]",
                                    expected=f">= detector.floor = {floor} and <= 1", got=repr(value)))
    return problems


@dataclass(frozen=True)
class ThresholdParams:
    """The params of the served thresholds of every model: ``shared`` (``thresholds``) and
    ``by_model`` (``thresholds_by_model``), as read; ``where`` names the params file in errors.
    :meth:`class_thresholds` makes one model's per-class vector of them."""

    shared: dict[str, Any]
    by_model: dict[str, dict[str, Any]] = field(default_factory=dict)
    where: str = str(DEFAULT_PARAMS)

    @classmethod
    def from_sections(cls, shared: object, by_model: dict[str, dict[str, Any]], *, where: str) -> ThresholdParams:
        """The sections as read: ``shared`` (``thresholds``: a mapping, or ``None`` when the params file
        has none, which serves every class at :data:`DEFAULT_THRESHOLD`) and ``by_model``
        (``thresholds_by_model``, validated by :class:`ThresholdsByModel`); ``where`` names the params
        file. Values are validated later, against the data set's classes, by :meth:`class_thresholds`.

        >>> ThresholdParams.from_sections({"default": 0.3}, {"m": {"deer": 0.4}}, where="p.yaml").served("m")
        {'default': 0.3, 'deer': 0.4}
        >>> ThresholdParams.from_sections(None, {}, where="p.yaml").served(None)
        {'default': 0.25}
        """
        if shared is None:
            shared = {"default": DEFAULT_THRESHOLD}
        if not isinstance(shared, dict):
            raise fail(f"{where}:thresholds", "not a mapping", expected="{default: 0.35, <class>: ...}",
                       got=type(shared).__name__)
        return cls(shared=shared, by_model=by_model, where=where)

    def served(self, model: str | None) -> dict[str, Any]:
        """Model ``model``'s mapping: the shared one with the model's keys replacing the same keys
        (``None``: the shared mapping alone).

        >>> ThresholdParams({"default": 0.35, "deer": 0.2}, {"m": {"deer": 0.3, "default": 0.5}}).served("m")
        {'default': 0.5, 'deer': 0.3}
        """
        return {**self.shared, **self.by_model.get(model, {})} if model is not None else dict(self.shared)

    def class_thresholds(self, model: str | None, *, classes: tuple[str, ...] | list[str], floor: float,
                         known: tuple[str, ...] | list[str] | None = None) -> np.ndarray:
        """The per-class vector ``(C,)`` of ``model``'s served thresholds, in ``classes`` order.

        Names are checked against ``known`` (default: ``classes``; a model that covers a subset of
        the data set's classes is scored on ``classes`` but may share thresholds of every data
        class). Unknown names, a missing shared default, values outside ``[floor, 1]`` or not
        numbers are one InputError naming the section and key.
        """
        known = classes if known is None else known
        problems = []
        if "default" not in self.shared:
            problems.append(Problem(f"{self.where}:thresholds.default", "missing", expected="a number in [floor, 1]"))
        problems += threshold_problems(self.shared, known=known, floor=floor, where=f"{self.where}:thresholds")
        if model is not None:
            problems += threshold_problems(self.by_model.get(model, {}), known=known, floor=floor,
                                           where=f"{self.where}:thresholds_by_model.{model}")
        if problems:   # the floor hint only when a value lies outside the range
            below = any(p.what.startswith("threshold outside") for p in problems)
            raise InputError(problems, hint=HINT_FLOOR if below else None)
        served = self.served(model)
        default = float(served["default"])
        return np.array([float(served.get(c, default)) for c in classes], dtype=np.float64)

    def check_models(self, models: list[str]) -> None:
        """Every model of ``thresholds_by_model`` must be one of ``models`` (a misspelled name
        would otherwise leave its model at the shared thresholds without a word)."""
        bad = [m for m in self.by_model if m not in models]
        if bad:
            raise InputError([Problem(f"{self.where}:thresholds_by_model.{m}", "not a model of detector.sets",
                                      expected="one of: " + ", ".join(models), got=repr(m)) for m in bad])


def check_critical(critical: list[str], *, classes: tuple[str, ...] | list[str], where: str) -> None:
    """Every critical class must be a known class name (``where``: the params file, named in the error
    with the key ``match.critical``)."""
    bad = [c for c in critical if c not in classes]
    if bad:
        raise InputError([Problem(f"{where}:match.critical", "unknown class name",
                                  expected="one of: " + ", ".join(classes), got=repr(b))
                          for b in bad])


class ClusterView(BaseModel):
    """The keys of ``stats.cluster`` (owned by the stats stage, docs/stats.md) that say
    what a detection set's rates cluster in: ``frame`` or ``session``, for every set unless
    ``by_set`` names another. Read-only: the rest of the section is its owner's."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
    detection: Literal["frame", "session"] = "frame"
    by_set: dict[str, Literal["frame", "session"]] = {}

    def detection_of(self, name: str) -> Literal["frame", "session"]:
        """The cluster of detection set ``name``."""
        return self.by_set.get(name, self.detection)

    def check_sets(self, sets: Iterable[str], *, where: str) -> None:
        """Every set of ``by_set`` is one of ``sets`` (``detector.sets``): a misspelled one would
        cluster nothing without a word (an InputError naming ``where``, the params file, the key and
        the known sets).

        >>> ClusterView(by_set={"detectr": "session"}).check_sets(["detector"], where="p.yaml")
        Traceback (most recent call last):
        ...
        candor_eval.common.errors.InputError: p.yaml:stats.cluster.by_set.detectr: not a set of detector.sets \
(expected one of: detector, got 'detectr')
        """
        known = list(sets)
        bad = [name for name in self.by_set if name not in known]
        if bad:
            raise InputError([Problem(f"{where}:stats.cluster.by_set.{name}", "not a set of detector.sets",
                                      expected="one of: " + (", ".join(known) or "(no set)"), got=repr(name))
                              for name in bad])


class StatsClusterView(BaseModel):
    """The ``stats`` section, read by detection scoring for its ``cluster`` keys only."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
    cluster: ClusterView = ClusterView()


class ScoreParams(NamedTuple):
    """The params sections scoring reads, validated: ``detector``, ``match``, ``thresholds`` and
    ``thresholds_by_model`` (every model of it a model of ``detector.sets``), and the
    ``stats.cluster`` keys that say what a set's rates cluster in. A stage reads them; scoring
    takes them as they are."""

    detector: DetectorParams
    match: MatchParams
    threshold_params: ThresholdParams
    cluster: ClusterView = ClusterView()

    def served(self, model: str | None, *, classes: tuple[str, ...] | list[str],
               known: tuple[str, ...] | list[str] | None = None) -> Served:
        """Model ``model``'s :class:`~candor_eval.detection.served.Served` on ``classes``: its served
        thresholds (:meth:`ThresholdParams.class_thresholds`, names checked against ``known``), its served
        NMS (:meth:`DetectorParams.served_nms`) and ``match.iou``."""
        thresholds = self.threshold_params.class_thresholds(model, classes=classes, known=known,
                                                            floor=self.detector.floor)
        return Served(thresholds=thresholds, nms=self.detector.served_nms(model), match_iou=self.match.iou)
