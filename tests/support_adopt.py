"""Builders (no tests) for the adoption tests: a tiny Ultralytics-style training repository, a tiny ONNX
detector carrying an Ultralytics export's metadata, and a candor project's params.yaml."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from tests.support_detect import constant_model

NAMES = ["person", "car", "dog"]
# what `candor init` writes for the detector track (the part add reads and edits)
PARAMS = """\
# candor parameters, written by `candor init` (track: detector)
detector:                      # detector track (docs/detector.md)
  sets: {}                     # set -> its models, reference first: `candor add set` / `candor add model`
  providers:
  - CPUExecutionProvider
  floor: 0.05                  # raw boxes below this score are never stored
"""
# frame -> (size, label lines): a labelled frame, a background frame (no label file), a frame of another size
FRAMES = {
    "a": ((64, 48), ["0 0.5 0.5 0.25 0.25", "1 0.25 0.25 0.125 0.125"]),
    "b": ((64, 48), None),
    "c": ((32, 32), ["2 0.5 0.5 0.5 0.5"]),
}


def ultralytics_repo(root: Path, *, names: list[str] | dict[int, str] | None = None,
                     frames: dict[str, tuple[tuple[int, int], list[str] | None]] | None = None,
                     data_yaml: str | None = None) -> Path:
    """``root`` as a training repository: ``datasets/pets/{images,labels}/val/`` (``frames``: id -> (size,
    label lines or None for no label file)), a train split of one image, and ``datasets/pets/data.yaml``
    (``names``: a list or an index -> name mapping; ``data_yaml``: its whole text instead). Returns
    the data.yaml; ``root`` is a git work tree (it holds ``.git``) with a candor project in ``eval/``."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    ds = root / "datasets" / "pets"
    for split in ("val", "train"):
        (ds / "images" / split).mkdir(parents=True, exist_ok=True)
        (ds / "labels" / split).mkdir(parents=True, exist_ok=True)
    for fid, (size, labels) in (FRAMES if frames is None else frames).items():
        Image.new("RGB", size, (30, 90, 30)).save(ds / "images" / "val" / f"{fid}.{'png' if size[0] < 64 else 'jpg'}")
        if labels is not None:
            (ds / "labels" / "val" / f"{fid}.txt").write_text("".join(x + "\n" for x in labels))
    Image.new("RGB", (16, 16)).save(ds / "images" / "train" / "t.jpg")
    names = NAMES if names is None else names
    text = data_yaml if data_yaml is not None else (
        "path: .\ntrain: images/train\nval: images/val\n"
        + ("names:\n" + "".join(f"  {k}: {v}\n" for k, v in names.items()) if isinstance(names, dict)
           else f"names: [{', '.join(names)}]\n"))
    (ds / "data.yaml").write_text(text)
    (root / "eval").mkdir(exist_ok=True)
    (root / "eval" / "params.yaml").write_text(PARAMS)
    return ds / "data.yaml"


def ultralytics_onnx(path: Path, *, names: list[str] | None = None, metadata: dict[str, str] | None = None,
                     drop: tuple[str, ...] = (), output: tuple[int, int, int] | None = None,
                     input_hw: tuple[int, int] = (64, 64), dynamic_input: bool = False) -> str:
    """A tiny ONNX detector with an Ultralytics export's metadata (``names``, ``imgsz``, ``task: detect``,
    ``author: Ultralytics``...; ``metadata`` overrides keys, ``drop`` removes them) and an output of zeros
    ``[1, 4 + C, 16]`` (``output``: another shape). Returns its SHA-256."""
    names = NAMES if names is None else names
    meta = {"author": "Ultralytics", "description": "Ultralytics YOLOv8n model trained on data.yaml",
            "task": "detect", "stride": "32", "batch": "1", "end2end": "False",
            "imgsz": str(list(input_hw)), "names": str(dict(enumerate(names))),
            "args": "{'batch': 1, 'nms': None, 'dynamic': False, 'opset': 12}", **(metadata or {})}
    for key in drop:
        meta.pop(key)
    shape = (1, 4 + len(names), 16) if output is None else output
    return constant_model(path, np.zeros(shape, np.float32), input_hw=input_hw, dynamic_input=dynamic_input,
                          metadata=meta)


def coco_export(root: Path, *, sizes: dict[str, tuple[int, int]] | None = None,
                said: dict[str, tuple[int, int]] | None = None, folders: bool = False) -> tuple[Path, Path]:
    """A COCO export in ``root``: ``images/`` (``sizes``: file name -> the image's real size) and
    ``annotations/instances_val.json`` listing each (``said``: the sizes the file says instead;
    ``folders``: file names written as ``val/<name>``), categories 1 cat and 2 dog, one box on the first
    image. Returns (the annotation file, the image folder)."""
    sizes = {"x.jpg": (40, 30), "y.png": (20, 20)} if sizes is None else sizes
    said = {**sizes, **(said or {})}
    (root / "images").mkdir(parents=True)
    (root / "annotations").mkdir()
    for name, size in sizes.items():
        Image.new("RGB", size, (90, 30, 30)).save(root / "images" / name)
    images = [{"id": i + 1, "file_name": f"val/{name}" if folders else name, "width": w, "height": h}
              for i, (name, (w, h)) in enumerate(said.items())]
    doc = {"images": images, "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}],
           "annotations": [{"id": 1, "image_id": 1, "category_id": 2, "bbox": [4, 4, 10, 8], "iscrowd": 0}]}
    (root / "annotations" / "instances_val.json").write_text(json.dumps(doc))
    return root / "annotations" / "instances_val.json", root / "images"
