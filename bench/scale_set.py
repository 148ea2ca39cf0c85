"""A seeded synthetic detection set for scoring at scale (``make bench``, section "Scoring in bounded memory").

    python bench/scale_set.py OUT --frames 100000 [--boxes-per-frame 100] [--seed 0]

Writes under ``OUT``: ``params.yaml`` (the project's, with one detection set ``bench`` of one
model ``bench``), ``models/bench.yaml`` (a card; no ONNX file is needed to score),
``data/bench/frames.csv`` (sessions of 500 frames, every fifth session ``dev``, zooms ``1``/``2``)
and ``data/bench/coco.json`` (1280x720 images, 1-9 labels each over the demo's 10 classes), and
``detections/bench.jsonl``: the raw-detections file the detect stage would write, made with its
own writer (:mod:`candor_eval.detection.detections_file`). Per frame ``--boxes-per-frame``
raw boxes: for each label about 4 near copies (found labels and NMS duplicates, some of another
class), the rest scattered over the image; scores uniform from 0.2 for the near copies and mostly
low for the scattered ones (beta(1, 12) above the floor), rounded as the detect stage rounds them.
The same seed gives the same bytes.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from candor_eval.common.params import load_yaml  # noqa: E402 - after the sys.path line above
from candor_eval.detection.detections_file import FORMAT, FrameBoxes, file_lines, rounded_candidates  # noqa: E402 - after the sys.path line above
from candor_eval.detection.model_card import load_card  # noqa: E402 - after the sys.path line above

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1280, 720
SESSION = 500            # frames per capture session
BLOCK = 2000             # frames generated at once


def write_inputs(out: Path, *, frames: int, seed: int) -> tuple[list[str], dict, list[np.ndarray]]:
    """params, card, frames.csv and coco.json; returns the frame ids, the card's header fields and
    each frame's labels as ``(k, 5)`` arrays ``x1, y1, x2, y2, class``."""
    demo = load_yaml(ROOT / "models" / "demo-v1.yaml")
    classes = list(demo["classes"])
    card = {"onnx": "bench.onnx", "sha256": hashlib.sha256(b"candor bench model").hexdigest(),
            "description": "synthetic: no ONNX file; only its raw detections exist", "classes": classes,
            "input_size": [640, 640], "output_layout": demo["output_layout"]}
    (out / "models").mkdir(parents=True, exist_ok=True)
    (out / "models" / "bench.yaml").write_text(json.dumps(card, indent=1) + "\n")
    params = load_yaml(ROOT / "params.yaml")
    params["detector"]["sets"] = {"bench": ["bench"]}
    params["thresholds_by_model"] = {}
    params["gate"]["set"] = "bench"
    (out / "params.yaml").write_text(json.dumps(params, indent=1) + "\n")
    rng = np.random.default_rng(seed)
    ids = [f"f{i:07d}" for i in range(frames)]
    data = out / "data" / "bench"
    data.mkdir(parents=True, exist_ok=True)
    rows = ["frame,session,zoom,split"]
    for i, f in enumerate(ids):
        session = i // SESSION
        rows.append(f"{f},s{session:04d},{1 + (session % 2)},{'dev' if session % 5 == 0 else 'test'}")
    (data / "frames.csv").write_text("\n".join(rows) + "\n")
    labels, annotations = [], []
    for i in range(frames):
        k = int(rng.integers(1, 10))
        wh = rng.uniform(12, 200, size=(k, 2))
        xy = rng.uniform(0, 1, size=(k, 2)) * (np.array([WIDTH, HEIGHT]) - wh)
        cls = rng.integers(0, len(classes), size=k)
        lab = np.column_stack([xy, xy + wh, cls]).round(1)
        labels.append(lab)
        for x1, y1, x2, y2, c in lab.tolist():
            annotations.append({"id": len(annotations) + 1, "image_id": i + 1, "category_id": int(c) + 1,
                                "bbox": [x1, y1, round(x2 - x1, 1), round(y2 - y1, 1)], "iscrowd": 0,
                                "area": round((x2 - x1) * (y2 - y1), 1)})
    coco = {"images": [{"id": i + 1, "file_name": f"{f}.jpg", "width": WIDTH, "height": HEIGHT}
                       for i, f in enumerate(ids)],
            "categories": [{"id": k + 1, "name": c} for k, c in enumerate(classes)], "annotations": annotations}
    (data / "coco.json").write_text(json.dumps(coco, separators=(",", ":")))
    info = {"card": out / "models" / "bench.yaml", "classes": classes, "floor": params["detector"]["floor"]}
    return ids, info, labels


def frame_boxes(rng: np.random.Generator, labels: np.ndarray, *, n: int, n_cls: int, floor: float) -> tuple:
    """``n`` raw boxes of one frame around its ``labels`` and scattered, as (boxes, scores, classes)."""
    near = np.repeat(labels, 4, axis=0)[:n]
    jitter = rng.normal(0, 4, size=(len(near), 4))
    cls = near[:, 4].astype(np.int64)
    other = rng.random(len(near)) < 0.15
    cls[other] = rng.integers(0, n_cls, size=int(other.sum()))
    m = n - len(near)
    wh = rng.uniform(10, 220, size=(m, 2))
    xy = rng.uniform(0, 1, size=(m, 2)) * (np.array([WIDTH, HEIGHT]) - wh)
    boxes = np.concatenate([near[:, :4] + jitter, np.column_stack([xy, xy + wh])])
    boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2])
    scores = np.concatenate([rng.uniform(0.2, 1.0, size=len(near)), floor + (1 - floor) * rng.beta(1, 12, size=m)])
    return boxes, scores, np.concatenate([cls, rng.integers(0, n_cls, size=m)])


def make_set(out: Path, *, frames: int, boxes_per_frame: int = 100, seed: int = 0) -> dict:
    """Write the whole set (see the module docstring); returns its size."""
    out.mkdir(parents=True, exist_ok=True)
    ids, info, labels = write_inputs(out, frames=frames, seed=seed)
    card = load_card(info["card"])
    header = {"format": FORMAT, "model": "bench", "onnx_sha256": card.sha256, "classes": info["classes"],
              "input_size": [640, 640], "layout": "ultralytics", "preprocess": card.preprocess.model_dump(),
              "floor": info["floor"], "precision": {"box_px": 0.001, "score": 0.00001}}
    rng = np.random.default_rng(seed + 1)
    total = 0

    def frames_iter():
        nonlocal total
        for f, lab in zip(ids, labels):
            b, s, c = rounded_candidates(*frame_boxes(rng, lab, n=boxes_per_frame, n_cls=len(info["classes"]),
                                                      floor=info["floor"]), floor=info["floor"])
            total += len(s)
            yield FrameBoxes(f, WIDTH, HEIGHT, b, s, c)

    (out / "detections").mkdir(exist_ok=True)
    with open(out / "detections" / "bench.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        for line in file_lines(header, frames_iter()):
            fh.write(line + "\n")
    return {"frames": frames, "raw_boxes": total, "labels": int(sum(len(x) for x in labels))}


def stage_cmd(root: Path, out: Path) -> list[str]:
    """The score-detection stage on the set at ``root``, outputs under ``out``."""
    return [sys.executable, "-m", "stages.score_detection", "--set", "bench", "--params", str(root / "params.yaml"),
            "--detections", str(root / "detections"), "--models", str(root / "models"),
            "--data", str(root / "data" / "bench"), "--metrics", str(out / "metrics"),
            "--outcomes", str(out / "outcomes"), "--plots", str(out / "plots"), "--coco-out", str(out / "coco")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--frames", type=int, default=100_000)
    p.add_argument("--boxes-per-frame", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    print(make_set(Path(a.out), frames=a.frames, boxes_per_frame=a.boxes_per_frame, seed=a.seed))


if __name__ == "__main__":
    main()
