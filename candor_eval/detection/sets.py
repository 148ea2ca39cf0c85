"""Detection sets: the data sets the detector track scores, and where each one's files live.

``params.yaml: detector.sets`` maps a set name to the model cards scored on it, reference first
(``{detector: [demo-v1, demo-v2]}``); adding a set is one line there (docs/detector.md,
"Detection sets"). The DVC stages iterate over the sets (``foreach`` in ``dvc.yaml``); a set
``s`` has, by convention:

- ``data/s/``: ``manifest.csv`` (``candor fetch manifest data/s``), ``frames.csv``,
  ``images/``, ground truth as YOLO txt (``labels/`` + ``classes.txt``) and/or ``coco.json``;
- ``build/detections/s/<model>.jsonl``: the raw boxes of every model of the set (``detect@s``);
- ``metrics/detection/s/<model>.json`` and ``metrics/outcomes/s/detection-{frames,labels}.csv``
  (``score-detection@s``), plot data under ``plots/detection/<kind>/s/``, COCO results under
  ``build/coco-results/s/``.

The fetch stage writes one record per set, ``build/verified/detection-<set>.json``
(:func:`set_records`): the set's data record and, per model, its verified ONNX SHA-256 and the
SHA-256 of its card file. A set whose folder holds a file its readers would read but its manifest
does not list (:func:`candor_eval.detection.frames.unlisted`) gets a Problem instead, so fetch
never reports verified a set that would not be read as verified. ``detect@s`` depends on that
record rather than on the whole ``models/`` folder, so adding or changing a model reruns
inference only of the sets that list it.

The paired tests compare, within each set, the set's first model (its reference) with each
other model of the set: two sets never share a unit.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from candor_eval.common.errors import Problem, fail
from candor_eval.common.manifest import sha256_file
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.frames import unlisted

DATA = Path("data")
DETECTIONS = Path("build/detections")


@dataclass(frozen=True)
class DetectionSet:
    """One configured set: its ``name`` and its ``models`` (reference first)."""

    name: str
    models: tuple[str, ...]

    @property
    def reference(self) -> str:
        """The model every other model of the set is compared with: the first one listed."""
        return self.models[0]


def detection_sets(params: DetectorParams) -> list[DetectionSet]:
    """Every configured set, in ``params.yaml`` order."""
    return [DetectionSet(name, tuple(models)) for name, models in params.sets.items()]


def find_set(params: DetectorParams, name: str | None, *, where: str = "params.yaml",
             key: str = "detector.sets") -> DetectionSet:
    """Set ``name`` of ``detector.sets`` (``None``: the first set, the default); an unknown name or
    no set at all is an input error naming ``detector.sets``, or ``key`` (the params key that named
    the set, e.g. ``gate.set``) for an unknown name."""
    sets = {s.name: s for s in detection_sets(params)}
    if not sets:
        raise fail(f"{where}:detector.sets", "no detection set configured",
                   expected="{<set>: [<model>, ...]}, one line per folder data/<set>/")
    if name is None:
        return next(iter(sets.values()))
    if name not in sets:
        raise fail(f"{where}:{key}", "unknown detection set", expected="a set of detector.sets: " + ", ".join(sets),
                   got=name)
    return sets[name]


def set_folders(params: DetectorParams, name: str | None, *, data: str | Path | None = None,
                detections: str | Path | None = None,
                where: str = "params.yaml") -> tuple[DetectionSet, Path, Path]:
    """Set ``name`` (:func:`find_set`; ``None``: the first), its data folder and its raw-detections
    folder: ``data`` and ``detections`` when given, else by the convention of the module docstring
    (``data/<set>``, ``build/detections/<set>``).

    >>> p = DetectorParams(sets={"birds": ["m"]})
    >>> s, data, detections = set_folders(p, None)
    >>> s.name, data.as_posix(), detections.as_posix()
    ('birds', 'data/birds', 'build/detections/birds')
    """
    s = find_set(params, name, where=where)
    return s, Path(data) if data else DATA / s.name, Path(detections) if detections else DETECTIONS / s.name


def set_records(sets: list[DetectionSet], *, data_records: dict[str, dict], model_records: dict[str, dict],
                models: Path, data_root: Path = DATA) -> tuple[dict[str, dict], list[Problem]]:
    """``detection-<set>.json`` records of the fetch stage (module docstring), from its verified
    ``data_records`` (by data folder name, under ``data_root``) and ``model_records`` (by card
    name); a set without a verified data folder, with a file its manifest does not list or with a
    model that has no card is a Problem."""
    records, problems = {}, []
    for s in sets:
        data = data_records.get(s.name)
        if data is None:
            problems.append(Problem(f"{DATA / s.name}/manifest.csv", "detection set has no manifest",
                                    expected=f"run: candor fetch manifest {DATA / s.name}"))
        elif extra := unlisted(data_root / s.name):
            problems += extra
            data = None
        missing = [m for m in s.models if m not in model_records]
        problems += [Problem(f"{models / m}.yaml", f"model card of detection set {s.name!r} not found",
                             expected="a card models/<model>.yaml (docs/detector.md, \"Model cards\")")
                     for m in missing]
        if data is None or missing:
            continue
        records[f"detection-{s.name}.json"] = {
            "set": s.name, "data": data,
            "models": {m: {**model_records[m], "card_sha256": sha256_file(models / f"{m}.yaml")} for m in s.models}}
    return records, problems

