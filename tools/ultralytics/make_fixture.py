"""Make the committed Ultralytics fixture once: a tiny YOLOv8 trained briefly, its ONNX export, and
the boxes Ultralytics' own predictor serves with it on a few demo frames.

    YOLO_OFFLINE=1 /tmp/ultra-venv/bin/python tools/ultralytics/make_fixture.py --out tests/data/ultralytics

Tools-only (torch and ultralytics live in a separate venv, never in the pipeline's): the test
suite reads the outputs with onnxruntime and OpenCV only (tests/detection/inference/test_served_preprocessing.py).
Nothing is downloaded: the model is built from ``tiny-yolov8.yaml`` (YOLOv8's layers at
depth 0.33, width 0.10) with a fixed seed and trained for ``--epochs`` on the demo frames not in
the fixture (their YOLO labels), then exported to ONNX (static ``--imgsz``, opset 12, not simplified).

Written under ``--out``: ``tiny-yolov8.onnx``; ``tiny-yolov8.yaml``, its model card (the demo's
classes, ``preprocess: {resize: opencv-linear}``, what the predictor serves with); and
``predictions.json``: per fixture frame, the predictor's boxes ``[x1, y1, x2, y2, score, class]``
(original pixels, float32 values as printed by Python) at ``conf``, class-aware NMS at ``iou``,
no ``max_det`` cap in effect, with the versions that made them.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")

FIXTURE_FRAMES = ("s100-000", "s100-001", "s100-002", "s100-003", "s100-004")
IOU, MAX_DET = 0.7, 100_000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="data/detector", help="demo data set (images/, labels/, classes.txt)")
    p.add_argument("--out", default="tests/data/ultralytics")
    p.add_argument("--imgsz", type=int, default=320)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--train-frames", type=int, default=59)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--conf", type=float, default=0.001, help="the predictor's confidence threshold")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    import cv2
    import numpy as np
    import torch
    import yaml

    import ultralytics
    from ultralytics import YOLO

    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)
    data, out = Path(a.data), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    classes = (data / "classes.txt").read_text(encoding="utf-8").split()
    here = Path(__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        train = [f for f in sorted(i.stem for i in (data / "images").glob("*.jpg")) if f not in FIXTURE_FRAMES]
        for sub in ("images", "labels"):
            (tmp / "ds" / sub / "train").mkdir(parents=True)
        for f in train[:a.train_frames]:
            shutil.copy(data / "images" / f"{f}.jpg", tmp / "ds/images/train")
            shutil.copy(data / "labels" / f"{f}.txt", tmp / "ds/labels/train")
        ds = tmp / "ds.yaml"
        ds.write_text(yaml.safe_dump({"path": str(tmp / "ds"), "train": "images/train", "val": "images/train",
                                      "names": dict(enumerate(classes))}))
        model = YOLO(str(here / "tiny-yolov8.yaml"), task="detect")
        if a.epochs:
            model.train(data=str(ds), epochs=a.epochs, imgsz=a.imgsz, batch=a.batch, workers=0, device="cpu",
                        seed=a.seed, deterministic=True, plots=False, val=False, amp=False,
                        project=str(tmp / "runs"), name="train", exist_ok=True, verbose=False)
            model = YOLO(str(tmp / "runs/train/weights/last.pt"), task="detect")
        onnx = Path(model.export(format="onnx", imgsz=a.imgsz, opset=12, simplify=False, dynamic=False,
                                 half=False, device="cpu"))
        shutil.copy(onnx, out / "tiny-yolov8.onnx")
    blob = (out / "tiny-yolov8.onnx").read_bytes()
    card = {"onnx": "tiny-yolov8.onnx", "sha256": hashlib.sha256(blob).hexdigest(),
            "description": "Tiny YOLOv8 (width 0.10) trained briefly on demo frames by "
                           "tools/ultralytics/make_fixture.py; "
                           "exported by Ultralytics, served by its predictor (OpenCV INTER_LINEAR letterbox).",
            "classes": classes, "input_size": [a.imgsz, a.imgsz], "output_layout": "ultralytics",
            "preprocess": {"resize": "opencv-linear"}}
    (out / "tiny-yolov8.yaml").write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")

    served = YOLO(str(out / "tiny-yolov8.onnx"), task="detect")
    frames = {}
    for f in FIXTURE_FRAMES:
        path = data / "images" / f"{f}.jpg"
        r = served.predict(source=str(path), imgsz=a.imgsz, conf=a.conf, iou=IOU, max_det=MAX_DET,
                           agnostic_nms=False, device="cpu", verbose=False)[0]
        b = r.boxes
        rows = [[*map(float, xyxy), float(s), int(c)] for xyxy, s, c in
                zip(b.xyxy.tolist(), b.conf.tolist(), b.cls.tolist())]
        h, w = r.orig_shape
        frames[f] = {"width": int(w), "height": int(h), "boxes": rows}
    record = {"made_by": "tools/ultralytics/make_fixture.py", "seed": a.seed, "epochs": a.epochs,
              "train_frames": a.train_frames, "batch": a.batch, "imgsz": a.imgsz, "conf": a.conf, "iou": IOU,
              "max_det": MAX_DET,
              "agnostic_nms": False, "versions": {"ultralytics": ultralytics.__version__, "torch": torch.__version__,
                                                  "opencv": cv2.__version__},
              "onnx_sha256": card["sha256"], "frames": frames}
    (out / "predictions.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print({f: len(v["boxes"]) for f, v in frames.items()}, len(blob), "bytes of ONNX")


if __name__ == "__main__":
    main()
