"""detect stage: run one ONNX detector over every frame and store its raw boxes.

    python -m stages.detect --model demo-v1 [--models models] [--data data/detector]
                            [--verified build/verified] --out build/detections/demo-v1.jsonl

Reads ``detector.floor`` and ``detector.providers`` from ``params.yaml`` (and nothing else,
so threshold and NMS changes never rerun inference). Every frame of ``<data>/frames.csv``
(sorted by frame id) is run, streamed one at a time, by
:func:`candor.detection.inference.runner.iter_lines` (letterbox, run, decode, keep
candidates with score >= floor, map back to original-image pixels; no per-class threshold
and no NMS: those are scoring's).

Output: the raw-detections file (JSON Lines, deterministic bytes), whose format, rounding
and sort order are defined in :mod:`candor.detection.inference.detections_file`.

The model's bytes are hashed and checked against its card and the fetch stage's verified
record before onnxruntime loads them; the data manifest must match
``build/verified/data-<set>.json``. Bad input exits 2 and writes nothing.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

from candor.common.atomic import atomic_open
from candor.common.errors import run_main
from candor.common.params import section
from candor.detection.config import DetectorParams
from candor.detection.inference.runner import iter_lines, model_parser, open_inputs

log = logging.getLogger("candor.detect")


def main(argv: Sequence[str] | None = None) -> int:
    args = model_parser("python -m stages.detect", __doc__, out_help="output .jsonl of raw boxes").parse_args(argv)
    params = section(DetectorParams, "detector", path=args.params)
    info, images, model = open_inputs(model=args.model, models=args.models, data=args.data,
                                      verified=args.verified, providers=params.providers)
    log.info("%s: %s layout, input %dx%d, %d classes, %d frames, floor %g", model.name, model.layout,
             model.input_w, model.input_h, len(model.classes), len(info.frames), params.floor)
    with atomic_open(args.out) as fh:
        for line in iter_lines(model, info.frames, images, floor=params.floor):
            fh.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
