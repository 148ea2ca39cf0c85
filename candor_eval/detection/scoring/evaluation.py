"""One model's score-detection result: metrics, outcome rows, plot data, COCO export, figure inputs.

:func:`score_model` reads the model's card and checks that the raw detections belong to this
card and ``detector.floor``, builds the scene (:mod:`candor_eval.detection.scoring.scene`), then
streams the raw boxes in chunks of whole frames (:mod:`candor_eval.detection.scoring.stream`):
per-class thresholds, same-class NMS and the matcher run once per chunk at the model's own
served thresholds (:meth:`candor_eval.detection.config.ThresholdParams.served`) and every view is read
off the chunks' summed counts (:class:`~candor_eval.detection.scoring.tally.Tally`):

- ``metrics``: blocks ``all``, ``dev``, ``test`` (:meth:`~candor_eval.detection.scoring.tally.Tally.block`,
  plus ``out_of_scope`` when the card's ``class_map`` leaves data classes out,
  :func:`~candor_eval.detection.scoring.scope.out_of_scope_block`),
  ``frozen`` when the card has a frozen evaluation (:func:`frozen_block`), and ``counts``
  (the k of n behind every rate, :func:`~candor_eval.detection.scoring.metrics.rate_counts`);
- ``outcomes``: per frame and label, from which :func:`frame_rows` and :func:`label_rows` make the
  outcome tables ``detection-frames.csv`` (``frame,split,session,zoom,model,tp,fp,fn``) and
  ``detection-labels.csv`` (``frame,split,label,class,model,found``; crowd labels have no row);
- ``plots``: plot data files (kind -> relative path -> bytes, :mod:`candor_eval.detection.scoring.plots`);
- ``figure``: the inputs of the model's PNGs (drawn outside the pipeline);
- ``served``: the model's served contract (:mod:`candor_eval.detection.served_contract`), which the
  stage writes to ``<outcomes>/served.json`` for the release gate.

The served detections (kept at the operating point) go, as COCO results, to the ``coco``
callback as each chunk is scored, so the export is written without holding it.

Definitions: docs/detector.md ("score-detection").
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from candor_eval.common.counts import KEY as COUNTS_KEY
from candor_eval.common.counts import counts_block
from candor_eval.common.errors import fail
from candor_eval.common.manifest import load_manifest
from candor_eval.detection.config import DetectorParams, MatchParams, ScoreParams, ThresholdParams, check_critical
from candor_eval.detection.detections_file import RawDetections, iter_chunks, plain_line, read_index, split_chunks
from candor_eval.detection.frames import SPLITS
from candor_eval.detection.model_card import ModelCard, load_card
from candor_eval.detection.scoring import plots as dp
from candor_eval.detection.scoring.box_quality import quality_by_class
from candor_eval.detection.scoring.clusters import ClusterBy
from candor_eval.detection.scoring.coco_ap import accumulate_subsets
from candor_eval.detection.scoring.coco_results import coco_results
from candor_eval.detection.scoring.key_paths import compare_frozen
from candor_eval.detection.scoring.metrics import threshold_grid
from candor_eval.detection.scoring.records import APMatchesByClass, Outcomes, Scene
from candor_eval.detection.scoring.scene import DataReads, SceneInputs, build_scene
from candor_eval.detection.scoring.scope import out_of_scope_block
from candor_eval.detection.scoring.stream import score_stream
from candor_eval.detection.scoring.tally import Tally, frame_groups
from candor_eval.detection.scoring.truth import Truth
from candor_eval.detection.served import Served
from candor_eval.detection.served_contract import contract

log = logging.getLogger("candor.score")

# frame, split, session, zoom, model, tp, fp, fn, then FRAME_ERROR_COLUMNS
FrameRow = tuple[str, str, str, str, str, int, int, int, int, int, int, int, int, int, int, int]
LabelRow = tuple[str, str, int, str, str, int]              # frame, split, label, class, model, found


@dataclass(frozen=True)
class ModelScore:
    """Everything one model contributes to the score-detection outputs (see the module docstring)."""

    model: str
    metrics: dict
    outcomes: Outcomes
    plots: dict[str, dict[str, bytes]]
    figure: dp.FigureInputs
    served: dict


def add_quality(block: dict, outcomes: Outcomes, *, labels: np.ndarray) -> None:
    """Put ``tp_quality`` (:mod:`candor_eval.detection.scoring.box_quality`) of the labels selected by
    ``labels`` ``(L,)`` beside the counts of ``block``'s ``micro`` and of each class of ``per_class``."""
    sc = outcomes.scene
    micro, per_class = quality_by_class(outcomes.tp_iou[labels], outcomes.tp_edge[labels],
                                        sc.label_class[labels], classes=sc.classes)
    block["micro"]["tp_quality"] = micro
    for name, q in per_class.items():
        block["per_class"][name]["tp_quality"] = q


def ap_blocks(matches: APMatchesByClass, scene: Scene, *, image_ids: list[int], category_ids: list[int]) -> dict:
    """The ``ap`` block (:mod:`candor_eval.detection.scoring.coco_ap`) of each split, ``{"all", "dev",
    "test"}``: every box after NMS, before thresholds; score ties across frames broken by COCO image
    id, as pycocotools does on the export's ids."""
    image_order = np.argsort(np.argsort(np.asarray(image_ids, np.int64), kind="stable"), kind="stable")
    subsets = {}
    for split in ("all", *SPLITS):
        frames = np.ones(len(scene.frames), bool) if split == "all" else scene.split == split
        regular = frames[scene.label_frame] & ~scene.label_crowd
        n_labels = np.bincount(scene.label_class[regular], minlength=len(scene.classes))
        subsets[split] = (None if split == "all" else frames, n_labels)
    ap = accumulate_subsets(matches, classes=scene.classes, subsets=subsets, image_order=image_order)
    return {split: ap[split].block(category_ids) for split in subsets}


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


def _rank(values: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each array's values as their rank among the values of all the arrays (sorted order)."""
    _, inverse = np.unique(np.concatenate(values), return_inverse=True)
    return np.split(inverse, np.cumsum([len(v) for v in values])[:-1])


def _sorted_positions(keys: list[list[np.ndarray]]) -> Iterator[tuple[int, int]]:
    """``(model, position)`` of every row, sorted by the rows' ``keys`` (per key, one array per
    model, the first key most significant)."""
    sizes = [len(k) for k in keys[0]]
    model = np.repeat(np.arange(len(sizes)), sizes)
    order = np.lexsort([np.concatenate(k) for k in keys[::-1]])
    starts = np.cumsum([0] + sizes)[:-1]
    return zip(model[order].tolist(), (order - starts[model[order]]).tolist())


def frame_rows(outcomes: dict[str, Outcomes]) -> Iterator[FrameRow]:
    """The frame rows of every model (model -> :class:`~candor_eval.detection.scoring.records.Outcomes`), in
    the order of the rows as tuples (frame, split, session, zoom, model, ...): one per frame and model,
    TP and FP of the kept detections, FN of the labels, then the FPs by kind
    (``fp_localisation, fp_class_confusion, fp_duplicate, fp_background, fp_both``), the FNs split
    into ``fn_aimed`` and ``fn_missed`` (:mod:`candor_eval.detection.scoring.anatomy`) and ``tp_strict``
    (TPs at IoU >= 0.75). Made one by one, never all held at once."""
    models = sorted(outcomes)
    scenes = [outcomes[m].scene for m in models]
    cols = ("frames", "split", "session", "zoom")
    keys = [_rank([getattr(sc, c) for sc in scenes]) for c in cols]
    keys.append([np.full(len(sc.frames), m) for m, sc in enumerate(scenes)])
    text = [[getattr(sc, c).tolist() for c in cols] for sc in scenes]
    counts = [list(zip(o.tp.tolist(), o.fp.tolist(), o.fn.tolist(), *o.fp_kinds.T.tolist(), o.fn_aimed.tolist(),
                       (o.fn - o.fn_aimed).tolist(), o.tp_strict().tolist()))
              for o in (outcomes[m] for m in models)]
    for m, i in _sorted_positions(keys):
        f, sp, se, z = text[m]
        yield (f[i], sp[i], se[i], z[i], models[m], *counts[m][i])


def label_rows(outcomes: dict[str, Outcomes]) -> Iterator[LabelRow]:
    """The label rows of every model, in the order of the rows as tuples (frame, split, label,
    class, model, found): one per non-crowd label and model, found (1) or missed (0) at the
    operating point. Made one by one, never all held at once."""
    models = sorted(outcomes)
    scenes = [outcomes[m].scene for m in models]
    keep = [np.flatnonzero(~sc.label_crowd) for sc in scenes]
    lf = [sc.label_frame[k] for sc, k in zip(scenes, keep)]
    frame_rank, split_rank = (_rank([getattr(sc, c) for sc in scenes]) for c in ("frames", "split"))
    names = [np.array(sc.classes, dtype=str)[sc.label_class[k]] if len(k) else np.zeros(0, str)
             for sc, k in zip(scenes, keep)]
    keys = [[r[f] for r, f in zip(frame_rank, lf)], [r[f] for r, f in zip(split_rank, lf)],
            [sc.label_index[k] for sc, k in zip(scenes, keep)], _rank(names),
            [np.full(len(k), m) for m, k in enumerate(keep)]]
    frames = [(sc.frames.tolist(), sc.split.tolist()) for sc in scenes]
    labels = [(f.tolist(), sc.label_index[k].tolist(), n.tolist(), outcomes[m].found[k].astype(int).tolist())
              for m, sc, k, f, n in zip(models, scenes, keep, lf, names)]
    for m, i in _sorted_positions(keys):
        (fr, sp), (f, index, name, found) = frames[m], labels[m]
        yield fr[f[i]], sp[f[i]], index[i], name[i], models[m], found[i]


def coco_ids(truth: Truth, frames: tuple[str, ...], classes: tuple[str, ...], *,
             data_classes: tuple[str, ...]) -> tuple[list[int], list[int]]:
    """COCO image ids per frame and category ids per class: the data set's ``coco.json`` ids when it
    has one; else images are numbered 1.. in frame order and categories 1.. in the data set's
    class order (``data_classes``), so every model of the set exports the same ids."""
    if truth.image_ids is None or truth.category_ids is None:
        return list(range(1, len(frames) + 1)), [data_classes.index(c) + 1 for c in classes]
    return [truth.image_ids[f] for f in frames], [truth.category_ids[c] for c in classes]


def score_model(model: str, *, data: Path, models: Path, detections: Path, detector: DetectorParams,
                match: MatchParams, threshold_params: ThresholdParams,
                coco: Callable[[list[dict]], None] | None = None, cluster: ClusterBy = "frame",
                reads: DataReads | None = None) -> ModelScore:
    """Score model ``model`` (card ``models/<model>.yaml``, raw boxes ``detections/<model>.jsonl``)
    on the data set ``data``; see the module docstring for what it returns. The raw boxes are
    read in chunks of whole frames (:mod:`candor_eval.detection.scoring.stream`): memory does not grow
    with their number. ``coco`` receives the served detections as COCO results, chunk by chunk;
    ``cluster`` is what the rates' units cluster in (``stats.cluster``); ``reads``: the reads of
    ``data`` shared by the set's models (:class:`~candor_eval.detection.scoring.scene.DataReads`)."""
    path = Path(detections) / f"{model}.jsonl"
    params = ScoreParams(detector=detector, match=match, threshold_params=threshold_params)
    return score_chunks(model, read_index(path), iter_chunks(path), where=str(path), data=data, models=models,
                        params=params, coco=coco, cluster=cluster, reads=reads)


def build_first_uses(models: Path, model: str) -> None:
    """Build in this process what scoring a model builds on its first use (the model card's validator,
    by reading ``model``'s card; the pattern of the detections' frame lines), so that workers forked
    afterwards inherit it instead of each building it again. An error is left for the model's own
    scoring to raise, where it belongs."""
    plain_line()
    try:
        load_card(Path(models) / f"{model}.yaml")
    except Exception:  # noqa: BLE001, S110 - see the docstring: raised again where it belongs
        pass


def score_raw(model: str, raw: RawDetections, *, where: str, data: Path, models: Path, detector: DetectorParams,
              match: MatchParams, threshold_params: ThresholdParams, cluster: ClusterBy = "frame") -> ModelScore:
    """:func:`score_model` on raw boxes already in memory (``where`` names them in errors)."""
    params = ScoreParams(detector=detector, match=match, threshold_params=threshold_params)
    return score_chunks(model, raw, split_chunks(raw), where=where, data=data, models=models, params=params,
                        cluster=cluster)


def check_header(head: dict, card: ModelCard, *, model: str, floor: float, where: str) -> None:
    """The raw detections' header ``head`` (file ``where``) must be of ``model``, its card ``card`` (model
    file, preprocessing, input size, classes) and ``detector.floor`` ``floor``: else they are stale."""
    if head.get("onnx_sha256") != card.sha256:
        raise fail(where, "detections were made by another model file", expected=card.sha256,
                   got=head.get("onnx_sha256"), hint="dvc repro detect")
    if head.get("preprocess") != card.preprocess.model_dump():
        raise fail(where, "detections were made with another preprocessing than the card's",
                   expected=str(card.preprocess.model_dump()), got=head.get("preprocess"), hint="dvc repro detect")
    if head.get("floor") != floor:
        raise fail(where, "detections were made at another detector.floor", expected=str(floor),
                   got=head.get("floor"), hint="dvc repro detect")
    if head.get("model") != model:
        raise fail(f"{where}:1: model", "detections of another model", expected=model, got=head.get("model"),
                   hint="dvc repro detect")
    if card.input_size is not None and list(card.input_size) != list(head["input_size"]):
        raise fail(f"{where}:1: input_size", "detections made at another input size than the card's",
                   expected=str(list(card.input_size)), got=head["input_size"], hint="dvc repro detect")
    if card.classes and list(card.classes) != list(head["classes"]):
        raise fail(where, "classes differ from the model card", expected=str(card.classes), got=head["classes"])


def split_blocks(tally: Tally, outcomes: Outcomes, inputs: SceneInputs, *, min_support: int,
                 critical: list[str]) -> dict[str, dict]:
    """The metrics blocks ``all``, ``dev``, ``test``: the tally's counts
    (:meth:`~candor_eval.detection.scoring.tally.Tally.block`), the TP box quality (:func:`add_quality`) and,
    when the card leaves data classes out, ``out_of_scope``."""
    scene, blocks = inputs.scene, {}
    for split in ("all", *SPLITS):
        blocks[split] = tally.block(splits=None if split == "all" else (split,), min_support=min_support,
                                    critical=critical)
        in_split = np.ones(len(scene.label_frame), bool) if split == "all" else scene.split[scene.label_frame] == split
        add_quality(blocks[split], outcomes, labels=in_split)
        if inputs.scope.out_of_scope:
            mask = np.ones(len(scene.frames), bool) if split == "all" else scene.split == split
            blocks[split]["out_of_scope"] = out_of_scope_block(inputs.outside, frame_mask=mask)
    return blocks


def model_metrics(blocks: dict[str, dict], tally: Tally, ap: dict, frozen: dict | None) -> dict:
    """The metrics file: the split ``blocks``, the ``ap`` blocks (:func:`ap_blocks`), ``frozen`` when the
    card has a frozen evaluation (:func:`frozen_block`) and the ``counts`` block (the k of n behind every
    rate, with the tally's cluster sums)."""
    metrics = {**blocks, "ap": ap, **({} if frozen is None else {"frozen": frozen})}
    metrics[COUNTS_KEY] = counts_block({key: c for split in ("all", *SPLITS) for key, c in tally.cluster_counts(
        splits=None if split == "all" else (split,), prefix=split).items()})
    return metrics


def score_chunks(model: str, index: RawDetections, chunks: Iterable[RawDetections], *, where: str, data: Path,
                 models: Path, params: ScoreParams, coco: Callable[[list[dict]], None] | None = None,
                 cluster: ClusterBy = "frame", reads: DataReads | None = None) -> ModelScore:
    """:func:`score_model` on the detections' ``index`` (header, frames and sizes:
    :func:`~candor_eval.detection.detections_file.read_index`) and their ``chunks``, served and matched
    as ``params`` say (:meth:`~candor_eval.detection.config.ScoreParams.served`)."""
    card_path = Path(models) / f"{model}.yaml"
    card, head = load_card(card_path), index.header
    check_header(head, card, model=model, floor=params.detector.floor, where=where)
    inputs = build_scene(data=Path(data), raw=index, input_hw=tuple(head["input_size"]), class_map=card.class_map,
                         card=str(card_path), reads=reads)
    scene, match = inputs.scene, params.match
    check_critical(match.critical, classes=inputs.scope.data, where=params.threshold_params.where)
    critical = [c for c in match.critical if c in scene.classes]   # out-of-scope ones: counted in out_of_scope
    served = params.served(model, classes=scene.classes, known=inputs.scope.data)
    image_ids, cat_ids = coco_ids(inputs.truth, tuple(scene.frames.tolist()), scene.classes,
                                  data_classes=inputs.scope.data)
    export = None if coco is None else (
        lambda table: coco(coco_results(table, frame_ids=image_ids, category_ids=cat_ids)))
    ap_matches = APMatchesByClass(len(scene.classes))       # 16 bytes a box, class by class
    tally = Tally.empty(frame_groups(scene), classes=scene.classes, band_edges=match.bands,
                        grid=threshold_grid(params.detector.floor), cluster=cluster)
    tally, outcomes = score_stream(inputs, chunks, served, tally=tally, critical=critical, where=where,
                                   export=export, ap=ap_matches.add)
    blocks = split_blocks(tally, outcomes, inputs, min_support=match.min_support, critical=critical)
    ap = ap_blocks(ap_matches, scene, image_ids=image_ids, category_ids=cat_ids)
    frozen = None if not card.evaluation else frozen_block(
        card, model_sha256=head["onnx_sha256"], manifest_sha256=load_manifest(Path(data) / "manifest.csv").sha256,
        metrics=blocks)
    def short(v: float | None) -> str:        # the log line in 100 columns; the metrics keep every digit
        return "n/a" if v is None else f"{v:.3f}"

    micro = blocks["all"]["micro"]
    log.info("%s: micro P %s R %s F1 %s over %d frames (test F1 %s)", model, short(micro["precision"]),
             short(micro["recall"]), short(micro["f1"]), len(scene.frames), short(blocks["test"]["micro"]["f1"]))
    return model_score(model, card, served, tally=tally, outcomes=outcomes,
                       metrics=model_metrics(blocks, tally, ap, frozen), min_support=match.min_support)


def model_score(model: str, card: ModelCard, served: Served, *, tally: Tally, outcomes: Outcomes, metrics: dict,
                min_support: int) -> ModelScore:
    """The :class:`ModelScore` of a scored model: its ``metrics``, ``outcomes``, plot data, figure inputs
    and served contract (:func:`~candor_eval.detection.served_contract.contract`)."""
    classes, cv = outcomes.scene.classes, tally.curves()
    assert tally.matrix is not None         # Tally.empty keeps the confusion matrix by default
    thresholds = {c: float(served.thresholds[i]) for i, c in enumerate(classes)}
    matrix = tally.confusion(splits=(dp.COMPARED_SPLIT,))
    figure = dp.FigureInputs(model=model, curves=cv, matrix=matrix, classes=classes,
                             per_class=metrics[dp.COMPARED_SPLIT]["per_class"], served_by_class=thresholds,
                             min_support=min_support, split_curves=tally.curves(splits=(dp.COMPARED_SPLIT,)))
    return ModelScore(model=model, metrics=metrics, outcomes=outcomes,
                      served=contract(card, onnx_sha256=card.sha256, nms=served.nms, thresholds=thresholds),
                      plots=dp.plot_files(model, curves=cv, matrix=matrix, classes=classes),
                      figure=figure)
