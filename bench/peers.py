"""One timed run of a peer COCO evaluator at IoU 0.5, in its own process.

    python bench/peers.py pycocotools|faster-coco-eval GT.json DT.json [--tp-out TP.json] [--ap]

Both peers are restricted to what candor's scorer computes: one IoU threshold
(0.5), one area range (all), and no cap on detections per image (maxDets large),
so that their matching is comparable. Prints one JSON line: ``load_s`` (reading
both JSON files into the evaluator), ``score_s`` (evaluate + accumulate),
``total_s`` and ``peak_rss_mb`` of this process. With ``--tp-out`` (pycocotools
only) it also writes the TP/FP/FN per category id from pycocotools' own
per-image matches, for the agreement check. With ``--ap`` the peer does COCO AP's own work
instead (ten IoU thresholds 0.50:0.95, area ``all``, ``maxDets`` 100) and the line also holds
``map50``, ``map50_95`` and ``per_class`` (category id -> ``[ap50, ap50_95]``, null without labels),
read from its precision array as candor's ``ap`` block is defined.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import time

import numpy as np

MAX_DETS = 100_000


def restrict(params) -> None:
    params.iouThrs = np.array([0.5])
    params.areaRng = [[0.0, 1e12]]
    params.areaRngLbl = ["all"]
    params.maxDets = [MAX_DETS]


def restrict_ap(params) -> None:
    """COCO AP's work: the default ten IoU thresholds, one area range (all), maxDets 100."""
    params.areaRng = [[0.0, 1e10]]
    params.areaRngLbl = ["all"]
    params.maxDets = [100]


def ap_figures(ev) -> dict:
    """``map50``, ``map50_95`` and ``per_class`` from an accumulated evaluation (area all, maxDets 100)."""
    p = ev.eval["precision"][:, :, :, 0, -1]
    per = {str(cid): None if p[0, 0, k] < 0 else [float(np.mean(p[0, :, k])), float(np.mean(p[:, :, k]))]
           for k, cid in enumerate(ev.params.catIds)}
    return {"map50": float(np.mean(p[0][p[0] > -1])), "map50_95": float(np.mean(p[p > -1])), "per_class": per}


def run_pycocotools(gt: str, dt: str, *, ap: bool = False) -> tuple[float, float, object]:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(gt)
        coco_dt = coco_gt.loadRes(dt)
        t1 = time.perf_counter()
        ev = COCOeval(coco_gt, coco_dt, "bbox")
        (restrict_ap if ap else restrict)(ev.params)
        ev.evaluate()
        ev.accumulate()
    return t1 - t0, time.perf_counter() - t1, ev


def run_faster(gt: str, dt: str, *, ap: bool = False) -> tuple[float, float, object]:
    from faster_coco_eval import COCO, COCOeval_faster

    t0 = time.perf_counter()
    coco_gt = COCO(gt)
    coco_dt = coco_gt.loadRes(dt)
    t1 = time.perf_counter()
    ev = COCOeval_faster(coco_gt, coco_dt, "bbox", print_function=lambda *a, **k: None)
    (restrict_ap if ap else restrict)(ev.params)
    ev.evaluate()
    ev.accumulate()
    return t1 - t0, time.perf_counter() - t1, ev


def pycocotools_counts(ev) -> dict[str, dict[str, int]]:
    """TP/FP/FN per category id from COCOeval.evalImgs (area 'all', IoU 0.5)."""
    out: dict[str, dict[str, int]] = {}
    for e in ev.evalImgs:
        if e is None:
            continue
        c = out.setdefault(str(e["category_id"]), {"tp": 0, "fp": 0, "fn": 0})
        matched = e["dtMatches"][0] > 0
        dt_ignore = e["dtIgnore"][0].astype(bool)
        gt_ignore = np.asarray(e["gtIgnore"], dtype=bool)
        c["tp"] += int((matched & ~dt_ignore).sum())
        c["fp"] += int((~matched & ~dt_ignore).sum())
        c["fn"] += int((~gt_ignore).sum() - (matched & ~dt_ignore).sum())
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tool", choices=["pycocotools", "faster-coco-eval"])
    parser.add_argument("gt")
    parser.add_argument("dt")
    parser.add_argument("--tp-out")
    parser.add_argument("--ap", action="store_true", help="COCO AP's work (10 IoUs, area all, maxDets 100)")
    args = parser.parse_args()
    runner = run_pycocotools if args.tool == "pycocotools" else run_faster
    load_s, score_s, ev = runner(args.gt, args.dt, ap=args.ap)
    if args.tp_out:
        if args.tool != "pycocotools":
            parser.error("--tp-out is only supported for pycocotools")
        with open(args.tp_out, "w") as fh:
            json.dump(pycocotools_counts(ev), fh)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"tool": args.tool, "load_s": round(load_s, 3), "score_s": round(score_s, 3),
                      "total_s": round(load_s + score_s, 3), "peak_rss_mb": round(peak, 1),
                      **(ap_figures(ev) if args.ap else {})}))


if __name__ == "__main__":
    main()
