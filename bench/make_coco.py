"""Seeded generator of a COCO-scale detection set for the scoring benchmark.

    python bench/make_coco.py --frames 5000 --out bench/out/5k [--seed 0]

Writes ``gt.json`` (COCO ground truth: images, annotations, categories) and
``dt.json`` (COCO results: image_id, category_id, bbox, score). Defaults give a
COCO-like scale: 60 classes, about 7.2 labels per frame (36,000 at 5,000 frames)
and about 100 raw boxes per frame (500,000 at 5,000 frames), made of

- good matches: a jittered copy of a label (IoU mostly > 0.7), high score;
- poor matches: a shifted copy (IoU around 0.3-0.6), middle score;
- duplicates: a second jittered copy of a label, lower score (one of the two is a FP);
- wrong-class copies of a label (FP of another class);
- background false positives: random boxes of random classes, low score.

No crowd labels, so every definition of a match at IoU 0.5 agrees with pycocotools'.
The same seed gives the same files byte for byte.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

W, H = 1280, 831


def make(frames: int, *, classes: int = 60, labels_per_frame: float = 7.2,
         boxes_per_frame: float = 100.0, seed: int = 0) -> tuple[dict, list]:
    rng = np.random.default_rng(seed)
    n_lab = rng.poisson(labels_per_frame, frames)
    img_of_lab = np.repeat(np.arange(frames), n_lab)
    L = img_of_lab.size
    lw = np.exp(rng.uniform(np.log(8), np.log(300), L))
    lh = lw * np.exp(rng.normal(0, 0.3, L))
    lh = np.minimum(lh, H - 1)
    lx = rng.uniform(0, W - lw)
    ly = rng.uniform(0, H - lh)
    lcls = rng.integers(0, classes, L)

    def jitter(idx: np.ndarray, scale: float) -> np.ndarray:
        w, h = lw[idx], lh[idx]
        x = lx[idx] + rng.normal(0, scale, idx.size) * w
        y = ly[idx] + rng.normal(0, scale, idx.size) * h
        w2 = w * np.exp(rng.normal(0, scale, idx.size))
        h2 = h * np.exp(rng.normal(0, scale, idx.size))
        return np.stack([x, y, w2, h2], 1)

    parts = []
    good = np.flatnonzero(rng.random(L) < 0.85)
    parts.append((img_of_lab[good], lcls[good], jitter(good, 0.05), rng.uniform(0.4, 1.0, good.size)))
    poor = np.flatnonzero(rng.random(L) < 0.25)
    parts.append((img_of_lab[poor], lcls[poor], jitter(poor, 0.25), rng.uniform(0.2, 0.8, poor.size)))
    dup = np.flatnonzero(rng.random(L) < 0.30)
    parts.append((img_of_lab[dup], lcls[dup], jitter(dup, 0.08), rng.uniform(0.1, 0.7, dup.size)))
    wrong = np.flatnonzero(rng.random(L) < 0.10)
    parts.append((img_of_lab[wrong], (lcls[wrong] + rng.integers(1, classes, wrong.size)) % classes,
                  jitter(wrong, 0.05), rng.uniform(0.1, 0.9, wrong.size)))
    made = sum(p[0].size for p in parts)
    n_bg = max(0, int(round(boxes_per_frame * frames)) - made)
    bw = np.exp(rng.uniform(np.log(6), np.log(250), n_bg))
    bh = bw * np.exp(rng.normal(0, 0.3, n_bg))
    parts.append((rng.integers(0, frames, n_bg), rng.integers(0, classes, n_bg),
                  np.stack([rng.uniform(0, W - bw), rng.uniform(0, H - np.minimum(bh, H - 1)), bw, bh], 1),
                  rng.beta(1.2, 6, n_bg)))

    gt = {
        "images": [{"id": i + 1, "file_name": f"frame_{i:06d}.jpg", "width": W, "height": H} for i in range(frames)],
        "annotations": [
            {"id": k + 1, "image_id": int(img_of_lab[k]) + 1, "category_id": int(lcls[k]) + 1,
             "bbox": [round(float(lx[k]), 2), round(float(ly[k]), 2), round(float(lw[k]), 2), round(float(lh[k]), 2)],
             "area": round(float(lw[k] * lh[k]), 2), "iscrowd": 0}
            for k in range(L)
        ],
        "categories": [{"id": c + 1, "name": f"class_{c:02d}"} for c in range(classes)],
    }
    img = np.concatenate([p[0] for p in parts])
    cls = np.concatenate([p[1] for p in parts])
    box = np.concatenate([p[2] for p in parts])
    score = np.concatenate([p[3] for p in parts])
    # clip to the frame, drop degenerate boxes
    x1 = np.clip(box[:, 0], 0, W)
    y1 = np.clip(box[:, 1], 0, H)
    x2 = np.clip(box[:, 0] + box[:, 2], 0, W)
    y2 = np.clip(box[:, 1] + box[:, 3], 0, H)
    keep = (x2 - x1 > 1) & (y2 - y1 > 1)
    order = np.lexsort((-score[keep], img[keep]))
    dt = [
        {"image_id": int(i) + 1, "category_id": int(c) + 1,
         "bbox": [round(float(a), 2), round(float(b), 2), round(float(w), 2), round(float(h), 2)],
         "score": round(float(s), 5)}
        for i, c, a, b, w, h, s in zip(img[keep][order], cls[keep][order], x1[keep][order], y1[keep][order],
                                       (x2 - x1)[keep][order], (y2 - y1)[keep][order], score[keep][order])
    ]
    return gt, dt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    gt, dt = make(args.frames, seed=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gt.json").write_text(json.dumps(gt, separators=(",", ":")))
    (out / "dt.json").write_text(json.dumps(dt, separators=(",", ":")))
    print(f"{out}: {len(gt['images'])} frames, {len(gt['annotations'])} labels, {len(dt)} raw boxes")


if __name__ == "__main__":
    main()
