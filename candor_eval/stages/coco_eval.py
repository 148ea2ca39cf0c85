"""Standalone COCO mode: score any COCO ground-truth / results pair, outside the pipeline.

    candor coco-eval --coco-gt GT.json --coco-results DT.json --out OUT.json
        [--params params.yaml] [--timings]

Without ``--params`` every detection counts (no threshold, no NMS) and ``match`` uses
its defaults (IoU 0.5); with it, the shared ``thresholds`` (no model is named, so
``thresholds_by_model`` and ``detector.nms_by_model`` do not apply), the shared served NMS
(``detector.nms_iou``, ``max_det``, ``nms_agnostic``), ``detector.floor`` and ``match`` apply. Size bands are in
original pixels (there is no model input). Output:
``{"all": {...}, "ap": {...}, "counts": {...}}`` (``ap``: COCO AP50 and AP@[.5:.95] of the results as
given, equal to pycocotools' COCOeval) (:mod:`candor_eval.detection.scoring.coco_pair`;
docs/detector.md, "Standalone COCO mode").

Exit codes: 0 ok; 2 bad input or configuration (a file, entry or field named; nothing written).
"""
from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.atomic import write_json
from candor_eval.common.errors import run_main
from candor_eval.detection.scoring.coco import read_coco
from candor_eval.detection.scoring.coco_pair import score_coco_pair
from candor_eval.detection.scoring.coco_results import read_coco_results
from candor_eval.stages.cli_help import StageParser

# pydantic and YAML are imported only with --params: the plain mode starts without them
# (about a quarter of a one-second run)


def build_parser() -> argparse.ArgumentParser:
    p = StageParser(prog="candor coco-eval", description=__doc__)
    p.add_argument("--coco-gt", required=True, help="COCO ground truth JSON")
    p.add_argument("--coco-results", required=True, help="COCO results JSON")
    p.add_argument("--out", required=True, help="output metrics JSON")
    p.add_argument("--params", default=None, help="params file (optional: thresholds, detector, match)")
    p.add_argument("--timings", action="store_true",
                   help="print one JSON line {load_s, score_s} after the summary (load: reading and validating "
                        "both files into arrays; score: thresholds, NMS, matching, per-class, bands)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    gt, img_map, cat_map = read_coco(Path(args.coco_gt))
    det = read_coco_results(Path(args.coco_results), image_map=img_map, category_map=cat_map, classes=gt.classes)
    t1 = time.perf_counter()
    if args.params is None:
        result = score_coco_pair(gt, det, image_map=img_map, category_map=cat_map)
    else:
        from candor_eval.detection.config import check_critical
        from candor_eval.stages.cli_detection import read_score_params

        params = read_score_params(args.params)
        class_thresholds = params.threshold_params.class_thresholds(None, classes=gt.classes,
                                                                    floor=params.detector.floor)
        check_critical(params.match.critical, classes=gt.classes, where=args.params)
        nms = params.detector.served_nms(None)
        result = score_coco_pair(gt, det, class_thresholds=class_thresholds, nms_iou=nms.iou, agnostic=nms.agnostic,
                                 max_det=nms.max_det,
                                 iou=params.match.iou,
                                 min_support=params.match.min_support, critical=params.match.critical,
                                 bands=params.match.bands, image_map=img_map, category_map=cat_map)
    t2 = time.perf_counter()
    write_json(args.out, result)
    m = result["all"]["micro"]
    print(f"{args.coco_results}: P {m['precision']} R {m['recall']} F1 {m['f1']} "
          f"TP {m['tp']} FP {m['fp']} FN {m['fn']} over {m['frames']} images -> {args.out}")
    if args.timings:  # machine-specific: printed only, never written to the metrics file
        print(json.dumps({"load_s": round(t1 - t0, 4), "score_s": round(t2 - t1, 4)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
