"""The card's ``preprocess`` block, and the ``opencv-linear`` path against Ultralytics' own predictor.

The fixture (tests/data/ultralytics/, made once by tools/ultralytics/make_fixture.py) holds a tiny
YOLOv8 ONNX export, its card and the boxes Ultralytics' predictor served with it on five demo
frames. candor's path (load, letterbox, run, decode, same-class NMS) must reproduce them one to one
within the re-inference tolerance of params.yaml. No torch, no ultralytics: onnxruntime and OpenCV.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from candor_eval.common.errors import InputError
from candor_eval.common.images import load_frame
from candor_eval.detection.inference.decode import decode
from candor_eval.detection.inference.letterbox import Letterboxer, plan, to_original
from candor_eval.detection.inference.onnx_model import open_model
from candor_eval.detection.model_card import Preprocess, load_card
from candor_eval.detection.scoring.boxes import nms
from tests.conftest import ROOT

FIXTURE = ROOT / "tests/data/ultralytics"
CARD = FIXTURE / "tiny-yolov8.yaml"
IMAGES = ROOT / "data/detector/images"


def test_preprocess_defaults_are_the_demo_models():
    assert Preprocess() == Preprocess(resize="pillow-bilinear", exif="ignore", colour="rgb", scale=255)
    assert load_card(ROOT / "models/demo-v1.yaml").preprocess == Preprocess()
    assert load_card(CARD).preprocess == Preprocess(resize="opencv-linear")


@pytest.mark.parametrize("block", [{"resize": "cubic"}, {"exif": "rotate"}, {"colour": "rgba"}, {"scale": 0},
                                   {"mean": [0.5, 0.5, 0.5]}])
def test_card_refuses_a_bad_preprocess_block(tmp_path, block):
    card = yaml.safe_load(CARD.read_text()) | {"preprocess": block}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(card))
    with pytest.raises(InputError, match="preprocess"):
        load_card(tmp_path / "m.yaml")


def served_boxes(model, frame: str, *, conf: float, iou: float, resize: str | None = None) -> np.ndarray:
    """candor's path for one frame: rows ``[x1, y1, x2, y2, score, class]`` after same-class NMS,
    unrounded. As the predictor: scores ``> conf``, NMS on the float32-exact scores and on the boxes
    in model-input pixels *before* they are clipped to the frame (candor's scoring runs its NMS
    after clipping: boxes reaching past the frame may then suppress each other; docs/detector.md)."""
    pre = model.card.preprocess if resize is None else model.card.preprocess.model_copy(update={"resize": resize})
    image = load_frame(IMAGES / f"{frame}.jpg", exif=pre.exif)
    lb = plan(*image.size, input_w=model.input_w, input_h=model.input_h)
    out = model.run(Letterboxer(input_w=model.input_w, input_h=model.input_h, preprocess=pre)(image, lb))
    cand = decode(out, layout=model.layout, num_classes=len(model.classes), floor=conf)
    keep = cand.scores > conf
    boxes, scores, classes = cand.boxes[keep], cand.scores[keep], cand.classes[keep]
    kept = nms(classes, boxes, scores, iou=iou)
    return np.column_stack([to_original(boxes[kept], lb), scores[kept], classes[kept]])


def one_to_one(ours: np.ndarray, theirs: np.ndarray, *, box_px: float, score: float) -> tuple[int, int, int]:
    """Greedy pairing per class (theirs by descending score, each taking the closest agreeing box of
    ours): (paired, unpaired theirs, unpaired ours)."""
    free = np.ones(len(ours), bool)
    paired = 0
    for row in theirs[np.argsort(-theirs[:, 4], kind="stable")]:
        d_box = np.abs(ours[:, :4] - row[:4]).max(axis=1)
        d_score = np.abs(ours[:, 4] - row[4])
        ok = free & (ours[:, 5] == row[5]) & (d_box <= box_px) & (d_score <= score)
        if ok.any():
            j = np.flatnonzero(ok)[np.argmin((d_box + d_score)[ok])]
            free[j] = False
            paired += 1
    return paired, len(theirs) - paired, int(free.sum())


@pytest.fixture(scope="module")
def served():
    record = json.loads((FIXTURE / "predictions.json").read_text())
    model = open_model(CARD, providers=["CPUExecutionProvider"])
    assert model.sha256 == record["onnx_sha256"]
    tol = yaml.safe_load((ROOT / "params.yaml").read_text())["reinference"]
    return model, record, tol


def test_opencv_linear_reproduces_the_ultralytics_predictor(served):
    model, record, tol = served
    total = 0
    for frame, want in record["frames"].items():
        theirs = np.array(want["boxes"], dtype=np.float64).reshape(-1, 6)
        ours = served_boxes(model, frame, conf=record["conf"], iou=record["iou"])
        assert one_to_one(ours, theirs, box_px=tol["box_px"], score=tol["score"]) == (len(theirs), 0, 0), frame
        total += len(theirs)
    assert total > 0


def test_pillow_bilinear_does_not_reproduce_it(served):
    """The fixture tells the two resizes apart: Pillow's pixels move boxes and scores past the tolerance."""
    model, record, tol = served
    unpaired = 0
    for frame, want in record["frames"].items():
        theirs = np.array(want["boxes"], dtype=np.float64).reshape(-1, 6)
        ours = served_boxes(model, frame, conf=record["conf"], iou=record["iou"], resize="pillow-bilinear")
        unpaired += one_to_one(ours, theirs, box_px=tol["box_px"], score=tol["score"])[1]
    assert unpaired > 0
