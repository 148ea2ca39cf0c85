"""verify-inference: rerun every detector and check the canonical raw detections within tolerance.

    candor verify-inference [--params params.yaml] [--models models]
        [--set SET [--data DIR] [--detections DIR]] [--verified build/verified]
        [--report build/reinference.json]

The committed ``build/detections/<set>/<model>.jsonl`` are the canonical inference outputs:
everything downstream is computed from them, so it is byte-identical on every machine.
This command reruns inference for every model of every detection set (``detector.sets``, or
of ``--set`` only; exactly as the
detect stage does: :mod:`candor_eval.detection.inference.runner`), then for each model:

1. pairs the fresh boxes with the canonical ones within ``reinference.box_px`` and
   ``reinference.score`` (:mod:`candor_eval.detection.scoring.reinference`) and prints the largest differences;
2. scores both with the current ``thresholds``, ``match`` and ``detector.nms_iou`` and
   compares the metrics and outcome tables; a difference there is reported with the frames
   and labels that changed and the paired boxes that crossed a class threshold.

Exit 0 when every box is paired or explained (a score that crossed the floor or a class
tie by less than the tolerance), even if a crossing changed a scored outcome (that is
reported); exit 1 on a real disagreement (a box without a twin, another header or frame
list); exit 2 on bad input. Nothing under ``build/detections`` or ``metrics/`` is touched.
Needs the fetch stage's records: run ``dvc repro fetch`` first.
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from candor_eval.common.atomic import write_json
from candor_eval.common.errors import EXIT_CALLS_FAILED, EXIT_OK, run_main
from candor_eval.common.params import DEFAULT_PARAMS, section
from candor_eval.detection.config import ReinferenceParams, ScoreParams
from candor_eval.detection.detections_file import collect, header, read_raw
from candor_eval.detection.inference.runner import iter_frames, open_inputs
from candor_eval.detection.scoring.evaluation import ModelScore, frame_rows, label_rows, score_raw
from candor_eval.detection.scoring.key_paths import flatten
from candor_eval.detection.scoring.reinference import (
    Comparison,
    Tolerance,
    changed_rows,
    compare_boxes,
    threshold_crossings,
)
from candor_eval.stages.cli_detection import add_set_arguments, chosen_sets, read_score_params
from candor_eval.stages.cli_help import StageParser

SHOWN = 10  # lines of each list printed; the JSON report has them all
SCORE_LOG = "candor.score"     # the logger of score_raw's line per model


@contextmanager
def quiet(logger: str, on: bool = True) -> Iterator[None]:
    """The ``logger``'s INFO lines left out while the block runs (when ``on``); warnings still show."""
    log, level = logging.getLogger(logger), logging.getLogger(logger).level
    if on:
        log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        log.setLevel(level)


def scored_differences(canonical: ModelScore, fresh: ModelScore) -> dict:
    """Metrics keys and outcome rows that differ between two scored results of one model."""
    a, b = flatten(canonical.metrics), flatten(fresh.metrics)
    return {"metrics": [{"key": k, "canonical": a.get(k), "fresh": b.get(k)}
                        for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)],
            "frames": [{"canonical": x, "fresh": y} for x, y in changed_rows(
                list(frame_rows({canonical.model: canonical.outcomes})),
                list(frame_rows({fresh.model: fresh.outcomes})), key=5)],
            "labels": [{"canonical": x, "fresh": y} for x, y in changed_rows(
                list(label_rows({canonical.model: canonical.outcomes})),
                list(label_rows({fresh.model: fresh.outcomes})), key=5)]}


def model_report(cmp: Comparison, *, crossings: list, scored: dict) -> dict:
    """The JSON record of one model's check."""
    return {"model": cmp.model, "ok": cmp.ok, "canonical_boxes": cmp.canonical_boxes, "fresh_boxes": cmp.fresh_boxes,
            "paired": len(cmp.pairs), "identical_pairs": cmp.identical_pairs,
            "max_box_px": cmp.max_box_px, "max_score": cmp.max_score,
            "explained": [vars(u) for u in cmp.unpaired if u.why is not None],
            "disagreements": cmp.disagreements,
            "threshold_crossings": [dict(zip(("frame", "class", "threshold", "canonical", "fresh"), c))
                                    for c in crossings],
            "scored_identical": not any(scored.values()), "scored_differences": scored}


def print_report(rep: dict, *, tol: Tolerance) -> None:
    """The console summary of one model (the deliberate print of this command)."""
    print(f"{rep['set']}/{rep['model']}: {rep['canonical_boxes']} canonical boxes, {rep['fresh_boxes']} fresh, "
          f"{rep['paired']} paired ({rep['identical_pairs']} bit-identical)")
    print(f"  largest differences: box {rep['max_box_px']:.6g} px (tolerance {tol.box_px:g}), "
          f"score {rep['max_score']:.6g} (tolerance {tol.score:g})")
    for u in rep["explained"][:SHOWN]:
        print(f"  explained ({u['why']}): {u['side']} {u['frame']} {u['cls']} score {u['score']}")
    for line in rep["disagreements"][:SHOWN]:
        print(f"  DISAGREES: {line}")
    for c in rep["threshold_crossings"][:SHOWN]:
        print(f"  crossed a threshold: {c['frame']} {c['class']} at {c['threshold']}: "
              f"{c['canonical']} -> {c['fresh']}")
    diff = rep["scored_differences"]
    if rep["scored_identical"]:
        print("  scored results (metrics, frame and label outcomes): identical")
        return
    print(f"  scored results changed: {len(diff['metrics'])} metrics, {len(diff['frames'])} frames, "
          f"{len(diff['labels'])} labels")
    for m in diff["metrics"][:SHOWN]:
        print(f"    {m['key']}: {m['canonical']} -> {m['fresh']}")
    for r in (diff["frames"] + diff["labels"])[:SHOWN]:
        print(f"    {r['canonical']} -> {r['fresh']}")


def verify_model(model: str, *, set_name: str, data: Path, canonical: Path, models: Path, verified: Path,
                 params: ScoreParams, tol: Tolerance) -> dict:
    """Rerun one model (card in ``models``, the fetch stage's records in ``verified``) on the set's
    ``data``, compare its boxes and scored results with the canonical file in ``canonical`` (the
    fresh boxes stay in memory)."""
    det, match, threshold_params, cluster = params
    info, images, loaded = open_inputs(model=model, models=models, data=data, verified=verified,
                                       providers=det.providers, params_file=threshold_params.where)
    head, boxes = header(loaded, floor=det.floor), list(iter_frames(loaded, info.frames, images, floor=det.floor))
    canonical_path = canonical / f"{model}.jsonl"
    kept = read_raw(canonical_path)
    fresh = collect(head, boxes)
    cmp = compare_boxes(kept, fresh, tol=tol)
    if not cmp.ok:
        return model_report(cmp, crossings=[], scored={"metrics": [], "frames": [], "labels": []})
    runs = {}
    for name, raw, where in (("canonical", kept, str(canonical_path)), ("fresh", fresh, "re-inference")):
        with quiet(SCORE_LOG, name == "canonical"):       # the model's scoring line once: the fresh run's
            runs[name] = score_raw(model, raw, where=where, data=data, models=models, detector=det, match=match,
                                   threshold_params=threshold_params, cluster=cluster.detection_of(set_name))
    served, cmap = runs["canonical"].figure.served_by_class, loaded.card.class_map or {}   # by scored (data) class
    class_thresholds = np.array([served[cmap.get(c, c)] for c in kept.header["classes"]])   # by model output class
    return model_report(cmp, crossings=threshold_crossings(kept, fresh, cmp.pairs, class_thresholds=class_thresholds),
                        scored=scored_differences(runs["canonical"], runs["fresh"]))


def build_parser() -> argparse.ArgumentParser:
    p = StageParser(prog="candor verify-inference", description=__doc__)
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: params.yaml)")
    p.add_argument("--models", default="models", help="folder of model cards (default: models)")
    add_set_arguments(p)
    p.add_argument("--verified", default="build/verified", help="the fetch stage's records")
    p.add_argument("--report", help="also write the full comparison as JSON here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    r = section(ReinferenceParams, "reinference", path=args.params)
    tol = Tolerance(box_px=r.box_px, score=r.score)
    params = read_score_params(args.params)
    reports = []
    for dset, data, canonical in chosen_sets(args, params.detector):
        reports += [{"set": dset.name, **verify_model(m, set_name=dset.name, data=data, canonical=canonical,
                                                         models=Path(args.models), verified=Path(args.verified),
                                                         params=params, tol=tol)}
                    for m in dset.models]
    for rep in reports:
        print_report(rep, tol=tol)
    if args.report:
        write_json(args.report, {"tolerance": {"box_px": tol.box_px, "score": tol.score}, "models": reports})
    ok = all(rep["ok"] for rep in reports)
    print("re-inference agrees with the canonical detections" if ok else
          "re-inference DISAGREES with the canonical detections (see above)")
    return EXIT_OK if ok else EXIT_CALLS_FAILED


if __name__ == "__main__":
    raise SystemExit(run_main(main))
