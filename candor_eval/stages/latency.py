"""latency stage (a diagnostic, per model of a detection set): decoded image -> postprocessed boxes, timed.

    candor latency --set detector [--models models] [--data data/detector]
                             [--verified build/verified] --out metrics/latency/detector

For each model of the set (``detector.sets``), written to ``<out>/<model>.json``: every frame of
``<data>/frames.csv`` is decoded into memory, then ``latency.warmup``
warm-up calls run (default 3), then one timed call per image, in frame order, on the served
path: the model's served thresholds (``thresholds`` with its ``thresholds_by_model`` keys),
the model's served NMS (``detector.nms_iou``, ``max_det``, ``nms_agnostic``, ``nms_by_model``). The method,
the two timed spans and the summary fields are defined in :mod:`candor_eval.detection.latency`.

These figures are machine-specific: this command runs outside the pipeline's byte-identical
contract (by hand, or from a pipeline file of its own such as ``diagnostics/dvc.yaml``), and
nothing of it is committed or pushed. Compare them only with a candidate run on the same host,
provider, inputs and scope: every model of the set is timed in one run (``run``: its start time
and the models, the same in each file), and the release gate compares the candidate's
``end_to_end.p95_ms`` with the reference's of the same run when given (``candor gate run
--latency metrics/latency``; ``docs/stats.md``).

Exit codes: 0 ok; 2 bad input or configuration (the card, model or frame named; nothing written).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from candor_eval.common.atomic import write_json
from candor_eval.common.errors import fail, run_main
from candor_eval.common.images import load_frame
from candor_eval.common.params import section
from candor_eval.detection.config import DetectorParams, ThresholdParams
from candor_eval.detection.inference.runner import open_inputs
from candor_eval.detection.latency import LABEL, SCOPE, LatencyParams, environment, time_model
from candor_eval.detection.served import Served
from candor_eval.stages.cli_detection import inference_parser, read_threshold_params, set_of_args

log = logging.getLogger("candor.latency")


def time_one(name: str, *, data: Path, models: Path, verified: Path, det: DetectorParams, lat: LatencyParams,
             threshold_params: ThresholdParams) -> dict:
    """The latency diagnostic of model ``name`` (card in ``models``, the fetch stage's records in
    ``verified``) on the set's frames in ``data`` (module docstring)."""
    info, paths, model = open_inputs(model=name, models=models, data=data, verified=verified,
                                     providers=det.providers, params_file=threshold_params.where)
    # the served thresholds per output class. Without a class_map the card's classes are the data's, so
    # every name is checked here; with one (renamed outputs, maybe a subset of the data's classes) names
    # are by data class and score-detection checks them against the data set
    served, cmap = threshold_params, model.card.class_map
    names = [cmap.get(c, c) for c in model.classes] if cmap else list(model.classes)
    known = sorted(set(names) | set(served.served(name)) - {"default"}) if cmap else names
    class_thresholds = served.class_thresholds(name, classes=names, floor=det.floor, known=known)
    images = [load_frame(paths[frame], exif=model.card.preprocess.exif).convert("RGB") for frame in info.frames]
    if not images:
        raise fail(str(data / "frames.csv"), "no frames to time")
    log.info("%s: %d decoded images, %d warm-up calls", model.name, len(images), lat.warmup)
    timed = time_model(model, images, served=Served(class_thresholds, det.served_nms(name)), warmup=lat.warmup)
    print(f"{model.name}: end-to-end median {timed['end_to_end']['median_ms']} ms, "
          f"p95 {timed['end_to_end']['p95_ms']} ms; model call median {timed['model_call']['median_ms']} ms "
          f"({len(images)} images, {lat.warmup} warm-up)")
    return {"diagnostic": LABEL, "model": model.name, "onnx_sha256": model.sha256, "frames": len(images),
            "warmup": lat.warmup, "scope": SCOPE, **timed, "environment": environment(model)}


def main(argv: Sequence[str] | None = None) -> int:
    args = inference_parser("candor latency", __doc__,
                            out_help="output folder of <model>.json (a diagnostic, not committed)").parse_args(argv)
    det = section(DetectorParams, "detector", path=args.params)
    lat = section(LatencyParams, "latency", path=args.params)
    threshold_params = read_threshold_params(args.params)
    threshold_params.check_models(det.models)
    dset, data, _ = set_of_args(args, det)
    run = {"started_utc": datetime.now(UTC).isoformat(timespec="seconds"), "models": list(dset.models)}
    docs = {name: {"run": run} | time_one(name, data=data, models=Path(args.models), verified=Path(args.verified),
                                          det=det, lat=lat, threshold_params=threshold_params)
            for name in dset.models}
    for name, doc in docs.items():
        write_json(Path(args.out) / f"{name}.json", doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
