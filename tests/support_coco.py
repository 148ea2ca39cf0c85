"""Builders of random COCO ground-truth / results pairs for the oracle tests (pycocotools, tidecv)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def random_pair(tmp_path: Path, seed: int, *, crowd: float = 0.05, tie_scores: bool = False,
                images: int = 25) -> tuple[Path, Path]:
    """A ground truth of ``images`` images, 5 categories (the 5th never labelled), labels of which
    about ``crowd`` are crowd regions, and results near them: jittered boxes (some duplicates, 15%
    of another class) and background boxes. Scores on a 1e-4 grid, or with ``tie_scores`` on a 0.1
    grid (many equal scores within and across images)."""
    rng = np.random.default_rng(seed)
    ims = [{"id": i + 1, "file_name": f"f{i:03d}.jpg", "width": 320, "height": 240} for i in range(images)]
    cats = [{"id": c + 1, "name": f"c{c}"} for c in range(5)]
    anns, dets = [], []

    def score() -> float:
        return round(float(rng.uniform()), 1 if tie_scores else 4)

    for im in ims:
        for _ in range(rng.integers(0, 12)):
            x, y = rng.uniform(0, 280), rng.uniform(0, 200)
            w, h = rng.uniform(6, 40, 2)
            c = int(rng.integers(1, 5))       # category 5 never labelled
            anns.append({"id": len(anns) + 1, "image_id": im["id"], "category_id": c,
                         "iscrowd": int(rng.uniform() < crowd),
                         "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)], "area": round(w * h, 2)})
            for _ in range(rng.integers(0, 3)):     # jittered detections, some duplicates
                j = rng.normal(0, 4, 4)
                dets.append({"image_id": im["id"], "category_id": c if rng.uniform() < 0.85 else 5,
                             "bbox": [round(x + j[0], 2), round(y + j[1], 2), round(max(w + j[2], 1), 2),
                                      round(max(h + j[3], 1), 2)], "score": score()})
        for _ in range(rng.integers(0, 3)):         # background false positives
            dets.append({"image_id": im["id"], "category_id": int(rng.integers(1, 6)),
                         "bbox": [round(rng.uniform(0, 280), 2), round(rng.uniform(0, 200), 2), 20.0, 20.0],
                         "score": score()})
    gt, dt = tmp_path / f"gt{seed}.json", tmp_path / f"dt{seed}.json"
    gt.write_text(json.dumps({"images": ims, "categories": cats, "annotations": anns}))
    dt.write_text(json.dumps(dets))
    return gt, dt
