"""detect stage: run every ONNX detector of a detection set over its frames and store their raw boxes.

    candor detect --set detector [--models models] [--data data/detector]
                            [--verified build/verified] --out build/detections/detector

Reads ``detector.sets`` (the set's models), ``detector.floor``, ``detector.providers`` and
``detector.executor`` from the params file (``--params``; and nothing else, so threshold and NMS
changes never rerun inference). For each model of the set, every frame of ``<data>/frames.csv`` (sorted by frame
id) is run (letterbox, run, decode, keep candidates with score >= floor, map back to
original-image pixels; no per-class threshold and no NMS: those are scoring's):

- ``executor: local``: in this process, streamed one frame at a time, by
  :func:`candor_eval.detection.inference.runner.iter_lines`;
- ``executor: ray``: in shards on the Ray cluster at ``$RAY_ADDRESS`` (a local one is started when it
  is unset), each worker opening the hash-checked model itself, by
  :func:`candor_eval.detection.inference.ray_executor.iter_cluster_lines`; the same bytes as ``local``
  (``docs/scale.md``). Needs ``requirements-cluster.txt``. If the cluster loses a shard beyond
  Ray's retries, the stage exits 1 and writes nothing.

Output: ``<out>/<model>.jsonl`` per model of the set (the raw-detections file, JSON Lines,
deterministic bytes), whose format, rounding and sort order are defined in
:mod:`candor_eval.detection.detections_file`; every other file in ``<out>`` (the folder is the
stage's own) is removed (:func:`candor_eval.common.atomic.remove_others`). Every file is written
beside its final path and moved into place only when every model ran, so a failure leaves the
folder as it was.

The model's bytes are hashed and checked against its card, and the card and the data manifest
against the fetch stage's record of the set (``build/verified/detection-<set>.json``), before
onnxruntime loads them. Bad input exits 2 and writes nothing.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from candor_eval.common.atomic import atomic_open, remove_others
from candor_eval.common.errors import EXIT_CALLS_FAILED, run_main
from candor_eval.common.params import section
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.inference import ray_executor
from candor_eval.detection.inference.runner import iter_lines, open_inputs
from candor_eval.stages.cli_detection import inference_parser, set_of_args

log = logging.getLogger("candor.detect")


def main(argv: Sequence[str] | None = None) -> int:
    args = inference_parser("candor detect", __doc__,
                            out_help="output folder: <model>.jsonl of raw boxes").parse_args(argv)
    params = section(DetectorParams, "detector", path=args.params)
    dset, data, _ = set_of_args(args, params)
    out = Path(args.out)
    try:
        with ExitStack() as files:            # every file moves into place only when all models ran
            if params.executor == "ray":
                files.enter_context(ray_executor.connected(params_file=args.params))
            for name in dset.models:
                info, images, model = open_inputs(model=name, models=args.models, data=data,
                                                  verified=args.verified, providers=params.providers,
                                                  params_file=args.params)
                log.info("%s on %s: %s layout, input %dx%d, %d classes, %d frames, floor %g, executor %s",
                         model.name, dset.name, model.layout, model.input_w, model.input_h, len(model.classes),
                         len(info.frames), params.floor, params.executor)
                fh = files.enter_context(atomic_open(out / f"{name}.jsonl"))
                lines = (ray_executor.iter_cluster_lines(model, info.frames, images, floor=params.floor,
                                            card=Path(args.models) / f"{name}.yaml",
                                            verified=Path(args.verified) / f"model-{name}.json",
                                            providers=params.providers, params_file=args.params)
                         if params.executor == "ray" else iter_lines(model, info.frames, images, floor=params.floor))
                for line in lines:
                    fh.write(line + "\n")
    except ray_executor.ClusterFailed as err:
        log.error("%s; nothing written", err)
        return EXIT_CALLS_FAILED
    remove_others(out, keep=[f"{m}.jsonl" for m in dset.models])
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
