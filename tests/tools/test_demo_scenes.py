"""Tests of the demo scene generator (tools/demo/scenes.py) and its committed evaluation set.

No torch here: CI does not install it.
"""
from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from candor_eval.common.manifest import load_manifest
from candor_eval.common.verify import verify_manifest
from tests.conftest import ROOT
from tools.demo import dataset
from tools.demo.scenes import (
    CLASSES,
    ZOOMS,
    Box,
    letterbox,
    letterbox_geometry,
    make_session,
    render,
    yolo_lines,
)

DATA = ROOT / "data" / "detector"
TINY = (160, 104)


def test_same_seed_gives_identical_frames_and_labels():
    a = render(make_session(7, seed=11), 3, seed=11, size=TINY)
    b = render(make_session(7, seed=11), 3, seed=11, size=TINY)
    assert a.image.tobytes() == b.image.tobytes()
    assert a.boxes == b.boxes
    assert dataset.jpeg_bytes(a) == dataset.jpeg_bytes(b)


def test_other_seed_or_frame_gives_another_frame():
    a = render(make_session(7, seed=11), 3, seed=11, size=TINY)
    assert render(make_session(7, seed=12), 3, seed=12, size=TINY).image.tobytes() != a.image.tobytes()
    assert render(make_session(7, seed=11), 4, seed=11, size=TINY).image.tobytes() != a.image.tobytes()


@pytest.mark.parametrize("session,index", [(1, 0), (2, 1), (3, 2), (104, 5)])
def test_labels_match_drawn_objects(session, index):
    f = render(make_session(session, seed=2), index, seed=2, size=(320, 208))
    h, w = f.image.shape[:2]
    assert f.image.shape == (208, 320, 3) and f.owner.shape == (208, 320)
    for k, b in enumerate(f.boxes, start=1):
        assert 0 <= b.cls < len(CLASSES)
        assert 0 <= b.x0 < b.x1 <= w and 0 <= b.y0 < b.y1 <= h
        ys, xs = np.nonzero(f.owner == k)
        assert len(xs) > 0, f"labelled object {k} has no visible pixel"
        # every visible pixel of the object lies inside its box (1 px rasterisation slack)
        assert xs.min() >= b.x0 - 1 and xs.max() + 1 <= b.x1 + 1
        assert ys.min() >= b.y0 - 1 and ys.max() + 1 <= b.y1 + 1
    assert set(np.unique(f.owner)) <= set(range(len(f.boxes) + 1))


def test_zoom_cycles_through_all_levels():
    zooms = {render(make_session(5, seed=2), i, seed=2, size=(64, 42)).zoom for i in range(len(ZOOMS))}
    assert zooms == set(ZOOMS)


def test_yolo_lines_hand_computed():
    assert yolo_lines([Box(3, 10, 20, 30, 60)], width=100, height=200) == ["3 0.200000 0.200000 0.200000 0.200000"]
    assert yolo_lines([], width=10, height=10) == []


def test_letterbox_geometry_and_padding():
    assert letterbox_geometry(640, 416, 320) == (0.5, 320, 208, 0, 56)
    assert letterbox_geometry(416, 640, 320) == (0.5, 208, 320, 56, 0)
    out = letterbox(np.zeros((416, 640, 3), np.uint8), 320)
    assert out.shape == (320, 320, 3)
    assert (out[:56] == 114).all() and (out[264:] == 114).all() and (out[56:264] == 0).all()


# ------------------------------------------------------------------ the committed evaluation set


def _frames() -> list[dict]:
    with open(DATA / "frames.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_committed_set_shape():
    frames = _frames()
    assert len(frames) >= 48
    assert (DATA / "classes.txt").read_text().split() == list(CLASSES)
    assert {r["split"] for r in frames} == {"dev", "test"}
    assert len({r["session"] for r in frames}) >= 4
    assert {float(r["zoom"]) for r in frames} == set(ZOOMS)
    train_like = {f"s{i:03d}" for i in range(100)}
    assert not ({r["session"] for r in frames} & train_like), "evaluation sessions must be held out"
    names = sorted(r["frame"] for r in frames)
    assert sorted(p.stem for p in (DATA / "images").glob("*.jpg")) == names
    assert sorted(p.stem for p in (DATA / "labels").glob("*.txt")) == names


def test_committed_yolo_and_coco_agree():
    coco = json.loads((DATA / "coco.json").read_text())
    assert [c["name"] for c in sorted(coco["categories"], key=lambda c: c["id"])] == list(CLASSES)
    assert [c["id"] for c in coco["categories"]] == list(range(len(CLASSES)))
    by_image: dict[int, list] = {}
    for a in coco["annotations"]:
        assert a["iscrowd"] == 0 and a["area"] == pytest.approx(a["bbox"][2] * a["bbox"][3], abs=0.05)
        by_image.setdefault(a["image_id"], []).append(a)
    assert len({a["id"] for a in coco["annotations"]}) == len(coco["annotations"]) >= 1000
    assert {Path(i["file_name"]).stem for i in coco["images"]} == {r["frame"] for r in _frames()}
    total = 0
    for img in coco["images"]:
        w, h = img["width"], img["height"]
        rows = [r.split() for r in (DATA / "labels" / f"{Path(img['file_name']).stem}.txt").read_text().splitlines()]
        yolo = sorted(((int(c), (float(x) - float(bw) / 2) * w, (float(y) - float(bh) / 2) * h, float(bw) * w,
                        float(bh) * h) for c, x, y, bw, bh in rows), key=lambda t: [round(v, 1) for v in t])
        cc = sorted(((a["category_id"], *a["bbox"]) for a in by_image.get(img["id"], [])),
                    key=lambda t: [round(v, 1) for v in t])
        assert len(yolo) == len(cc), img["file_name"]
        for y, c in zip(yolo, cc):
            assert y[0] == c[0]
            assert np.allclose(y[1:], c[1:], atol=0.02), (img["file_name"], y, c)
            assert 0 <= c[1] and 0 <= c[2] and c[1] + c[3] <= w + 0.01 and c[2] + c[4] <= h + 0.01
        total += len(yolo)
    assert total == len(coco["annotations"])
    classes_seen = Counter(a["category_id"] for a in coco["annotations"])
    assert set(classes_seen) == set(range(len(CLASSES)))


def test_committed_labels_regenerate_from_the_generator():
    """The first frame's labels are exactly what the generator draws (same seed and session)."""
    row = sorted(_frames(), key=lambda r: r["frame"])[0]
    sid, idx = int(row["session"][1:]), int(row["frame"].split("-")[1])
    f = render(make_session(sid, seed=dataset.SEED), idx, seed=dataset.SEED)
    h, w = f.image.shape[:2]
    want = "".join(r + "\n" for r in yolo_lines(f.boxes, width=w, height=h))
    assert (DATA / "labels" / f"{row['frame']}.txt").read_text() == want
    assert f"{f.zoom:g}" == row["zoom"]


def test_committed_manifest_verifies_and_carries_frame_columns():
    manifest = load_manifest(DATA / "manifest.csv")
    assert verify_manifest(manifest) == []
    frames = {r["frame"]: r for r in _frames()}
    for e in manifest.entries:
        stem = Path(e.path).stem
        if e.path.startswith(("images/", "labels/")):
            r = frames[stem]
            assert e.extra == {"session": r["session"], "zoom": r["zoom"], "split": r["split"]}
        else:
            assert e.extra == {"session": "", "zoom": "", "split": ""}
    assert len(manifest.entries) == 2 * len(frames) + 3
