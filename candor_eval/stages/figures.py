"""figures: render the PNG figures people look at, outside the pipeline (``candor figures``).

    candor figures [--params params.yaml] [--set SET [--data DIR] [--detections DIR]]
        [--models models] [--stats metrics/stats.json] [--out plots/figures]

Writes into ``--out`` (a git-ignored folder it owns; stale files are removed):
``<set>/<model>-pr.png``, ``-f1.png``, ``-confusion.png``, ``-per_class.png`` for every model of
every detection set of ``detector.sets`` (or of ``--set`` only; scored exactly as the score-detection stage does,
:func:`candor_eval.detection.scoring.evaluation.score_model`, from the canonical raw detections), and
``forest-<group>.png``
per report group from the stats stage's headline comparisons (linked from ``plots/report/report.md``).

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
from candor_eval.detection.scoring.plots import figure_jobs, render
from candor_eval.review.forest import forest_png, forest_rows
from candor_eval.review.report import track_groups
from candor_eval.review.stats_file import StatsFile
from candor_eval.stages.cli_detection import add_scoring_arguments, chosen_sets, read_score_params


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="candor figures", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_scoring_arguments(p)
    p.add_argument("--stats", default="metrics/stats.json", help="the stats stage's output")
    p.add_argument("--out", default="plots/figures", help="output folder (owned: stale files removed)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    stats_path = Path(args.stats)
    if not stats_path.is_file():
        raise fail(str(stats_path), "file not found", hint="run the pipeline first: dvc repro")
    stats = StatsFile.from_json(read_json(stats_path), where=str(stats_path))
    params = read_score_params(args.params)
    jobs = {}
    for dset, data, detections in chosen_sets(args, params.detector):
        for model in dset.models:
            scored = score_model(model, data=data, models=Path(args.models), detections=detections,
                                 detector=params.detector, match=params.match, threshold_params=params.threshold_params)
            jobs.update({f"{dset.name}/{png}": job for png, job in figure_jobs(scored.figure).items()})
    for group in track_groups(stats):
        jobs[f"forest-{group}.png"] = (forest_png, (forest_rows(stats, group),), {"confidence": stats.confidence})
    replace_dir_files(Path(args.out), render(jobs), clean=True)
    print(f"{len(jobs)} figures -> {args.out}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
