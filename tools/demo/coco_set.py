"""Write a COCO-labelled detection set from frames of the demo set: the set a user brings.

    python -m tools.demo.coco_set data/birds [--frames 12] [--source data/detector] [--seed 7]

Copies ``--frames`` images of the demo set (picked with ``--seed``, in frame order) into
``<out>/images/`` and writes ``<out>/coco.json`` from their YOLO labels, the way an annotation
tool exports COCO: image ids and category ids are not 0..n-1 in the demo order (categories are
numbered in a shuffled order from 1, images from 101), boxes ``[x, y, w, h]`` in pixels. No
``frames.csv``, no ``labels/``, no manifest: the README's "Bring your own" walk-through adds the
set with ``candor fetch manifest <out>`` and one line of ``params.yaml``.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

from candor_eval.detection.frames import find_images, image_size


def yolo_boxes(label_file: Path, *, width: int, height: int) -> list[tuple[int, list[float]]]:
    """(class index, [x, y, w, h] in pixels) of each line of a YOLO label file."""
    out = []
    for line in label_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            c, cx, cy, w, h = line.split()
            bw, bh = float(w) * width, float(h) * height
            out.append((int(c), [round(float(cx) * width - bw / 2, 2), round(float(cy) * height - bh / 2, 2),
                                 round(bw, 2), round(bh, 2)]))
    return out


def coco_set(source: Path, out: Path, *, frames: int, seed: int) -> dict:
    """Copy ``frames`` demo images to ``out/images`` and return their COCO document."""
    classes = (source / "classes.txt").read_text(encoding="utf-8").split()
    images = find_images(source / "images")
    rng = random.Random(seed)
    picked = sorted(rng.sample(sorted(images), frames))
    order = list(range(len(classes)))
    rng.shuffle(order)
    cat_id = {c: 1 + order.index(c) for c in range(len(classes))}
    doc: dict = {"images": [], "annotations": [],
                 "categories": sorted(({"id": cat_id[c], "name": name} for c, name in enumerate(classes)),
                                      key=lambda x: x["id"])}
    (out / "images").mkdir(parents=True, exist_ok=True)
    for i, frame in enumerate(picked):
        src = images[frame]
        shutil.copyfile(src, out / "images" / src.name)
        w, h = image_size(src)
        doc["images"].append({"id": 101 + i, "file_name": src.name, "width": w, "height": h})
        for c, box in yolo_boxes(source / "labels" / f"{frame}.txt", width=w, height=h):
            doc["annotations"].append({"id": len(doc["annotations"]) + 1, "image_id": 101 + i,
                                       "category_id": cat_id[c], "bbox": box, "area": round(box[2] * box[3], 2),
                                       "iscrowd": 0})
    return doc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.demo.coco_set", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="the new set's folder, e.g. data/birds")
    p.add_argument("--source", default="data/detector", help="the demo set (YOLO labels)")
    p.add_argument("--frames", type=int, default=12)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    out = Path(args.out)
    doc = coco_set(Path(args.source), out, frames=args.frames, seed=args.seed)
    (out / "coco.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}/coco.json: {len(doc['images'])} images, {len(doc['annotations'])} boxes, "
          f"{len(doc['categories'])} categories")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
