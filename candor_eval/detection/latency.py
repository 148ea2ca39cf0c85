"""Latency of the served path: decoded image -> postprocessed boxes, timed per call.

Method: the images are decoded into memory beforehand (JPEG decoding is excluded), then
``warmup`` warm-up calls run, then **one timed call per image**, in order. Two spans are
timed with ``time.perf_counter`` on each call:

- ``model_call``: ``session.run`` alone, on the letterboxed tensor;
- ``end_to_end``: decoded image -> postprocessed boxes (:func:`serve`): letterbox, run,
  decode, map to original pixels, per-class thresholds, and same-class NMS: the served path.

Reported per span (:func:`summary`): ``median_ms`` and ``p95_ms`` (numpy's default linear
interpolation), ``min_ms``, ``max_ms`` (3 decimals) and ``n``; plus the environment
(:func:`environment`: OS, CPU model, core count, Python, onnxruntime, numpy and Pillow
versions, execution provider, onnxruntime thread settings, host name).

Two diagnostics are comparable only when they were measured in one run of ``candor latency``
(its ``run``: start time and the models timed together) on the same environment, scope, frames
and warm-up: the release gate compares candidate with reference only then
(:func:`candor_eval.review.gate.incomparable`; docs/stats.md, ``inference_latency_no_increase``).

The figures are machine-specific: compare them only with a candidate run on the same host,
provider, inputs and scope (``docs/stats.md``, the release gate's ``inference_latency_no_increase``).
Serving needs the scoring kernel's NMS (:func:`candor_eval.detection.scoring.boxes.nms`), so
this module sits beside, not inside, the inference sub-package.
"""
from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from candor_eval.common.params import Integer
from candor_eval.detection.inference.decode import decode
from candor_eval.detection.inference.letterbox import Letterboxer, plan, to_original
from candor_eval.detection.inference.onnx_model import LoadedModel
from candor_eval.detection.scoring.boxes import nms as greedy_nms
from candor_eval.detection.scoring.boxes import rank_order
from candor_eval.detection.served import Served

LABEL = ("diagnostic: machine-specific latency; compare only with a candidate run on the same host, "
         "provider, inputs and scope (docs/stats.md, inference_latency_no_increase)")
SCOPE = ("decoded image -> postprocessed boxes (letterbox, run, decode, thresholds, same-class NMS); "
         "JPEG decoding excluded")


class LatencyParams(BaseModel):
    """``latency`` section of params.yaml: ``warmup``, untimed calls before the timed ones."""

    model_config = ConfigDict(extra="forbid")
    warmup: Integer = Field(default=3, ge=0)


@dataclass(frozen=True)
class ServedBoxes:
    """Boxes after the served postprocess: ``boxes`` (K, 4) xyxy original px, ``scores``, ``classes``."""

    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray


def serve(model: LoadedModel, image: Image.Image, *, served: Served, letterbox: Letterboxer,
          clock: Callable[[], float] = time.perf_counter) -> tuple[ServedBoxes, float]:
    """The served path on one decoded image; returns the boxes and the model-call seconds.

    Letterbox (with ``letterbox``, a reused :class:`~candor_eval.detection.inference.letterbox.Letterboxer`),
    run, decode, map to original pixels, keep what ``served`` keeps
    (:meth:`~candor_eval.detection.served.Served.keeps`: ``score >= threshold`` of its class), then the
    model's served NMS ``served.nms`` (:class:`~candor_eval.detection.served.ServedNms`: within each class
    or across them, suppress when IoU > ``nms.iou``; then at most ``nms.max_det`` boxes, the highest-scored).
    """
    w, h = image.size
    lb = plan(w, h, input_w=model.input_w, input_h=model.input_h)
    tensor = letterbox(image, lb)
    t0 = clock()
    out = model.run(tensor)
    model_s = clock() - t0
    nms = served.nms
    cand = decode(out, layout=model.layout, num_classes=len(model.classes), floor=float(served.thresholds.min()))
    keep = served.keeps(cand.scores, cand.classes)
    boxes, scores, classes = to_original(cand.boxes[keep], lb), cand.scores[keep], cand.classes[keep]
    kept = np.arange(len(scores)) if nms.iou is None else np.flatnonzero(
        greedy_nms(np.zeros_like(classes) if nms.agnostic else classes, boxes, scores, iou=nms.iou))
    if nms.max_det is not None:
        kept = kept[rank_order(np.zeros(len(kept), np.int64), scores[kept])[:nms.max_det]]
    return ServedBoxes(boxes[kept], scores[kept], classes[kept]), model_s


def summary(ms: Sequence[float]) -> dict:
    """``n``, ``median_ms``, ``p95_ms`` (linear interpolation), ``min_ms``, ``max_ms`` of ``ms``.

    >>> summary([1.0, 2.0, 4.0])
    {'n': 3, 'median_ms': 2.0, 'p95_ms': 3.8, 'min_ms': 1.0, 'max_ms': 4.0}
    """
    a = np.asarray(ms, dtype=np.float64)
    return {"n": int(a.size), "median_ms": round(float(np.median(a)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3),
            "min_ms": round(float(a.min()), 3), "max_ms": round(float(a.max()), 3)}


def time_model(model: LoadedModel, images: list[Image.Image], *, served: Served,
               warmup: int) -> dict:
    """Warm up, then one timed call per image: ``{"model_call": summary, "end_to_end": summary}``."""
    letterbox = Letterboxer(input_w=model.input_w, input_h=model.input_h, preprocess=model.card.preprocess)
    for i in range(warmup):
        serve(model, images[i % len(images)], served=served, letterbox=letterbox)
    e2e, call = [], []
    for image in images:
        t0 = time.perf_counter()
        _, model_s = serve(model, image, served=served, letterbox=letterbox)
        e2e.append(1000 * (time.perf_counter() - t0))
        call.append(1000 * model_s)
    return {"model_call": summary(call), "end_to_end": summary(e2e)}


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else ``platform.processor()``, else ``unknown``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment(model: LoadedModel) -> dict:
    """Where the figures were measured: host, library versions, provider and thread settings."""
    import onnxruntime as ort
    import PIL

    opts = model.session.get_session_options()
    return {
        "host": platform.node(), "os": platform.platform(), "machine": platform.machine(), "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(), "onnxruntime": ort.__version__, "numpy": np.__version__,
        "pillow": PIL.__version__, "providers": model.session.get_providers(),
        "threads": {"intra_op_num_threads": opts.intra_op_num_threads,
                    "inter_op_num_threads": opts.inter_op_num_threads,
                    "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")},
    }

