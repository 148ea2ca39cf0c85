"""Threshold suggestion from dev frames only (held-out discipline; docs/detector.md).

    candor suggest-thresholds --model demo-v1 [--set SET] [--split dev]

Reads only the dev frames' labels and detections (test frames are skipped while
reading, and ``--split test`` is refused: thresholds are never tuned on the final-test
sessions), picks per class the threshold of best F1 on the 0.01 grid (classes under
``match.min_support`` keep the default) and prints a ``dvc exp run -S ...`` line that
applies it to this model only (``thresholds_by_model.<model>.<class>``;
:mod:`candor_eval.detection.scoring.suggest`). The dev frames are those of ``--set`` (default: the
first detection set of ``detector.sets`` that lists the model).

Exit codes: 0 ok; 2 bad input or configuration (the file or params key named; nothing printed).
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.errors import fail, run_main
from candor_eval.common.params import DEFAULT_PARAMS
from candor_eval.detection.model_card import load_card
from candor_eval.detection.scoring.suggest import exp_run_line, suggest_thresholds
from candor_eval.detection.sets import detection_sets, set_folders
from candor_eval.stages.cli_detection import add_set_arguments, read_score_params
from candor_eval.stages.cli_help import StageParser


def build_parser() -> argparse.ArgumentParser:
    p = StageParser(prog="candor suggest-thresholds", description=__doc__)
    p.add_argument("--model", required=True, help="model card name")
    p.add_argument("--split", default="dev", help="only dev is accepted (test frames are never read)")
    p.add_argument("--params", default=str(DEFAULT_PARAMS),
                   help="params file (sections detector, thresholds, thresholds_by_model, match)")
    p.add_argument("--models", default="models", help="folder of model cards")
    add_set_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.split != "dev":
        raise fail("--split", "thresholds are tuned on dev frames only (never on the final-test sessions)",
                   expected="dev", got=args.split)
    params = read_score_params(args.params)
    name = args.set_name or next((d.name for d in detection_sets(params.detector) if args.model in d.models), None)
    dset, data, detections = set_folders(params.detector, name, data=args.data, detections=args.detections,
                                         where=args.params)
    if args.model not in dset.models:
        raise fail("--model", f"not a model of detection set {dset.name!r}", expected="one of: " +
                   ", ".join(dset.models), got=args.model)
    s = suggest_thresholds(args.model, card=load_card(Path(args.models) / f"{args.model}.yaml"), data=data,
                           detections=detections, detector=params.detector, match=params.match,
                           threshold_params=params.threshold_params)
    print(f"suggested thresholds for {s.model} from {s.frames} dev frames (best F1 per class; "
          f"support < {params.match.min_support} keeps the default {s.default}):")
    print(f"{'class':<16}{'support':>8}{'current':>9}{'suggest':>9}")
    for c in s.classes:
        print(f"{c:<16}{s.support[c]:>8}{s.current[c]:>9.2f}{s.best[c]:>9.2f}")
    changes = s.changes()
    print(exp_run_line(s.model, changes) if changes else "no change: the current thresholds are the suggestion")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
