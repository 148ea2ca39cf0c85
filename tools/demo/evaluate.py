"""Quick F1 check of a demo ONNX detector on a YOLO-labelled folder (numpy + onnxruntime only).

    python -m tools.demo.evaluate --model models/demo-v1.onnx --data data/detector [--threshold 0.35]

This is the tools' own sanity check used to report the figures in tools/demo/README.md;
the pipeline's scoring lives in ``stages/``. Definitions (those of seed 002):

- preprocessing: letterbox to the model's square input (:func:`tools.demo.scenes.letterbox`),
  RGB, float32 / 255, NCHW;
- decoding of the ``[1, 4 + C, N]`` output: per column the best class and its score;
  kept when the score >= the threshold (one threshold for all classes here);
  boxes mapped back to frame pixels (undo the padding, divide by the scale, clip);
- same-class greedy NMS at IoU 0.5 (by descending score);
- per image and class, detections by descending score are matched greedily one-to-one
  to the unmatched label of highest IoU when that IoU >= 0.5; unmatched detections
  are FP, unmatched labels FN. Micro P = TP/(TP+FP), R = TP/(TP+FN), F1 their harmonic
  mean (0 when undefined).
"""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
from PIL import Image

from tools.demo.scenes import letterbox, letterbox_geometry


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of xyxy boxes a (N, 4) against b (M, 4) -> (N, M)."""
    ix0 = np.maximum(a[:, None, 0], b[None, :, 0])
    iy0 = np.maximum(a[:, None, 1], b[None, :, 1])
    ix1 = np.minimum(a[:, None, 2], b[None, :, 2])
    iy1 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(ix1 - ix0, 0, None) * np.clip(iy1 - iy0, 0, None)
    aa = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    ab = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = aa[:, None] + ab[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Indices kept by greedy NMS (descending score, stable)."""
    order = np.argsort(-scores, kind="stable")
    keep: list[int] = []
    for i in order:
        if not keep or iou_matrix(boxes[i:i + 1], boxes[keep]).max() < iou:
            keep.append(int(i))
    return np.array(keep, int)


def detect(sess: ort.InferenceSession, image: np.ndarray, *, threshold: float, nms_iou: float = 0.5):
    """(boxes (K, 4) xyxy frame px, classes (K,), scores (K,)) after threshold + same-class NMS."""
    inp = sess.get_inputs()[0]
    size = int(inp.shape[2])
    x = letterbox(image, size).astype(np.float32).transpose(2, 0, 1)[None] / 255.0
    out = sess.run(None, {inp.name: x})[0][0]  # (4 + C, N)
    scores_all = out[4:]
    cls = scores_all.argmax(0)
    score = scores_all.max(0)
    keep = score >= threshold
    cx, cy, w, h = out[:4, keep]
    h0, w0 = image.shape[:2]
    scale, _, _, left, top = letterbox_geometry(w0, h0, size)
    boxes = np.stack([(cx - w / 2 - left) / scale, (cy - h / 2 - top) / scale,
                      (cx + w / 2 - left) / scale, (cy + h / 2 - top) / scale], 1)
    boxes = np.clip(boxes, 0, [w0, h0, w0, h0])
    cls, score = cls[keep], score[keep]
    kept = [np.flatnonzero(cls == c)[nms(boxes[cls == c], score[cls == c], nms_iou)] for c in np.unique(cls)]
    idx = np.sort(np.concatenate(kept)) if kept else np.zeros(0, int)
    return boxes[idx], cls[idx], score[idx]


def match(truth: np.ndarray, pred: np.ndarray, scores: np.ndarray, *, iou: float = 0.5) -> tuple[int, int, int]:
    """(tp, fp, fn) of one image and class: greedy by descending score, one-to-one, IoU >= iou."""
    if len(pred) == 0 or len(truth) == 0:
        return 0, len(pred), len(truth)
    m = iou_matrix(pred[np.argsort(-scores, kind="stable")], truth)
    used = np.zeros(len(truth), bool)
    tp = 0
    for row in m:
        row = np.where(used, -1.0, row)
        j = int(row.argmax())
        if row[j] >= iou:
            used[j] = True
            tp += 1
    return tp, len(pred) - tp, len(truth) - tp


def read_yolo(path: Path, *, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    rows = [r.split() for r in path.read_text().splitlines() if r.strip()]
    if not rows:
        return np.zeros((0, 4)), np.zeros(0, int)
    a = np.array(rows, float)
    cx, cy, w, h = a[:, 1] * width, a[:, 2] * height, a[:, 3] * width, a[:, 4] * height
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1), a[:, 0].astype(int)


def prf(tp: int, fp: int, fn: int) -> dict:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}


def evaluate(model: Path, data: Path, *, threshold: float) -> dict:
    classes = (data / "classes.txt").read_text().split()
    frames = list(csv.DictReader(open(data / "frames.csv", newline="")))
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    counts: dict[tuple[str, str], np.ndarray] = {}  # (split, class) -> tp, fp, fn
    for row in frames:
        image = np.asarray(Image.open(data / "images" / f"{row['frame']}.jpg").convert("RGB"))
        h, w = image.shape[:2]
        tb, tc = read_yolo(data / "labels" / f"{row['frame']}.txt", width=w, height=h)
        pb, pc, ps = detect(sess, image, threshold=threshold)
        for c, name in enumerate(classes):
            r = np.array(match(tb[tc == c], pb[pc == c], ps[pc == c]))
            for split in (row["split"], "all"):
                counts[(split, name)] = counts.get((split, name), np.zeros(3, int)) + r
    out = {}
    for split in sorted({s for s, _ in counts}):
        tot = sum(v for (s, _), v in counts.items() if s == split)
        out[split] = {"micro": prf(*map(int, tot)),
                      "per_class": {n: prf(*map(int, counts[(split, n)])) for n in classes}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.demo.evaluate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, action="append", help="ONNX model (repeatable)")
    ap.add_argument("--data", default="data/detector")
    ap.add_argument("--threshold", type=float, default=0.35)
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    results = {Path(m).stem: evaluate(Path(m), Path(args.data), threshold=args.threshold) for m in args.model}
    for name, res in results.items():
        for split, r in res.items():
            m = r["micro"]
            print(f"{name} {split:4s} micro P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f} "
                  f"(tp {m['tp']} fp {m['fp']} fn {m['fn']})")
        print(f"{'class':12s} {'support':>7s} {'P':>6s} {'R':>6s} {'F1':>6s}   (split all)")
        for n, c in res["all"]["per_class"].items():
            print(f"{n:12s} {c['tp'] + c['fn']:7d} {c['precision']:6.3f} {c['recall']:6.3f} {c['f1']:6.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
