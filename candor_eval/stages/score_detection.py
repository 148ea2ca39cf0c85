"""score-detection stage: score the detect stage's raw boxes of a detection set's models (docs/detector.md).

    candor score-detection [--set detector] [--params params.yaml]
        [--detections build/detections/detector] [--models models] [--data data/detector]
        [--metrics metrics/detection/detector] [--outcomes metrics/outcomes/detector]
        [--plots plots/detection] [--coco-out build/coco-results/detector]

For every model of the set (``detector.sets``, :mod:`candor_eval.detection.sets`): its own served
per-class thresholds (``thresholds`` with the model's ``thresholds_by_model`` keys replacing the
same keys), its served NMS (``detector.nms_iou``, ``max_det``, ``nms_agnostic``,
``nms_by_model``), greedy matching (``match``), then ``<metrics>/<model>.json`` (blocks ``all``,
``dev``, ``test``, ``frozen`` when the card has a frozen evaluation, and ``counts``: the k of n
behind every rate; a split block has ``out_of_scope`` when the card maps the model onto a subset
of the data's classes), the per-frame and per-label outcome tables of the set's models
(``<outcomes>/detection-*.csv``), each model's served contract (``<outcomes>/served.json``:
:mod:`candor_eval.detection.served_contract`, read by the release gate), plot data under
``<plots>/<kind>/<set>/`` (per model on all frames: ``pr``, ``f1``; on the headline split ``test``:
per model ``confusion``, and the set's models compared in one file: ``pr_models``, ``f1_models``,
``anatomy``, ``per_class``; PNG views by
:mod:`stages.figures`, outside the pipeline), and the served detections as COCO results JSON
(``<coco-out>/<model>.json``). Nothing is written unless every model scored. A card whose frozen
``evaluation`` did not reproduce is said on the console, naming the differing fields, and so are
frames without a recorded zoom (no zoom claim follows from them).

The models are scored side by side, one process per model up to the usable cores
(:func:`candor_eval.common.parallel.fork_map`; each streams its own COCO export; with several
models the set's frames and labels are read once, before the workers fork:
:class:`~candor_eval.detection.scoring.scene.DataReads`): the outputs do not depend on how many
run at once, and memory is each model's bounded peak times the models in flight. The params
sections are read here (:func:`stages.cli_detection.read_score_params`) and passed to the library
typed. A set clustered by session (``stats.cluster``) must keep each capture
session in one split, name every frame's session, and have in each split at least as many sessions
as an exact test at ``stats.alpha`` needs (``frames.csv``;
:func:`candor_eval.stats.clusters.check_session_clusters`; docs/stats.md): else exit 2 naming the
session, frames or split, before anything is scored or written.

Imports: the ``stats`` section's model (:class:`candor_eval.review.params.StatsParams`, with the
release gate's parameters) is imported only for a set clustered by session, the one case that
reads ``stats.alpha``; a sweep step starts this stage once per set, and none of it loads SciPy
(``tests/test_stage_startup.py``).
Definitions: :mod:`candor_eval.detection.scoring.evaluation`, :mod:`candor_eval.detection.scoring.nms_match`,
:mod:`candor_eval.detection.scoring.metrics`.

Exit codes: 0 ok; 2 bad input or configuration (the file and line, row, field or box named; nothing written).
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from candor_eval.common.atomic import JsonListWriter, atomic_open, replace_dir_files, write_json
from candor_eval.common.errors import run_main
from candor_eval.common.parallel import fork_map
from candor_eval.common.params import section
from candor_eval.detection.frames import SPLITS, check_sessions_within_splits
from candor_eval.detection.scoring.evaluation import (
    ModelScore,
    build_first_uses,
    frame_rows,
    label_rows,
    score_model,
)
from candor_eval.detection.scoring.metrics import zoom_key
from candor_eval.detection.scoring.plots import COMPARED_SPLIT, PLOT_KINDS, set_plot_files
from candor_eval.detection.scoring.scene import DataReads
from candor_eval.detection.served_contract import FILE as SERVED_FILE
from candor_eval.stages.cli_detection import add_scoring_arguments, read_score_params, set_of_args
from candor_eval.stages.cli_help import StageParser
from candor_eval.stats.clusters import check_session_clusters
from candor_eval.stats.outcomes import write_outcome

log = logging.getLogger("candor.score")
ZOOM_UNKNOWN = zoom_key("")


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def print_summary(results: dict[str, ModelScore]) -> None:
    """The one deliberate print: micro P/R/F1 per model and split."""
    print(f"{'model':<14}{'split':<6}{'frames':>7}{'P':>9}{'R':>9}{'F1':>9}{'TP':>7}{'FP':>7}{'FN':>7}{'FP/fr':>8}")
    for model, res in results.items():
        for split in ("all", *SPLITS):
            m = res.metrics[split]["micro"]
            print(f"{model:<14}{split:<6}{m['frames']:>7}{_f(m['precision']):>9}{_f(m['recall']):>9}{_f(m['f1']):>9}"
                  f"{m['tp']:>7}{m['fp']:>7}{m['fn']:>7}{_f(m['fp_per_frame']):>8}")


def warn_unreproduced(model: str, frozen: dict | None, *, card: Path) -> None:
    """Say on the console when a card's frozen evaluation did not reproduce (before anyone reads a
    difference: the release gate fails on it too)."""
    if frozen is None or frozen.get("reproduced"):
        return
    if not frozen.get("comparable"):
        why = ("the model file is not the card's" if not frozen.get("model_sha256_matches")
               else "the evaluation set is not the card's (eval_manifest_sha256)")
        log.warning("%s: the frozen evaluation of %s cannot be reproduced: %s", model, card, why)
    else:
        log.warning("%s: the frozen evaluation of %s did NOT reproduce; differing: %s", model, card,
                    ", ".join(frozen.get("differing", [])))


def build_parser() -> argparse.ArgumentParser:
    p = StageParser(prog="candor score-detection", description=__doc__)
    add_scoring_arguments(p)
    p.add_argument("--metrics", help="the set's metrics folder, <model>.json (default: metrics/detection/<set>)")
    p.add_argument("--outcomes", help="the set's outcome tables folder (default: metrics/outcomes/<set>)")
    p.add_argument("--plots", default="plots/detection",
                   help="plots root: <kind>/<set>/ folders, owned (stale files removed)")
    p.add_argument("--coco-out", help="the set's COCO results JSON of the served detections, <model>.json "
                                      "(default: build/coco-results/<set>)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    params = read_score_params(args.params)
    dset, data, detections = set_of_args(args, params.detector)
    metrics = Path(args.metrics or f"metrics/detection/{dset.name}")
    outcomes = Path(args.outcomes or f"metrics/outcomes/{dset.name}")
    coco_out = Path(args.coco_out or f"build/coco-results/{dset.name}")
    # the set's frames and labels, read once for all its models; a lone model reads its own, which it does
    # not keep past its scene (peak memory: bench/RESULTS.md, section 5)
    reads = DataReads(data) if len(dset.models) > 1 else None
    if params.cluster.detection_of(dset.name) == "session":      # docs/stats.md: a session lies in one split
        from candor_eval.review.params import StatsParams  # here: see "Imports" in the module docstring

        info = (reads or DataReads(data)).frames()
        check_sessions_within_splits(info, where=str(data / "frames.csv"))
        check_session_clusters(zip(info.frames, info.session, info.split, strict=True),
                               alpha=section(StatsParams, "stats", path=args.params).alpha,
                               where=str(data / "frames.csv"))
    with ExitStack() as files:
        # each COCO export is streamed to a temporary file (opened here, before any worker forks)
        # while its model is scored; the temporaries replace the outputs only when every model
        # scored (else they are removed)
        coco = {m: JsonListWriter(files.enter_context(atomic_open(coco_out / f"{m}.json"))) for m in dset.models}

        def score(model: str) -> ModelScore:
            res = score_model(model, data=data, models=Path(args.models), detections=detections,
                              detector=params.detector, match=params.match, threshold_params=params.threshold_params,
                              coco=coco[model].extend, cluster=params.cluster.detection_of(dset.name), reads=reads)
            coco[model].close()          # flushed: a worker's writes reach the shared file before it returns
            return res

        if reads is not None:      # read and built before the workers fork, so each inherits them
            reads.prefetch(detections / f"{dset.models[0]}.jsonl")
            build_first_uses(Path(args.models), dset.models[0])
        results = dict(zip(dset.models, fork_map(score, dset.models)))
        for model, res in results.items():
            write_json(metrics / f"{model}.json", res.metrics)
        scored = {m: res.outcomes for m, res in results.items()}
        write_outcome(outcomes / "detection-frames.csv", "detection-frames.csv", frame_rows(scored))
        write_outcome(outcomes / "detection-labels.csv", "detection-labels.csv", label_rows(scored))
        write_json(outcomes / SERVED_FILE, {m: res.served for m, res in results.items()})
        for kind in PLOT_KINDS:
            replace_dir_files(Path(args.plots) / kind / dset.name,
                              {rel: blob for res in results.values() for rel, blob in res.plots[kind].items()},
                              clean=True)
        split = COMPARED_SPLIT
        compared = set_plot_files({m: res.figure.split_curves or {} for m, res in results.items()},
                                  {m: res.metrics[split]["micro"]["fp_anatomy"] for m, res in results.items()},
                                  per_class={m: res.metrics[split]["per_class"] for m, res in results.items()},
                                  served={m: res.figure.served_by_class for m, res in results.items()})
        for kind, blobs in compared.items():
            replace_dir_files(Path(args.plots) / kind / dset.name, blobs, clean=True)
    print_summary(results)
    for model, res in results.items():
        warn_unreproduced(model, res.metrics.get("frozen"), card=Path(args.models) / f"{model}.yaml")
    unknown = next(iter(results.values())).metrics["all"]["by_zoom"].get(ZOOM_UNKNOWN) if results else None
    if unknown:
        log.warning("%d frame(s) of set %s have no recorded zoom (%s): no zoom-robustness claim follows from "
                    "them (frames.csv: zoom)", unknown["frames"], dset.name, ZOOM_UNKNOWN)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
