"""FP/FN anatomy (candor_eval/detection/scoring/anatomy.py): a hand case of every rule and boundary, the
parts adding up, and agreement with tidecv's error types on pairs where TIDE's 100-box cut and its
crowd handling do not bite."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from candor_eval.detection.scoring import anatomy
from candor_eval.detection.scoring.anatomy import best_overlaps
from candor_eval.detection.scoring.boxes import paired_iou
from candor_eval.detection.scoring.coco_pair import score_coco_pair
from candor_eval.detection.scoring.columns import DetectionTable, GroundTruth
from candor_eval.detection.scoring.records import OperatingPoint, Scene, Scored
from tests.conftest import ROOT
from tests.support_coco import random_pair

CLASSES = ("a", "b")


def pair(labels: list[tuple[int, list[float]]], dets: list[tuple[int, list[float], float]]) -> dict:
    """``score_coco_pair`` on one 100x100 frame: labels (class, xyxy), detections (class, xyxy, score)."""
    gt = GroundTruth(classes=CLASSES, frames=("f",), sizes=np.array([[100, 100]]),
                     label_frame=np.zeros(len(labels), np.int64), label_index=np.arange(len(labels)),
                     label_class=np.array([c for c, _ in labels], np.int64),
                     label_boxes=np.array([b for _, b in labels], float).reshape(-1, 4),
                     label_crowd=np.zeros(len(labels), bool))
    det = DetectionTable(classes=CLASSES, frame=np.zeros(len(dets), np.int64), cls=np.array([c for c, _, _ in dets]),
                         boxes=np.array([b for _, b, _ in dets], float).reshape(-1, 4),
                         score=np.array([s for _, _, s in dets], float))
    return score_coco_pair(gt, det)["all"]


LABELS = [(0, [0, 0, 10, 10]),     # A: found by d1
          (1, [50, 50, 60, 60]),   # B: missed, a class-confusion box is aimed at it
          (0, [20, 20, 30, 30]),   # C: missed, a localisation box is aimed at it
          (1, [70, 70, 80, 80])]   # D: missed, nothing aimed at it


def test_every_rule_by_hand():
    m = pair(LABELS, [(0, [0, 0, 10, 10], 0.9),     # d1 TP on A
                      (0, [0, 0, 10, 10], 0.8),     # d2 duplicate: IoU 1 with A, already used
                      (0, [50, 50, 60, 60], 0.7),   # d3 class confusion: IoU 1 with B (class b)
                      (0, [20, 20, 24, 30], 0.6),   # d4 localisation: IoU 0.4 with C
                      (0, [80, 0, 90, 10], 0.5),    # d5 background: on nothing
                      (0, [50, 50, 53, 60], 0.4),   # d6 both: IoU 0.3 with B (other class), 0 with its own
                      (0, [0, 0, 10, 5], 0.3),      # d7 localisation: IoU exactly 0.5 with the used A (TIDE: <= pos)
                      (0, [50, 50, 51, 60], 0.2)])  # d8 background: IoU exactly 0.1 with B (TIDE: <= bg)
    micro = m["micro"]
    assert (micro["tp"], micro["fp"], micro["fn"]) == (1, 7, 3)
    assert micro["fp_anatomy"] == {"localisation": 2, "class_confusion": 1, "duplicate": 1, "background": 2, "both": 1}
    assert micro["fn_anatomy"] == {"aimed": 2, "missed": 1}
    assert m["per_class"]["b"]["fn_anatomy"] == {"aimed": 1, "missed": 1}
    assert m["per_class"]["a"]["fp_anatomy"] == micro["fp_anatomy"]
    assert micro["tp_quality"] == {"tp": 1, "iou_median": 1.0, "iou_p10": 1.0, "edge_error_px": 0.0}


def test_an_aimed_label_found_later_is_not_a_false_negative():
    # the localisation box scores higher than the box that finds the label: the label is found, not aimed
    m = pair([(0, [0, 0, 10, 10])], [(0, [0, 0, 4, 10], 0.9), (0, [0, 0, 10, 10], 0.5)])["micro"]
    assert m["fp_anatomy"]["localisation"] == 1 and m["fn_anatomy"] == {"aimed": 0, "missed": 0}


@pytest.mark.parametrize("labels, dets, kind", [
    ([], [(0, [0, 0, 10, 10], 0.5)], "background"),                          # a frame without labels
    ([(0, [0, 0, 10, 10])], [(0, [0, 0, 10, 0.99], 0.5)], "background"),     # IoU 0.099 < 0.1
    ([(0, [0, 0, 10, 10])], [(0, [0, 0, 10, 1], 0.5)], "localisation"),      # IoU exactly 0.1
    ([(1, [0, 0, 10, 10])], [(0, [0, 0, 10, 5], 0.5)], "class_confusion"),   # other class, IoU exactly 0.5
    ([(1, [0, 0, 10, 10])], [(0, [0, 0, 10, 4.9], 0.5)], "both"),            # other class, IoU 0.49
])
def test_boundaries(labels, dets, kind):
    got = pair(labels, dets)["micro"]["fp_anatomy"]
    assert got == {k: int(k == kind) for k in got}


def overlap_scene(labels, dets):
    """A Scored of ``dets`` (frame, class, xyxy) unmatched on frames of ``labels`` (frame, class, xyxy, crowd)."""
    n_frames = 1 + max([f for f, *_ in labels] + [f for f, *_ in dets])
    scene = Scene(classes=CLASSES, frames=np.array([f"f{i}" for i in range(n_frames)]),
                  split=np.full(n_frames, "all"), session=np.full(n_frames, ""), zoom=np.full(n_frames, ""),
                  scale=np.ones(n_frames), label_frame=np.array([f for f, *_ in labels], np.int64),
                  label_index=np.arange(len(labels)), label_class=np.array([c for _, c, *_ in labels], np.int64),
                  label_boxes=np.array([b for *_, b, _ in labels], float).reshape(-1, 4),
                  label_crowd=np.array([k for *_, k in labels], bool))
    n = len(dets)
    return Scored(scene=scene, frame=np.array([f for f, *_ in dets], np.int64),
                  cls=np.array([c for _, c, _ in dets], np.int64),
                  boxes=np.array([b for *_, b in dets], float).reshape(-1, 4), score=np.linspace(0.9, 0.1, n),
                  label=np.full(n, -1), ignored=np.zeros(n, bool), label_score=np.full(len(labels), -np.inf),
                  match_iou=0.5)


def test_best_overlaps_by_hand_ties_to_the_lower_label_and_crowds_left_out():
    labels = [(0, 0, [0, 0, 10, 10], False),     # 0
              (0, 0, [0, 0, 10, 10], False),     # 1: the same box: a tie, label 0 keeps it
              (0, 1, [0, 0, 10, 5], False),      # 2: other class, IoU 0.5 with d0
              (0, 0, [0, 0, 10, 10], True),      # 3: crowd: never compared
              (1, 0, [0, 0, 10, 10], False)]     # 4: another frame
    dets = [(0, 0, [0, 0, 10, 10]), (0, 1, [50, 50, 60, 60]), (2, 0, [0, 0, 10, 10])]
    s = overlap_scene(labels, dets)
    used = np.array([False, True, False, False, False])
    b = best_overlaps(s, np.arange(3), used=used)
    assert b.own.tolist() == [1.0, 0.0, 0.0] and b.used.tolist() == [1.0, 0.0, 0.0]
    assert b.other.tolist() == [0.5, 0.0, 0.0]
    assert b.own_label.tolist() == [0, -1, -1] and b.other_label.tolist() == [2, -1, -1]


@pytest.mark.parametrize("seed", [0, 1])
def test_best_overlaps_equals_every_pair_and_does_not_depend_on_the_block(seed, monkeypatch):
    """Against the definition written pair by pair, whatever the block of FPs compared at once."""
    rng = np.random.default_rng(seed)
    corner = rng.integers(0, 30, (60, 2)).astype(float)
    labels = [(int(rng.integers(0, 6)), int(rng.integers(0, 2)), [*c, *(c + rng.integers(1, 12, 2))],
               bool(rng.random() < 0.1)) for c in corner]
    corner = rng.integers(0, 30, (200, 2)).astype(float)
    dets = [(int(rng.integers(0, 7)), int(rng.integers(0, 2)), [*c, *(c + rng.integers(1, 12, 2))]) for c in corner]
    s = overlap_scene(labels, dets)
    used = rng.random(len(labels)) < 0.5
    fp = np.flatnonzero(rng.random(len(dets)) < 0.8)
    want = {"own": [], "used": [], "other": [], "own_label": [], "other_label": []}
    for d in fp:
        best = {"own": (0.0, -1), "used": (0.0, -1), "other": (0.0, -1)}
        for j, (f, c, box, crowd) in enumerate(labels):
            if f != s.frame[d] or crowd:
                continue
            v = float(paired_iou(s.boxes[d][None], np.array([box], float))[0])
            kinds = ["own", "used"] if c == s.cls[d] and used[j] else ["own"] if c == s.cls[d] else ["other"]
            for k in kinds:
                if v > best[k][0]:
                    best[k] = (v, j)
        for k in ("own", "used", "other"):
            want[k].append(best[k][0])
        want["own_label"].append(best["own"][1])
        want["other_label"].append(best["other"][1])
    for block in (1, 7, 10_000):
        monkeypatch.setattr(anatomy, "BLOCK", block)
        got = best_overlaps(s, fp, used=used)
        for k, v in want.items():
            assert getattr(got, k).tolist() == v, (block, k)



@pytest.mark.parametrize("seed", [0, 1])
def test_error_anatomy_does_not_depend_on_the_block(seed, monkeypatch):
    """The FPs are judged a block at a time: every block size gives the same kinds and aimed labels, and
    every kind and an aimed label occur (the comparison is not vacuous)."""
    rng = np.random.default_rng(seed)
    corner = rng.integers(0, 20, (40, 2)).astype(float)
    labels = [(int(rng.integers(0, 4)), int(rng.integers(0, 2)), [*c, *(c + rng.integers(2, 12, 2))], False)
              for c in corner]
    dets = [(f, c, [box[0] + rng.integers(-2, 3), box[1], box[2] + rng.integers(-3, 3), box[3]])
            for f, c, box, _ in labels for _ in range(3)]
    dets += [(int(rng.integers(0, 5)), int(rng.integers(0, 2)), [*c, *(c + rng.integers(1, 12, 2))])
             for c in rng.integers(0, 30, (80, 2)).astype(float)]
    s = overlap_scene(labels, dets)
    fp = rng.random(len(dets)) < 0.8
    found = rng.random(len(labels)) < 0.4
    op = OperatingPoint(kept=np.ones(len(dets), bool), tp=~fp, fp=fp, found=found, fn=~found)
    runs = []
    for block in (1, 7, 10_000):
        monkeypatch.setattr(anatomy, "BLOCK", block)
        runs.append(anatomy.error_anatomy(s, op))
    for got in runs[1:]:
        assert got.fp_kind.tolist() == runs[0].fp_kind.tolist()
        assert got.fn_aimed.tolist() == runs[0].fn_aimed.tolist()
    assert set(runs[0].fp_kind[fp].tolist()) == set(range(len(anatomy.FP_KINDS))) and runs[0].fn_aimed.any()

def test_no_detections():
    m = pair(LABELS, [])["micro"]
    assert sum(m["fp_anatomy"].values()) == 0 and m["fn_anatomy"] == {"aimed": 0, "missed": 4}
    assert m["tp_quality"] == {"tp": 0, "iou_median": None, "iou_p10": None, "edge_error_px": None}


def tide_errors(images: list[tuple[int, str]], categories: list[tuple[int, str]],
                labels: list[tuple[int, int, list[float]]], results: list[dict]) -> dict[str, int]:
    """tidecv's error counts (pos 0.5, background 0.1, boxes) by our names, on ground truth given as
    images and categories ``(id, name)`` and labels ``(image id, category id, xywh)`` (loaded through
    tidecv's ``Data``: its COCO loader needs segmentations) and COCO results."""
    from tidecv import TIDE, Data
    from tidecv.errors.main_errors import BackgroundError, BoxError, ClassError, DuplicateError, MissedError, OtherError

    truth, preds = Data("gt"), Data("dt")
    for i, name in images:
        truth.add_image(i, name)
    for c, name in categories:
        truth.add_class(c, name)
    for i, c, box in labels:
        truth.add_ground_truth(i, c, box)
    for d in results:
        preds.add_detection(d["image_id"], d["category_id"], d["score"], d["bbox"])
    with contextlib.redirect_stdout(io.StringIO()):
        run = TIDE().evaluate(truth, preds, mode=TIDE.BOX)
    names = {BoxError: "localisation", ClassError: "class_confusion", DuplicateError: "duplicate",
             BackgroundError: "background", OtherError: "both", MissedError: "missed"}
    return {names[t]: len(v) for t, v in run.error_dict.items() if t in names}


def tide_counts(gt, dt) -> dict[str, int]:
    """:func:`tide_errors` of a COCO ground-truth / results pair of files (no crowd labels)."""
    doc = json.loads(gt.read_text())
    assert not any(a["iscrowd"] for a in doc["annotations"])
    return tide_errors([(im["id"], im["file_name"]) for im in doc["images"]],
                       [(c["id"], c["name"]) for c in doc["categories"]],
                       [(a["image_id"], a["category_id"], a["bbox"]) for a in doc["annotations"]],
                       json.loads(dt.read_text()))


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_agrees_with_tidecv(tmp_path, seed):
    from candor_eval.detection.scoring.coco import read_coco
    from candor_eval.detection.scoring.coco_results import read_coco_results

    gt_path, dt_path = random_pair(tmp_path, seed, crowd=0.0)   # no crowd: TIDE classifies ignored boxes too
    assert max(np.unique([d["image_id"] for d in json.loads(dt_path.read_text())], return_counts=True)[1]) <= 100
    gt, img, cat = read_coco(gt_path)
    m = score_coco_pair(gt, read_coco_results(dt_path, image_map=img, category_map=cat, classes=gt.classes))["all"]
    micro = m["micro"]
    ours = {**micro["fp_anatomy"], "missed": micro["fn_anatomy"]["missed"]}
    assert sum(micro["fp_anatomy"].values()) == micro["fp"]
    assert micro["fn_anatomy"]["aimed"] + micro["fn_anatomy"]["missed"] == micro["fn"]
    assert ours == tide_counts(gt_path, dt_path)
    assert min(micro["fp_anatomy"].values()) > 0          # every kind occurs: the comparison is not vacuous


def test_agrees_with_tidecv_on_the_demo_served_detections():
    """demo-v2 at its served thresholds (params.yaml; at most 47 boxes per frame, so TIDE's 100-box cut
    does not bite; the demo has no crowd labels): tidecv's counts on the served COCO export equal the
    metrics' anatomy kind for kind."""

    from candor_eval.detection.detections_file import read_index
    from candor_eval.detection.scoring.evaluation import score_model
    from candor_eval.detection.scoring.scene import build_scene
    from candor_eval.stages.cli_detection import read_score_params

    repo = ROOT
    data, dets = repo / "data" / "detector", repo / "build" / "detections" / "detector"
    params = read_score_params(repo / "params.yaml")
    export: list[dict] = []
    res = score_model("demo-v2", data=data, models=repo / "models", detections=dets, detector=params.detector,
                      match=params.match, threshold_params=params.threshold_params, coco=export.extend)
    index = read_index(dets / "demo-v2.jsonl")
    inputs = build_scene(data=data, raw=index, input_hw=tuple(index.header["input_size"]))
    sc, truth = inputs.scene, inputs.truth
    assert not sc.label_crowd.any()
    assert max(np.unique([r["image_id"] for r in export], return_counts=True)[1]) <= 100
    ids = [truth.image_ids[f] for f in sc.frames.tolist()]
    tide = tide_errors(list(zip(ids, sc.frames.tolist())), [(truth.category_ids[c], c) for c in sc.classes],
                       [(ids[f], truth.category_ids[sc.classes[c]], [x1, y1, x2 - x1, y2 - y1])
                        for f, c, (x1, y1, x2, y2) in zip(sc.label_frame.tolist(), sc.label_class.tolist(),
                                                          sc.label_boxes.tolist())], export)
    micro = res.metrics["all"]["micro"]
    assert {**micro["fp_anatomy"], "missed": micro["fn_anatomy"]["missed"]} == tide
