"""detect stage: run every ONNX detector of a detection set over its frames and store their raw boxes.

    python -m stages.detect --set detector [--models models] [--data data/detector]
                            [--verified build/verified] --out build/detections/detector

Reads ``detector.sets`` (the set's models), ``detector.floor`` and ``detector.providers`` from
``params.yaml`` (and nothing else, so threshold and NMS changes never rerun inference). For each
model of the set, every frame of ``<data>/frames.csv`` (sorted by frame id) is run, streamed one
at a time, by :func:`candor.detection.inference.runner.iter_lines` (letterbox, run, decode, keep
candidates with score >= floor, map back to original-image pixels; no per-class threshold
and no NMS: those are scoring's).

Output: ``<out>/<model>.jsonl`` per model of the set (the raw-detections file, JSON Lines,
deterministic bytes), whose format, rounding and sort order are defined in
:mod:`candor.detection.inference.detections_file`; other ``*.jsonl`` files in ``<out>`` are
removed. Every file is written beside its final path and moved into place only when every model
ran, so a failure leaves the folder as it was.

The model's bytes are hashed and checked against its card, and the card and the data manifest
against the fetch stage's record of the set (``build/verified/detection-<set>.json``), before
onnxruntime loads them. Bad input exits 2 and writes nothing.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from candor.common.atomic import atomic_open
from candor.common.errors import run_main
from candor.common.params import section
from candor.detection.config import DetectorParams
from candor.detection.inference.runner import iter_lines, open_inputs, set_parser
from candor.detection.sets import set_folders

log = logging.getLogger("candor.detect")


def main(argv: Sequence[str] | None = None) -> int:
    args = set_parser("python -m stages.detect", __doc__, out_help="output folder: <model>.jsonl of raw boxes"
                      ).parse_args(argv)
    params = section(DetectorParams, "detector", path=args.params)
    dset, data, _ = set_folders(args, params, where=args.params)
    out = Path(args.out)
    with ExitStack() as files:            # every file moves into place only when all models ran
        for name in dset.models:
            info, images, model = open_inputs(model=name, models=args.models, data=data,
                                              verified=args.verified, providers=params.providers)
            log.info("%s on %s: %s layout, input %dx%d, %d classes, %d frames, floor %g", model.name, dset.name,
                     model.layout, model.input_w, model.input_h, len(model.classes), len(info.frames), params.floor)
            fh = files.enter_context(atomic_open(out / f"{name}.jsonl"))
            for line in iter_lines(model, info.frames, images, floor=params.floor):
                fh.write(line + "\n")
    for stale in set(out.glob("*.jsonl")) - {out / f"{m}.jsonl" for m in dset.models}:
        stale.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
