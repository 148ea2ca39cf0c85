"""latency stage (a diagnostic, per model): decoded image -> postprocessed boxes, timed.

    python -m stages.latency --model demo-v1 [--models models] [--data data/detector]
                             [--verified build/verified] --out metrics/latency/demo-v1.json

Method (seed 002): every frame of ``<data>/frames.csv`` is decoded into memory
first (JPEG decoding is excluded), then ``latency.warmup`` warm-up calls run
(default 3), then **one timed call per image**, in frame order. Two spans are
timed with ``time.perf_counter`` on each call:

- ``model_call``: ``session.run`` alone, on the letterboxed tensor;
- ``end_to_end``: decoded image -> postprocessed boxes, i.e. letterbox, run,
  decode, map to original pixels, per-class thresholds (``thresholds``), and
  same-class NMS at ``detector.nms_iou``: the served path.

Reported per span: ``median_ms`` and ``p95_ms`` (numpy's default linear
interpolation), ``min_ms``, ``max_ms`` and ``n``; plus the environment (OS,
CPU model, core count, Python, onnxruntime, numpy and Pillow versions,
execution provider, onnxruntime thread settings).

These figures are machine-specific: this stage lives in its own pipeline file
(``diagnostics/dvc.yaml``, run with ``make latency``), outside the
byte-identical contract of ``make repro``, and nothing of it is committed or
pushed. Compare them only with a candidate run on the same host, provider, inputs
and scope. The release gate reads ``end_to_end.p95_ms`` when present.
"""
from __future__ import annotations

import logging
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from candor.common.atomic import write_json
from candor.detection.scoring.boxes import nms
from candor.detection.inference.decode import decode
from candor.detection.config import DetectorParams, load_thresholds, threshold_vector
from stages.detect import model_parser, open_inputs
from candor.common.errors import fail, run_main
from candor.common.images import load_frame
from candor.detection.inference.letterbox import Letterboxer, plan, to_original
from candor.detection.inference.onnx_model import LoadedModel
from candor.common.params import section

log = logging.getLogger("candor.latency")

LABEL = ("diagnostic: machine-specific latency; compare only with a candidate run on the same host, "
         "provider, inputs and scope (seed 002)")


class LatencyParams(BaseModel):
    """``latency`` section of params.yaml."""

    model_config = ConfigDict(extra="forbid")
    warmup: int = Field(default=3, ge=0)


@dataclass(frozen=True)
class Served:
    """Boxes after the served postprocess: ``boxes`` (K, 4) xyxy original px, ``scores``, ``classes``."""

    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray


def serve(model: LoadedModel, image: Image.Image, *, thresholds: np.ndarray, nms_iou: float,
          letterbox: Letterboxer, clock=time.perf_counter) -> tuple[Served, float]:
    """The served path on one decoded image; returns the boxes and the model-call seconds.

    Letterbox (with ``letterbox``, the detect stage's reused :class:`~candor.detection.inference.letterbox.Letterboxer`),
    run, decode, map to original pixels, keep ``score >= thresholds[class]``, then same-class
    NMS at ``nms_iou`` (suppress when IoU > nms_iou).
    """
    w, h = image.size
    lb = plan(w, h, input_w=model.input_w, input_h=model.input_h)
    tensor = letterbox(image, lb)
    t0 = clock()
    out = model.run(tensor)
    model_s = clock() - t0
    cand = decode(out, layout=model.layout, num_classes=len(model.classes), floor=float(thresholds.min()))
    keep = cand.scores >= thresholds[cand.classes]
    boxes, scores, classes = to_original(cand.boxes[keep], lb), cand.scores[keep], cand.classes[keep]
    kept = nms(classes, boxes, scores, iou=nms_iou)
    return Served(boxes[kept], scores[kept], classes[kept]), model_s


def summary(ms: Sequence[float]) -> dict:
    """median, p95 (linear interpolation), min, max in ms, and n."""
    a = np.asarray(ms, dtype=np.float64)
    return {"n": int(a.size), "median_ms": round(float(np.median(a)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3),
            "min_ms": round(float(a.min()), 3), "max_ms": round(float(a.max()), 3)}


def time_model(model: LoadedModel, images: list[Image.Image], *, thresholds: np.ndarray, nms_iou: float,
               warmup: int) -> dict:
    """Warm up, then one timed call per image; the two spans' summaries."""
    letterbox = Letterboxer(input_w=model.input_w, input_h=model.input_h)
    for i in range(warmup):
        serve(model, images[i % len(images)], thresholds=thresholds, nms_iou=nms_iou, letterbox=letterbox)
    e2e, call = [], []
    for image in images:
        t0 = time.perf_counter()
        _, model_s = serve(model, image, thresholds=thresholds, nms_iou=nms_iou, letterbox=letterbox)
        e2e.append(1000 * (time.perf_counter() - t0))
        call.append(1000 * model_s)
    return {"model_call": summary(call), "end_to_end": summary(e2e)}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment(model: LoadedModel) -> dict:
    import onnxruntime as ort
    import PIL

    opts = model.session.get_session_options()
    return {
        "os": platform.platform(), "machine": platform.machine(), "cpu": cpu_model(), "cores": os.cpu_count(),
        "python": platform.python_version(), "onnxruntime": ort.__version__, "numpy": np.__version__,
        "pillow": PIL.__version__, "providers": model.session.get_providers(),
        "threads": {"intra_op_num_threads": opts.intra_op_num_threads,
                    "inter_op_num_threads": opts.inter_op_num_threads,
                    "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")},
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = model_parser("python -m stages.latency", __doc__,
                        out_help="output JSON (a diagnostic, not committed)").parse_args(argv)
    det = section(DetectorParams, "detector", path=args.params)
    lat = section(LatencyParams, "latency", path=args.params)
    info, paths, model = open_inputs(args, det)
    thresholds = threshold_vector(load_thresholds(args.params), classes=model.classes, floor=det.floor)
    images = [load_frame(paths[frame]).convert("RGB") for frame in info.frames]
    if not images:
        raise fail(str(Path(args.data) / "frames.csv"), "no frames to time")
    log.info("%s: %d decoded images, %d warm-up calls", model.name, len(images), lat.warmup)
    timed = time_model(model, images, thresholds=thresholds, nms_iou=det.nms_iou, warmup=lat.warmup)
    doc = {"diagnostic": LABEL, "model": model.name, "onnx_sha256": model.sha256, "frames": len(images),
           "warmup": lat.warmup, "scope": "decoded image -> postprocessed boxes (letterbox, run, decode, "
           "thresholds, same-class NMS); JPEG decoding excluded", **timed, "environment": environment(model)}
    write_json(args.out, doc)
    print(f"{model.name}: end-to-end median {timed['end_to_end']['median_ms']} ms, "
          f"p95 {timed['end_to_end']['p95_ms']} ms; model call median {timed['model_call']['median_ms']} ms "
          f"({len(images)} images, {lat.warmup} warm-up)")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
