"""One model's score-detection result: metrics, outcome rows, plot data, COCO export, figure inputs.

:func:`score_model` reads the model's card and raw detections, checks that the detections
belong to this card and ``detector.floor``, builds the scene (:mod:`candor.detection.scoring.scene`),
then applies per-class thresholds, same-class NMS and the matcher once
(:mod:`candor.detection.scoring.metrics`) at the model's own served thresholds
(:meth:`candor.detection.config.Thresholds.served`) and reads every view off the matched arrays:

- ``metrics``: blocks ``all``, ``dev``, ``test`` (:func:`~candor.detection.scoring.metrics.summarize`,
  plus ``out_of_scope`` when the card's ``class_map`` leaves data classes out,
  :func:`~candor.detection.scoring.scope.out_of_scope_block`),
  ``frozen`` when the card has a frozen evaluation (:func:`frozen_block`), and ``counts``
  (the k of n behind every rate, :func:`~candor.detection.scoring.metrics.rate_counts`);
- ``frames`` / ``labels``: rows of the outcome tables ``detection-frames.csv``
  (``frame,split,session,zoom,model,tp,fp,fn``) and ``detection-labels.csv``
  (``frame,split,label,class,model,found``; crowd labels have no row);
- ``plots``: plot data files (kind -> relative path -> bytes, :mod:`candor.detection.scoring.plots`);
- ``coco``: the served detections (kept at the operating point) as a COCO results list;
- ``figure``: the inputs of the model's PNGs (drawn outside the pipeline).

Definitions: docs/detector.md ("score-detection").
"""
from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from candor.common.counts import KEY as COUNTS_KEY
from candor.common.counts import counts_block
from candor.common.errors import fail
from candor.common.manifest import load_manifest
from candor.common.params import DEFAULT_PARAMS, section
from candor.detection.config import DetectorParams, MatchParams, Thresholds, check_critical, load_thresholds
from candor.detection.frames import SPLITS
from candor.detection.inference.detections_file import RawDetections, read_raw
from candor.detection.model_card import ModelCard, load_card
from candor.detection.scoring import plots as dp
from candor.detection.scoring.coco_results import coco_results
from candor.detection.scoring.columns import DetectionTable
from candor.detection.scoring.metrics import (
    OperatingPoint, Scene, Scored, compare_frozen, confusion, curves, operating_point, rate_counts,
    score_detections, summarize, threshold_grid, wrong_targets,
)
from candor.detection.scoring.scene import build_scene
from candor.detection.scoring.scope import out_of_scope_block
from candor.detection.scoring.truth import Truth
from candor.detection.sets import add_set_arguments

log = logging.getLogger("candor.score")

FrameRow = tuple[str, str, str, str, str, int, int, int]   # frame, split, session, zoom, model, tp, fp, fn
LabelRow = tuple[str, str, int, str, str, int]              # frame, split, label, class, model, found


class ScoreParams(NamedTuple):
    """The params sections scoring reads: ``detector``, ``match``, ``thresholds`` and ``thresholds_by_model``."""

    detector: DetectorParams
    match: MatchParams
    thresholds: Thresholds


def read_params(path: str | Path) -> ScoreParams:
    """The ``detector``, ``match``, ``thresholds`` and ``thresholds_by_model`` sections of a params
    file, validated (every model of ``thresholds_by_model`` must be a model of ``detector.sets``)."""
    detector = section(DetectorParams, "detector", path=str(path))
    thresholds = load_thresholds(path)
    thresholds.check_models(detector.models)
    return ScoreParams(detector, section(MatchParams, "match", path=str(path)), thresholds)


@dataclass(frozen=True)
class ModelScore:
    """Everything one model contributes to the score-detection outputs (see the module docstring)."""

    model: str
    metrics: dict
    frames: list[FrameRow]
    labels: list[LabelRow]
    plots: dict[str, dict[str, bytes]]
    coco: list[dict]
    figure: dp.FigureInputs


def frozen_block(card: ModelCard, *, model_sha256: str, manifest_sha256: str, metrics: dict) -> dict:
    """Compare a card's frozen ``evaluation`` with the reproduced metrics (see docs/detector.md).

    The numbers are compared only when both the model file and the evaluation manifest are
    the card's (``comparable``); ``differing`` lists the paths that differ by more than 1e-6.
    """
    model_ok = card.sha256 == model_sha256
    manifest_ok = card.eval_manifest_sha256 == manifest_sha256
    block: dict = {"model_sha256_matches": model_ok, "manifest_sha256_matches": manifest_ok}
    if not (model_ok and manifest_ok):
        block.update(reproduced=False, differing=[], comparable=False)
        return block
    differing, compared = compare_frozen(card.evaluation or {}, metrics)
    block.update(comparable=True, compared=compared, reproduced=not differing, differing=differing)
    return block


def frame_rows(model: str, scene: Scene, s: Scored, op: OperatingPoint) -> list[FrameRow]:
    """One outcome row per frame: TP and FP of the kept detections, FN of the labels."""
    n = len(scene.frames)
    tp = np.bincount(s.frame[op.tp], minlength=n)
    fp = np.bincount(s.frame[op.fp], minlength=n)
    fn = np.bincount(scene.label_frame[op.fn], minlength=n)
    return [(scene.frames[i], scene.split[i], scene.session[i], scene.zoom[i], model, int(tp[i]), int(fp[i]),
             int(fn[i])) for i in range(n)]


def label_rows(model: str, scene: Scene, op: OperatingPoint) -> list[LabelRow]:
    """One outcome row per non-crowd label: found (1) or missed (0) at the operating point."""
    keep = np.flatnonzero(~scene.label_crowd)
    return [(scene.frames[scene.label_frame[k]], scene.split[scene.label_frame[k]], int(scene.label_index[k]),
             scene.classes[scene.label_class[k]], model, int(op.found[k])) for k in keep]


def coco_ids(truth: Truth, frames: tuple[str, ...], classes: tuple[str, ...], *,
             data_classes: tuple[str, ...]) -> tuple[list[int], list[int]]:
    """COCO image ids per frame and category ids per class: the data set's ``coco.json`` ids when it
    has one; else images are numbered 1.. in frame order and categories 1.. in the data set's
    class order (``data_classes``), so every model of the set exports the same ids."""
    if truth.image_ids is None or truth.category_ids is None:
        return list(range(1, len(frames) + 1)), [data_classes.index(c) + 1 for c in classes]
    return [truth.image_ids[f] for f in frames], [truth.category_ids[c] for c in classes]


def add_scoring_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of every command that scores the raw detections of a detection set's models
    (``--set``, ``--data``, ``--detections``: :func:`candor.detection.sets.add_set_arguments`)."""
    parser.add_argument("--params", default=str(DEFAULT_PARAMS),
                        help="params file (sections detector, thresholds, thresholds_by_model, match)")
    add_set_arguments(parser)
    parser.add_argument("--models", default="models", help="folder of model cards")


def score_model(model: str, *, data: Path, models: Path, detections: Path, detector: DetectorParams,
                match: MatchParams, thresholds: Thresholds) -> ModelScore:
    """Score model ``model`` (card ``models/<model>.yaml``, raw boxes ``detections/<model>.jsonl``)
    on the data set ``data``; see the module docstring for what it returns."""
    path = Path(detections) / f"{model}.jsonl"
    return score_raw(model, read_raw(path), where=str(path), data=data, models=models, detector=detector,
                     match=match, thresholds=thresholds)


def score_raw(model: str, raw: RawDetections, *, where: str, data: Path, models: Path, detector: DetectorParams,
              match: MatchParams, thresholds: Thresholds) -> ModelScore:
    """:func:`score_model` on raw boxes already in memory (``where`` names them in errors)."""
    data, models = Path(data), Path(models)
    card = load_card(models / f"{model}.yaml")
    if raw.header.get("onnx_sha256") != card.sha256:
        raise fail(where, "detections were made by another model file", expected=card.sha256,
                   got=raw.header.get("onnx_sha256"), hint="dvc repro detect")
    if raw.header.get("preprocess") != card.preprocess.model_dump():
        raise fail(where, "detections were made with another preprocessing than the card's",
                   expected=card.preprocess.model_dump(), got=raw.header.get("preprocess"), hint="dvc repro detect")
    if raw.header.get("floor") != detector.floor:
        raise fail(where, "detections were made at another detector.floor", expected=detector.floor,
                   got=raw.header.get("floor"), hint="dvc repro detect")
    if card.classes and list(card.classes) != list(raw.header["classes"]):
        raise fail(where, "classes differ from the model card", expected=card.classes, got=raw.header["classes"])
    inputs = build_scene(data=data, raw=raw, input_hw=tuple(raw.header["input_size"]), class_map=card.class_map,
                         card=str(models / f"{model}.yaml"))
    scene, dframe, dcls, scope = inputs.scene, inputs.det_frame, inputs.det_class, inputs.scope
    check_critical(match.critical, classes=scope.data)
    critical = [c for c in match.critical if c in scene.classes]   # out-of-scope ones: counted in out_of_scope
    thr = thresholds.vector(model, classes=scene.classes, known=scope.data, floor=detector.floor)
    s = score_detections(scene, frame=dframe, cls=dcls, boxes=raw.boxes, score=raw.score,
                         nms_iou=detector.nms_iou, match_iou=match.iou)
    op = operating_point(s, thresholds=thr)
    wrong = wrong_targets(s, op, classes=[scene.classes.index(c) for c in critical])
    kw = dict(min_support=match.min_support, critical=critical, band_edges=match.bands, wrong=wrong)
    every = np.ones(len(scene.frames), bool)
    masks = {"all": every} | {split: scene.split == split for split in SPLITS}
    blocks = {}
    for split, mask in masks.items():
        blocks[split] = summarize(s, op, frame_mask=mask, **kw)
        if scope.out_of_scope:
            blocks[split]["out_of_scope"] = out_of_scope_block(inputs.outside, frame_mask=mask)
    metrics = dict(blocks)
    if card.evaluation:
        metrics["frozen"] = frozen_block(card, model_sha256=raw.header["onnx_sha256"],
                                         manifest_sha256=load_manifest(data / "manifest.csv").sha256, metrics=blocks)
    metrics[COUNTS_KEY] = counts_block(rate_counts(blocks))

    cv = curves(s, thresholds=threshold_grid(detector.floor), frame_mask=every)
    mat = confusion(s, op)
    served = np.flatnonzero(op.kept)
    image_ids, cat_ids = coco_ids(inputs.truth, tuple(scene.frames.tolist()), scene.classes, data_classes=scope.data)
    table = DetectionTable(classes=scene.classes, frame=s.frame[served], cls=s.cls[served],
                           boxes=s.boxes[served], score=s.score[served])
    log.info("%s: micro P %s R %s F1 %s over %d frames (test F1 %s)", model, blocks["all"]["micro"]["precision"],
             blocks["all"]["micro"]["recall"], blocks["all"]["micro"]["f1"], len(scene.frames),
             blocks["test"]["micro"]["f1"])
    figure = dp.FigureInputs(model=model, curves=cv, matrix=mat, classes=scene.classes,
                             per_class=blocks["all"]["per_class"],
                             thresholds={c: float(thr[i]) for i, c in enumerate(scene.classes)},
                             min_support=match.min_support)
    return ModelScore(model=model, metrics=metrics, frames=frame_rows(model, scene, s, op),
                      labels=label_rows(model, scene, op),
                      plots=dp.plot_files(model, curves=cv, matrix=mat, classes=scene.classes,
                                          per_class=blocks["all"]["per_class"]),
                      coco=coco_results(table, frame_ids=image_ids, category_ids=cat_ids), figure=figure)
