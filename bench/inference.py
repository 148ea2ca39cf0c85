"""Inference overhead: the detect stage's per-frame time against a bare ``session.run`` loop.

For each demo model (``detector.sets.detector`` in params.yaml) on the demo frames
(``data/detector``), in this process, ``repeats`` times each:

- ``stage_ms``: the detect stage's own per-frame code path (:func:`candor_eval.detection.inference.runner.iter_lines`:
  decode the image file, letterbox, run, decode boxes, round, JSON line), mean per frame;
- ``bare_run_ms``: ``session.run`` alone on tensors letterboxed beforehand, mean per frame;
- the stage split per frame, the same calls as the stage in the same order:
  ``image_decode_ms`` (file -> RGB image), ``letterbox_ms`` (the stage's reused
  :class:`~candor_eval.detection.inference.letterbox.Letterboxer`), ``run_ms``, ``decode_boxes_ms`` (decode + map
  back + round), ``json_ms`` (:func:`~candor_eval.detection.detections_file.json_line`).

The bare loop and the stage use the same session (same options and threads); the bare
loop's tensors are made beforehand with :func:`~candor_eval.detection.inference.letterbox.letterbox_image`, one
array per frame.

Figures are medians over the repeats. ``overhead`` = stage / bare - 1;
``overhead_excl_image_decode`` = (stage - image decode) / bare - 1: image decoding is
input I/O that any bare loop would also need once its tensors are not pre-made.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _per_frame_ms(total_s: float, n: int) -> float:
    return 1000.0 * total_s / n


def bench_model(name: str, *, repeats: int, data: Path, models: Path, providers: list[str], floor: float) -> dict:
    from candor_eval.common.images import load_frame
    from candor_eval.detection.detections_file import frame_json, rounded_candidates
    from candor_eval.detection.frames import find_images, read_frames
    from candor_eval.detection.inference.decode import decode
    from candor_eval.detection.inference.letterbox import Letterboxer, letterbox_image, plan, to_original
    from candor_eval.detection.inference.onnx_model import open_model
    from candor_eval.detection.inference.runner import iter_lines

    model = open_model(models / f"{name}.yaml", providers=providers)
    frames = list(read_frames(data / "frames.csv").frames)
    images = find_images(data / "images")
    n = len(frames)
    tensors = []
    for f in frames:
        im = load_frame(images[f])
        tensors.append(letterbox_image(im, plan(*im.size, input_w=model.input_w, input_h=model.input_h)))
    for t in tensors[:3]:  # warm-up
        model.run(t)

    stage, bare = [], []
    split: dict[str, list[float]] = {k: [] for k in ("image_decode_ms", "letterbox_ms", "run_ms",
                                                     "decode_boxes_ms", "json_ms")}
    for _ in range(repeats):
        t0 = time.perf_counter()
        for t in tensors:
            model.run(t)
        bare.append(_per_frame_ms(time.perf_counter() - t0, n))

        t0 = time.perf_counter()
        lines = list(iter_lines(model, frames, images, floor=floor))
        stage.append(_per_frame_ms(time.perf_counter() - t0, n))
        assert len(lines) == n + 1

        acc = dict.fromkeys(split, 0.0)
        letterbox = Letterboxer(input_w=model.input_w, input_h=model.input_h, preprocess=model.card.preprocess)
        for f in frames:
            t0 = time.perf_counter()
            im = load_frame(images[f])
            t1 = time.perf_counter()
            w, h = im.size
            lb = plan(w, h, input_w=model.input_w, input_h=model.input_h)
            x = letterbox(im, lb)
            t2 = time.perf_counter()
            out = model.run(x)
            t3 = time.perf_counter()
            cand = decode(out, layout=model.layout, num_classes=len(model.classes), floor=floor)
            kept = rounded_candidates(to_original(cand.boxes, lb), cand.scores, cand.classes, floor=floor)
            t4 = time.perf_counter()
            frame_json(f, w, h, *kept)
            t5 = time.perf_counter()
            for k, a, b in (("image_decode_ms", t0, t1), ("letterbox_ms", t1, t2), ("run_ms", t2, t3),
                            ("decode_boxes_ms", t3, t4), ("json_ms", t4, t5)):
                acc[k] += b - a
        for k in split:
            split[k].append(_per_frame_ms(acc[k], n))

    med = {k: round(statistics.median(v), 3) for k, v in split.items()}
    stage_ms, bare_ms = statistics.median(stage), statistics.median(bare)
    return {"frames": n, "input": f"{model.input_w}x{model.input_h}", "stage_ms": round(stage_ms, 3),
            "bare_run_ms": round(bare_ms, 3), **med,
            "overhead": round(stage_ms / bare_ms - 1, 3),
            "overhead_excl_image_decode": round((stage_ms - med["image_decode_ms"]) / bare_ms - 1, 3)}


def bench_inference(repeats: int) -> dict:
    """The demo models (414k parameters at 320x320: a fixed per-frame image cost is a large share of
    their time) and a served-size model (YOLOv8n's layout and size at 640x640, random weights,
    :mod:`served_model`, written to a temporary folder and never committed)."""
    import tempfile

    from served_model import write_model

    from candor_eval.common.params import section
    from candor_eval.detection.config import DetectorParams

    params = section(DetectorParams, "detector", path=ROOT / "params.yaml")
    data = ROOT / "data" / "detector"
    out = {m: bench_model(m, repeats=repeats, data=data, models=ROOT / "models", providers=params.providers,
                          floor=params.floor)
           for m in params.sets["detector"]}
    with tempfile.TemporaryDirectory() as tmp:
        name, n_params = write_model(Path(tmp))
        out[name] = {"parameters": n_params, **bench_model(name, repeats=repeats, data=data, models=Path(tmp),
                                                           providers=params.providers, floor=params.floor)}
    return out


if __name__ == "__main__":
    print(json.dumps(bench_inference(3), indent=2))
