"""One model's score-detection result: metrics, outcome rows, plot data, COCO export, figure inputs.

:func:`score_model` reads the model's card and raw detections, checks that the detections
belong to this card and ``detector.floor``, builds the scene (:mod:`candor.detection.scoring.scene`),
then applies per-class thresholds, same-class NMS and the matcher once
(:mod:`candor.detection.scoring.metrics`) and reads every view off the matched arrays:

- ``metrics``: blocks ``all``, ``dev``, ``test`` (:func:`~candor.detection.scoring.metrics.summarize`),
  ``frozen`` when the card has a frozen evaluation (:func:`frozen_block`), and ``counts``
  (the k of n behind every rate, :func:`~candor.detection.scoring.metrics.rate_counts`);
- ``frames`` / ``labels``: rows of the outcome tables ``detection-frames.csv``
  (``frame,split,session,zoom,model,tp,fp,fn``) and ``detection-labels.csv``
  (``frame,split,label,class,model,found``; crowd labels have no row);
- ``plots``: plot data files (relative path -> bytes, :mod:`candor.detection.scoring.plots`);
- ``coco``: the served detections (kept at the operating point) as a COCO results list;
- ``figure``: the inputs of the model's PNGs (drawn outside the pipeline).

Definitions: docs/detector.md ("score-detection").
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from candor.common.counts import KEY as COUNTS_KEY
from candor.common.counts import counts_block
from candor.common.errors import fail
from candor.common.manifest import load_manifest
from candor.common.params import section
from candor.detection.config import DetectorParams, MatchParams, check_critical, load_thresholds, threshold_vector
from candor.detection.frames import SPLITS
from candor.detection.inference.detections_file import read_raw
from candor.detection.model_card import ModelCard, load_card
from candor.detection.scoring import plots as dp
from candor.detection.scoring.coco import read_coco
from candor.detection.scoring.coco_results import coco_results
from candor.detection.scoring.columns import DetectionTable
from candor.detection.scoring.metrics import (
    OperatingPoint, Scene, Scored, compare_frozen, confusion, curves, operating_point, rate_counts,
    score_detections, summarize, threshold_grid, wrong_targets,
)
from candor.detection.scoring.scene import build_scene

log = logging.getLogger("candor.score")

FrameRow = tuple[str, str, str, str, str, int, int, int]   # frame, split, session, zoom, model, tp, fp, fn
LabelRow = tuple[str, str, int, str, str, int]              # frame, split, label, class, model, found


class ScoreParams(NamedTuple):
    """The params sections scoring reads: ``detector``, ``match`` and the raw ``thresholds``."""

    detector: DetectorParams
    match: MatchParams
    thresholds: dict[str, float]


def read_params(path: str | Path) -> ScoreParams:
    """The ``detector``, ``match`` and ``thresholds`` sections of a params file, validated."""
    return ScoreParams(section(DetectorParams, "detector", path=str(path)), section(MatchParams, "match", path=str(path)),
                       load_thresholds(path))


@dataclass(frozen=True)
class ModelScore:
    """Everything one model contributes to the score-detection outputs (see the module docstring)."""

    model: str
    metrics: dict
    frames: list[FrameRow]
    labels: list[LabelRow]
    plots: dict[str, bytes]
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


def coco_ids(data: Path, frames: tuple[str, ...] | np.ndarray, classes: tuple[str, ...]) -> tuple[list[int], list[int]]:
    """COCO image ids per frame and category ids per class: from ``data/coco.json`` when present.

    Without it, images are numbered 1.. in frame order and categories 1.. in class order;
    classes missing from coco.json get ids after its largest.
    """
    coco = data / "coco.json"
    if not coco.is_file():
        return list(range(1, len(frames) + 1)), list(range(1, len(classes) + 1))
    gt, img_map, cat_map = read_coco(coco, classes=list(classes))
    frame_to_id = {gt.frames[fi]: iid for iid, fi in img_map.items()}
    cls_to_id = {ci: cid for cid, ci in cat_map.items()}
    top = max(cat_map, default=0)
    cat_ids = []
    for c in range(len(classes)):
        if c not in cls_to_id:
            top += 1
            cls_to_id[c] = top
        cat_ids.append(cls_to_id[c])
    missing = [f for f in frames if f not in frame_to_id]
    if missing:
        raise fail(str(coco), "frames missing from coco.json", got=list(missing[:10]))
    return [frame_to_id[f] for f in frames], cat_ids


def score_model(model: str, *, data: Path, models: Path, detections: Path, detector: DetectorParams,
                match: MatchParams, thresholds: dict[str, float]) -> ModelScore:
    """Score model ``model`` (card ``models/<model>.yaml``, raw boxes ``detections/<model>.jsonl``)
    on the data set ``data``; see the module docstring for what it returns."""
    data, models, detections = Path(data), Path(models), Path(detections)
    card = load_card(models / f"{model}.yaml")
    where = str(detections / f"{model}.jsonl")
    raw = read_raw(detections / f"{model}.jsonl")
    if raw.header.get("onnx_sha256") != card.sha256:
        raise fail(where, "detections were made by another model file", expected=card.sha256,
                   got=raw.header.get("onnx_sha256"), hint="dvc repro detect")
    if raw.header.get("floor") != detector.floor:
        raise fail(where, "detections were made at another detector.floor", expected=detector.floor,
                   got=raw.header.get("floor"), hint="dvc repro detect")
    if card.classes and list(card.classes) != list(raw.header["classes"]):
        raise fail(where, "classes differ from the model card", expected=card.classes, got=raw.header["classes"])
    scene, dframe, dcls = build_scene(data=data, raw=raw, input_hw=tuple(raw.header["input_size"]))
    check_critical(match.critical, classes=scene.classes)
    thr = threshold_vector(thresholds, classes=scene.classes, floor=detector.floor)
    s = score_detections(scene, frame=dframe, cls=dcls, boxes=raw.boxes, score=raw.score,
                         nms_iou=detector.nms_iou, match_iou=match.iou)
    op = operating_point(s, thresholds=thr)
    wrong = wrong_targets(s, op, classes=[scene.classes.index(c) for c in match.critical])
    kw = dict(min_support=match.min_support, critical=match.critical, band_edges=match.bands, wrong=wrong)
    every = np.ones(len(scene.frames), bool)
    blocks = {"all": summarize(s, op, frame_mask=every, **kw)}
    for split in SPLITS:
        blocks[split] = summarize(s, op, frame_mask=scene.split == split, **kw)
    metrics = dict(blocks)
    if card.evaluation:
        metrics["frozen"] = frozen_block(card, model_sha256=raw.header["onnx_sha256"],
                                         manifest_sha256=load_manifest(data / "manifest.csv").sha256, metrics=blocks)
    metrics[COUNTS_KEY] = counts_block(rate_counts(blocks))

    cv = curves(s, thresholds=threshold_grid(detector.floor), frame_mask=every)
    mat = confusion(s, op)
    served = np.flatnonzero(op.kept)
    image_ids, cat_ids = coco_ids(data, tuple(scene.frames.tolist()), scene.classes)
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
