"""score-detection stage: seed-002 scoring of the detect stage's raw boxes, and COCO interop.

Pipeline mode (what ``dvc repro score-detection`` runs)::

    python -m stages.score detections [--detections build/detections] [--models models]
        [--data data/detector] [--verified build/verified] [--metrics metrics/detection]
        [--outcomes metrics/outcomes] [--plots plots/detection] [--coco-out build/coco-results]

For every model of ``detector.models``: per-class thresholds (``thresholds``),
same-class NMS (``detector.nms_iou``), greedy matching (``match``), then
``metrics/detection/<model>.json`` (blocks ``all``, ``dev``, ``test``, and
``frozen`` when the card has a frozen evaluation), the per-frame and per-label
outcome tables of all models, plot data (rendered as PNGs by :mod:`stages.figures`,
outside the pipeline), and the served detections as COCO results JSON. Definitions: :mod:`candor.detection.scoring.metrics`; user guide:
``docs/detector.md``.

Standalone COCO mode (any ground truth / results pair, outside the pipeline)::

    python -m stages.score detections --coco-gt GT.json --coco-results DT.json --out OUT.json
        [--params params.yaml]

Without ``--params`` every detection counts (no threshold, no NMS) and
``match`` uses its defaults (IoU 0.5); with it, ``thresholds``,
``detector.nms_iou``/``floor`` and ``match`` apply. Size bands are then in
original pixels (there is no model input). Output: ``{"all": {...}}``.

Threshold suggestion (held-out discipline: dev frames only)::

    python -m stages.score suggest-thresholds --model demo-v1 [--split dev]

reads only the dev frames' labels and detections (test frames are skipped
while reading, and ``--split test`` is refused), picks per class the threshold
of best F1 on the 0.01 grid (classes under ``match.min_support`` keep the
default) and prints a ``dvc exp run -S ...`` line that applies it.
"""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from candor.common.atomic import atomic_path, write_json, write_text
from candor.detection.scoring.metrics import (
    Scene, best_thresholds, compare_frozen, confusion, curves, operating_point,
    score_detections, summarize, threshold_grid, wrong_targets,
)
from candor.common.errors import fail, run_main
from candor.detection.frames import SPLITS, read_frames
from candor.detection.inference.detections_file import RawDetections, read_raw
from candor.detection.scoring.labels import DetectionTable, coco_results, read_coco, read_coco_results, read_yolo
from candor.detection.match_defaults import BAND_EDGES, MATCH_IOU, MIN_SUPPORT

if TYPE_CHECKING:
    from candor.detection.config import DetectorParams, MatchParams

# pydantic and YAML (params, model cards), and the plot module are
# imported by the functions that use them: the standalone COCO mode without --params starts
# without them (about 0.25 s of a 1 s run)

log = logging.getLogger("candor.score")



def union_classes(truth: tuple[str, ...], model: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Ground-truth classes in their order, then the model's classes that have no labels."""
    return tuple(truth) + tuple(c for c in model if c not in truth)


def build_scene(*, data: Path, raw: RawDetections, input_hw: tuple[int, int],
                frames: tuple[str, ...] | None = None) -> tuple[Scene, np.ndarray, np.ndarray]:
    """Scene of ``frames`` (default: all of frames.csv) for one model, plus the raw boxes remapped.

    Returns the scene, the detections' frame indices into the scene and their class
    indices into the scene's classes.
    """
    info = read_frames(data / "frames.csv")
    wanted = info.frames if frames is None else frames
    missing = [f for f in wanted if f not in raw.sizes]
    extra = [f for f in raw.frames if f not in set(wanted)]
    if missing or (frames is None and extra):
        raise fail(str(data / "frames.csv"), "the detections do not cover exactly the data set's frames",
                   expected=f"{len(wanted)} frames", got=f"missing {missing[:5]}, extra {extra[:5]}",
                   hint="the detections are stale: dvc repro detect")
    gt = read_yolo(data, frames=list(wanted), sizes=raw.sizes)
    classes = union_classes(gt.classes, raw.header["classes"])
    cmap = np.array([classes.index(c) for c in raw.header["classes"]], dtype=np.int64)
    pos = {f: i for i, f in enumerate(wanted)}
    fmap = np.array([pos.get(f, -1) for f in raw.frames], dtype=np.int64)
    meta = {f: i for i, f in enumerate(info.frames)}
    idx = [meta[f] for f in wanted]
    ih, iw = input_hw
    scale = np.array([min(iw / gt.sizes[i, 0], ih / gt.sizes[i, 1]) for i in range(len(wanted))])
    scene = Scene(classes=classes, frames=np.array(wanted, dtype=str),
                  split=np.array([info.split[i] for i in idx], dtype=str),
                  session=np.array([info.session[i] for i in idx], dtype=str),
                  zoom=np.array([info.zoom[i] for i in idx], dtype=str), scale=scale,
                  label_frame=gt.label_frame, label_index=gt.label_index, label_class=gt.label_class,
                  label_boxes=gt.label_boxes, label_crowd=gt.label_crowd)
    return scene, fmap[raw.frame] if len(raw.frame) else raw.frame, cmap[raw.cls] if len(raw.cls) else raw.cls


def frozen_block(card, *, model_sha256: str, manifest_sha256: str, metrics: dict) -> dict:
    """Compare a card's frozen ``evaluation`` with the reproduced metrics (see docs/detector.md)."""
    model_ok = card.sha256 == model_sha256
    manifest_ok = card.eval_manifest_sha256 == manifest_sha256
    block: dict = {"model_sha256_matches": model_ok, "manifest_sha256_matches": manifest_ok}
    if not (model_ok and manifest_ok):
        block.update(reproduced=False, differing=[], comparable=False)
        return block
    differing, compared = compare_frozen(card.evaluation or {}, metrics)
    block.update(comparable=True, compared=compared, reproduced=not differing, differing=differing)
    return block


def frames_rows(model: str, scene: Scene, s, op) -> list[tuple]:
    n = len(scene.frames)
    tp = np.bincount(s.frame[op.tp], minlength=n)
    fp = np.bincount(s.frame[op.fp], minlength=n)
    fn = np.bincount(scene.label_frame[op.fn], minlength=n)
    return [(scene.frames[i], scene.split[i], scene.session[i], scene.zoom[i], model, int(tp[i]), int(fp[i]), int(fn[i]))
            for i in range(n)]


def labels_rows(model: str, scene: Scene, op) -> list[tuple]:
    keep = np.flatnonzero(~scene.label_crowd)
    return [(scene.frames[scene.label_frame[k]], scene.split[scene.label_frame[k]], int(scene.label_index[k]),
             scene.classes[scene.label_class[k]], model, int(op.found[k])) for k in keep]


def csv_text(header: str, rows: list[tuple]) -> str:
    def cell(v) -> str:
        s = str(v)
        return '"' + s.replace('"', '""') + '"' if any(ch in s for ch in ',"\n') else s
    return header + "\n" + "".join(",".join(cell(v) for v in r) + "\n" for r in rows)


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


def score_model(model: str, *, args, det_params: DetectorParams, match: MatchParams,
                thresholds: dict[str, float]) -> dict:
    """Everything one model contributes: metrics, outcome rows, plot data files, COCO results, and
    the inputs of its PNG figures (:class:`candor.detection.scoring.plots.FigureInputs`)."""
    from candor.detection.scoring import plots as dp
    from candor.detection.config import check_critical, threshold_vector
    from candor.common.manifest import load_manifest
    from candor.detection.model_card import load_card

    data = Path(args.data)
    card_file = Path(args.models) / f"{model}.yaml"
    card = load_card(card_file)
    raw = read_raw(Path(args.detections) / f"{model}.jsonl")
    where = str(Path(args.detections) / f"{model}.jsonl")
    if raw.header.get("onnx_sha256") != card.sha256:
        raise fail(where, "detections were made by another model file", expected=card.sha256,
                   got=raw.header.get("onnx_sha256"), hint="dvc repro detect")
    if raw.header.get("floor") != det_params.floor:
        raise fail(where, "detections were made at another detector.floor", expected=det_params.floor,
                   got=raw.header.get("floor"), hint="dvc repro detect")
    if card.classes and list(card.classes) != list(raw.header["classes"]):
        raise fail(where, "classes differ from the model card", expected=card.classes, got=raw.header["classes"])
    scene, dframe, dcls = build_scene(data=data, raw=raw, input_hw=tuple(raw.header["input_size"]))
    check_critical(match.critical, classes=scene.classes)
    thr = threshold_vector(thresholds, classes=scene.classes, floor=det_params.floor)
    s = score_detections(scene, frame=dframe, cls=dcls, boxes=raw.boxes, score=raw.score,
                         nms_iou=det_params.nms_iou, match_iou=match.iou)
    op = operating_point(s, thresholds=thr)
    wrong = wrong_targets(s, op, classes=[scene.classes.index(c) for c in match.critical])
    kw = dict(min_support=match.min_support, critical=match.critical, band_edges=match.bands, wrong=wrong)
    metrics = {"all": summarize(s, op, frame_mask=np.ones(len(scene.frames), bool), **kw)}
    for split in SPLITS:
        metrics[split] = summarize(s, op, frame_mask=scene.split == split, **kw)
    if card.evaluation:
        manifest_sha = load_manifest(data / "manifest.csv").sha256
        metrics["frozen"] = frozen_block(card, model_sha256=raw.header["onnx_sha256"],
                                         manifest_sha256=manifest_sha, metrics=metrics)

    grid = threshold_grid(det_params.floor)
    cv = curves(s, thresholds=grid, frame_mask=np.ones(len(scene.frames), bool))
    mat = confusion(s, op)
    thr_by_name = {c: float(thr[i]) for i, c in enumerate(scene.classes)}
    m = dp.safe_name(model)
    plots: dict[str, bytes] = {}
    for name, curve in cv.items():
        plots[f"pr/{m}/{dp.safe_name(name)}.csv"] = dp.pr_csv(curve).encode()
        plots[f"f1/{m}/{dp.safe_name(name)}.csv"] = dp.f1_csv(curve).encode()
    plots[f"confusion/{m}.csv"] = dp.confusion_csv(mat, scene.classes).encode()
    plots[f"per_class/{m}.csv"] = dp.per_class_csv(metrics["all"]["per_class"]).encode()

    served = np.flatnonzero(op.kept)
    image_ids, cat_ids = coco_ids(data, tuple(scene.frames.tolist()), scene.classes)
    table = DetectionTable(classes=scene.classes, frame=s.frame[served], cls=s.cls[served],
                           boxes=s.boxes[served], score=s.score[served])
    coco = coco_results(table, frame_ids=image_ids, category_ids=cat_ids)
    log.info("%s: micro P %s R %s F1 %s over %d frames (test F1 %s)", model, metrics["all"]["micro"]["precision"],
             metrics["all"]["micro"]["recall"], metrics["all"]["micro"]["f1"], len(scene.frames),
             metrics["test"]["micro"]["f1"])
    figure = dp.FigureInputs(model=model, curves=cv, matrix=mat, classes=scene.classes,
                             per_class=metrics["all"]["per_class"], thresholds=thr_by_name,
                             min_support=match.min_support)
    return {"metrics": metrics, "frames": frames_rows(model, scene, s, op), "labels": labels_rows(model, scene, op),
            "plots": plots, "coco": coco, "figure": figure}


def replace_dir_files(root: Path, files: dict[str, bytes], *, clean: bool) -> None:
    """Write ``files`` (relative path -> bytes) under ``root`` atomically; drop other files when ``clean``."""
    for rel, blob in files.items():
        with atomic_path(root / rel) as tmp:
            tmp.write_bytes(blob)
    if clean and root.is_dir():
        wanted = {(root / r).resolve() for r in files}
        for p in sorted(root.rglob("*"), reverse=True):
            if p.is_file() and p.resolve() not in wanted:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()


def print_summary(results: dict[str, dict]) -> None:
    """The one deliberate print: micro P/R/F1 per model and split."""
    print(f"{'model':<14}{'split':<6}{'frames':>7}{'P':>9}{'R':>9}{'F1':>9}{'TP':>7}{'FP':>7}{'FN':>7}{'FP/fr':>8}")
    for model, res in results.items():
        for split in ("all", *SPLITS):
            m = res["metrics"][split]["micro"]
            f = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
            print(f"{model:<14}{split:<6}{m['frames']:>7}{f(m['precision']):>9}{f(m['recall']):>9}{f(m['f1']):>9}"
                  f"{m['tp']:>7}{m['fp']:>7}{m['fn']:>7}{f(m['fp_per_frame']):>8}")


def read_params(path: str) -> tuple[DetectorParams, MatchParams, dict[str, float]]:
    """The score stage's sections of a params file: ``detector``, ``match`` and the raw ``thresholds``."""
    from candor.detection.config import DetectorParams, MatchParams, load_thresholds
    from candor.common.params import section

    return section(DetectorParams, "detector", path=path), section(MatchParams, "match", path=path), \
        load_thresholds(path)


def cmd_pipeline(args: argparse.Namespace) -> int:
    det_params, match, thresholds = read_params(args.params)
    if not det_params.models:
        raise fail(f"{args.params}:detector.models", "no models to score", expected="a list of model card names")
    results = {m: score_model(m, args=args, det_params=det_params, match=match, thresholds=thresholds)
               for m in det_params.models}
    # everything is computed: now write (nothing is written when anything above failed)
    metrics_dir = Path(args.metrics)
    for model, res in results.items():
        write_json(metrics_dir / f"{model}.json", res["metrics"])
    frames = sorted(r for res in results.values() for r in res["frames"])
    labels = sorted(r for res in results.values() for r in res["labels"])
    outcomes = Path(args.outcomes)
    write_text(outcomes / "detection-frames.csv", csv_text("frame,split,session,zoom,model,tp,fp,fn", frames))
    write_text(outcomes / "detection-labels.csv", csv_text("frame,split,label,class,model,found", labels))
    plots = {rel: blob for res in results.values() for rel, blob in res["plots"].items()}
    replace_dir_files(Path(args.plots), plots, clean=True)
    coco_dir = Path(args.coco_out)
    for model, res in results.items():
        write_json(coco_dir / f"{model}.json", res["coco"])
    print_summary(results)
    return 0


def cmd_coco(args: argparse.Namespace) -> int:
    if not args.out or not args.coco_results:
        raise fail("command line", "standalone COCO mode needs --coco-gt, --coco-results and --out")
    t0 = time.perf_counter()
    gt, img_map, cat_map = read_coco(Path(args.coco_gt))
    det = read_coco_results(Path(args.coco_results), image_map=img_map, category_map=cat_map, classes=gt.classes)
    t1 = time.perf_counter()
    if args.params is not None:
        from candor.detection.config import check_critical, threshold_vector

        det_params, match, thresholds = read_params(args.params)
        thr = threshold_vector(thresholds, classes=gt.classes, floor=det_params.floor)
        check_critical(match.critical, classes=gt.classes)
        nms_iou: float | None = det_params.nms_iou
        iou, min_support, critical, bands = match.iou, match.min_support, match.critical, match.bands
    else:  # every detection counts; the match section's defaults
        thr = np.full(len(gt.classes), -np.inf)
        nms_iou = None
        iou, min_support, critical, bands = MATCH_IOU, MIN_SUPPORT, [], list(BAND_EDGES)
    n = len(gt.frames)
    scene = Scene(classes=gt.classes, frames=np.array(gt.frames, dtype=str), split=np.full(n, "all"),
                  session=np.full(n, ""), zoom=np.full(n, ""), scale=np.ones(n),
                  label_frame=gt.label_frame, label_index=gt.label_index, label_class=gt.label_class,
                  label_boxes=gt.label_boxes, label_crowd=gt.label_crowd)
    s = score_detections(scene, frame=det.frame, cls=det.cls, boxes=det.boxes, score=det.score,
                         nms_iou=nms_iou, match_iou=iou)
    op = operating_point(s, thresholds=thr)
    block = summarize(s, op, frame_mask=np.ones(n, bool), min_support=min_support, critical=critical,
                      band_edges=bands)
    t2 = time.perf_counter()
    write_json(args.out, {"all": block})
    m = block["micro"]
    print(f"{args.coco_results}: P {m['precision']} R {m['recall']} F1 {m['f1']} "
          f"TP {m['tp']} FP {m['fp']} FN {m['fn']} over {m['frames']} images -> {args.out}")
    if args.timings:  # machine-specific: printed only, never written to the metrics file
        print(json.dumps({"load_s": round(t1 - t0, 4), "score_s": round(t2 - t1, 4)}))
    return 0


def cmd_detections(args: argparse.Namespace) -> int:
    return cmd_coco(args) if args.coco_gt else cmd_pipeline(args)


def cmd_suggest(args: argparse.Namespace) -> int:
    if args.split != "dev":
        raise fail("--split", "thresholds are tuned on dev frames only (seed 002: never tune on the final-test "
                              "sessions)", expected="dev", got=args.split)
    from candor.detection.config import threshold_vector

    det_params, match, current = read_params(args.params)
    data = Path(args.data)
    info = read_frames(data / "frames.csv")
    dev = tuple(f for f, sp in zip(info.frames, info.split) if sp == "dev")
    if not dev:
        raise fail(str(data / "frames.csv"), "no dev frames to tune on", expected="frames with split=dev")
    raw = read_raw(Path(args.detections) / f"{args.model}.jsonl", keep_frames=set(dev))
    if raw.header.get("floor") != det_params.floor:
        raise fail(args.model, "detections were made at another detector.floor", hint="dvc repro detect")
    scene, dframe, dcls = build_scene(data=data, raw=raw, input_hw=tuple(raw.header["input_size"]), frames=dev)
    assert set(scene.split.tolist()) == {"dev"}  # invariant: only dev frames were read
    cur = threshold_vector(current, classes=scene.classes, floor=det_params.floor)
    s = score_detections(scene, frame=dframe, cls=dcls, boxes=raw.boxes, score=raw.score,
                         nms_iou=det_params.nms_iou, match_iou=match.iou)
    cv = curves(s, thresholds=threshold_grid(det_params.floor), frame_mask=np.ones(len(dev), bool))
    support = {c: int(((scene.label_class == i) & ~scene.label_crowd).sum()) for i, c in enumerate(scene.classes)}
    best = best_thresholds(cv, support=support, min_support=match.min_support, default=float(current["default"]))
    print(f"suggested thresholds for {args.model} from {len(dev)} dev frames (best F1 per class; "
          f"support < {match.min_support} keeps the default {current['default']}):")
    print(f"{'class':<16}{'support':>8}{'current':>9}{'suggest':>9}")
    changes = []
    for i, c in enumerate(scene.classes):
        print(f"{c:<16}{support[c]:>8}{cur[i]:>9.2f}{best[c]:>9.2f}")
        if abs(best[c] - cur[i]) > 1e-9:
            changes.append(f"-S {shlex.quote(f'thresholds.{c}={best[c]:g}')}")
    print("dvc exp run " + " ".join(changes) if changes else "no change: the current thresholds are the suggestion")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stages.score", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("detections", help="score detections (pipeline or standalone COCO mode)")
    d.add_argument("--params", default=None, help="params file (pipeline default params.yaml; COCO mode: optional)")
    d.add_argument("--detections", default="build/detections", help="folder of <model>.jsonl raw boxes")
    d.add_argument("--models", default="models", help="folder of model cards")
    d.add_argument("--data", default="data/detector", help="data set folder")
    d.add_argument("--metrics", default="metrics/detection", help="metrics folder (<model>.json)")
    d.add_argument("--outcomes", default="metrics/outcomes", help="outcome tables folder")
    d.add_argument("--plots", default="plots/detection", help="plots folder (owned: stale files removed)")
    d.add_argument("--coco-out", default="build/coco-results", help="COCO results JSON of the served detections")
    d.add_argument("--coco-gt", help="standalone mode: COCO ground truth JSON")
    d.add_argument("--coco-results", help="standalone mode: COCO results JSON")
    d.add_argument("--out", help="standalone mode: output metrics JSON")
    d.add_argument("--timings", action="store_true",
                   help="standalone mode: print one JSON line {load_s, score_s} after the summary (load: reading and "
                        "validating both files into arrays; score: thresholds, NMS, matching, per-class, bands)")
    d.set_defaults(func=cmd_detections)
    s = sub.add_parser("suggest-thresholds", help="per-class thresholds of best F1 on dev frames")
    s.add_argument("--model", required=True)
    s.add_argument("--split", default="dev", help="only dev is accepted (test frames are never read)")
    s.add_argument("--params", default=None)
    s.add_argument("--detections", default="build/detections")
    s.add_argument("--data", default="data/detector")
    s.set_defaults(func=cmd_suggest)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.params is None and not getattr(args, "coco_gt", None):  # the COCO mode reads params only when given
        from candor.common.params import DEFAULT_PARAMS

        args.params = str(DEFAULT_PARAMS)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
