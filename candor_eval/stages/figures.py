"""figures: render the PNG figures people look at, outside the pipeline (``candor figures``).

    candor figures [--params params.yaml] [--set SET [--data DIR] [--detections DIR]]
        [--models models] [--stats metrics/stats.json] [--out plots/figures]

Writes into ``--out`` (a git-ignored folder it owns; stale files are removed), for every detection
set of ``detector.sets`` (or ``--set`` only; scored exactly as the score-detection stage does,
:func:`candor_eval.detection.scoring.evaluation.score_model`, from the canonical raw detections),
one figure per comparison of the set's models: ``<set>/compare-pr.png`` and ``compare-f1.png``
(one panel per class, one line per model), ``compare-per_class.png`` (F1 per class and model with
the stats stage's interval; unqualified classes grey) and ``compare-confusion.png`` (side by side,
one colour scale), all on the headline split (test); and ``forest-<group>.png`` per report
group from the stats stage's comparisons (:mod:`candor_eval.review.forest`; linked from
``plots/report/report.md``).

Why not a DVC stage: PNG bytes depend on the matplotlib build (font rasterisation and
antialiasing change between releases), so hashing them into ``dvc.lock`` would make a fresh
clone on another machine differ. The pipeline's plot *data* (``plots/detection/``, what
``dvc plots show`` renders) is byte-identical everywhere; these PNGs are views of it.

Exit codes: 0 ok; 2 bad input (a plot data file or params named; nothing written).
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.atomic import replace_dir_files
from candor_eval.common.errors import fail, run_main
from candor_eval.common.tables import read_json
from candor_eval.detection.scoring.evaluation import score_model
from candor_eval.detection.scoring.plots import COMPARED_SPLIT, F1Interval, figure_jobs, render
from candor_eval.review.forest import forest_png, forest_rows, forest_title
from candor_eval.review.report import track_groups
from candor_eval.review.stats_file import StatsFile
from candor_eval.stages.cli_detection import add_scoring_arguments, chosen_sets, read_score_params
from candor_eval.stages.cli_help import StageParser


def build_parser() -> argparse.ArgumentParser:
    p = StageParser(prog="candor figures", description=__doc__)
    add_scoring_arguments(p)
    p.add_argument("--stats", default="metrics/stats.json", help="the stats stage's output")
    p.add_argument("--out", default="plots/figures", help="output folder (owned: stale files removed)")
    return p


def class_f1_intervals(stats: StatsFile, *, set_name: str, model: str, classes) -> dict[str, F1Interval]:
    """Each class's F1 and interval on the headline split from the stats stage's rates
    (``detection.<set>.<model>.test.per_class.<class>.f1``); ``None`` where it has none."""
    out: dict[str, F1Interval] = {}
    for name in classes:
        r = stats.rates.get(f"detection.{set_name}.{model}.{COMPARED_SPLIT}.per_class.{name}.f1")
        if r is None or r.rate is None or r.lo is None or r.hi is None:
            out[name] = None
        else:
            out[name] = (r.rate, r.lo, r.hi)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    stats_path = Path(args.stats)
    if not stats_path.is_file():
        raise fail(str(stats_path), "file not found", hint="run the pipeline first: dvc repro")
    stats = StatsFile.from_json(read_json(stats_path), where=str(stats_path))
    params = read_score_params(args.params)
    jobs = {}
    for dset, data, detections in chosen_sets(args, params.detector):
        figs = [score_model(model, data=data, models=Path(args.models), detections=detections,
                            detector=params.detector, match=params.match,
                            threshold_params=params.threshold_params).figure for model in dset.models]
        intervals = {f.model: class_f1_intervals(stats, set_name=dset.name, model=f.model, classes=f.per_class)
                     for f in figs}
        jobs.update({f"{dset.name}/{png}": job for png, job in figure_jobs(
            dset.name, figs, intervals=intervals, confidence=stats.confidence, split=COMPARED_SPLIT).items()})
    for group in track_groups(stats):
        jobs[f"forest-{group}.png"] = (forest_png, (forest_rows(stats, group),),
                                       {"confidence": stats.confidence, "title": forest_title(stats, group)})
    replace_dir_files(Path(args.out), render(jobs), clean=True)
    print(f"{len(jobs)} figures -> {args.out}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
