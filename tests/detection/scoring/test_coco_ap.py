"""COCO AP (candor_eval/detection/scoring/coco_ap.py): pycocotools' COCOeval as the oracle, to 1e-9, with
crowd regions, score ties within and across images, more than 100 boxes per image and class, and
classes without labels; plus hand cases."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from candor_eval.detection.scoring.coco import read_coco
from candor_eval.detection.scoring.coco_ap import accumulate, accumulate_subsets, average_precision, match_for_ap
from candor_eval.detection.scoring.coco_pair import score_coco_pair
from candor_eval.detection.scoring.coco_results import read_coco_results
from candor_eval.detection.scoring.records import APMatchesByClass
from tests.conftest import ROOT
from tests.support_coco import random_pair


def pycoco(gt, dt) -> tuple[float, float, dict[int, tuple[float, float]]]:
    """pycocotools' (AP@[.5:.95], AP50, {category id: (ap50, ap50_95)}) at its defaults (area all, maxDets 100)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(gt))
        ev = COCOeval(cg, cg.loadRes(str(dt)), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    p = ev.eval["precision"][:, :, :, 0, -1]          # area all, maxDets 100
    per = {cid: (None, None) if p[0, 0, k] < 0 else (float(np.mean(p[0, :, k])), float(np.mean(p[:, :, k])))
           for k, cid in enumerate(ev.params.catIds)}
    return float(ev.stats[0]), float(ev.stats[1]), per


def ours(gt_path, dt_path) -> dict:
    gt, img, cat = read_coco(gt_path)
    det = read_coco_results(dt_path, image_map=img, category_map=cat, classes=gt.classes)
    return score_coco_pair(gt, det, image_map=img, category_map=cat)["ap"]


def crowded(gt_path, dt_path, seed: int) -> None:
    """Add to image 1 a crowd region and 150 boxes of category 1 (beyond maxDets 100), half on the
    crowd region, with tied scores; shuffle the image ids so the id order is not the file order."""
    rng = np.random.default_rng(seed)
    doc = json.loads(gt_path.read_text())
    doc["annotations"].append({"id": len(doc["annotations"]) + 1, "image_id": 1, "category_id": 1, "iscrowd": 1,
                               "bbox": [200.0, 150.0, 100.0, 80.0], "area": 8000.0})
    ids = rng.permutation(len(doc["images"])) + 10
    remap = {im["id"]: int(i) for im, i in zip(doc["images"], ids)}
    for im in doc["images"]:
        im["id"] = remap[im["id"]]
    for a in doc["annotations"]:
        a["image_id"] = remap[a["image_id"]]
    dets = json.loads(dt_path.read_text())
    for j in range(150):
        x, y = (rng.uniform(200, 280), rng.uniform(150, 210)) if j % 2 else (rng.uniform(0, 280), rng.uniform(0, 200))
        dets.append({"image_id": 1, "category_id": 1, "bbox": [round(x, 2), round(y, 2), 15.0, 12.0],
                     "score": round(float(rng.uniform()), 1)})
    for d in dets:
        d["image_id"] = remap[d["image_id"]]
    gt_path.write_text(json.dumps(doc))
    dt_path.write_text(json.dumps(dets))


@pytest.mark.parametrize("seed, ties", [(1, False), (2, True), (3, True), (4, False)])
def test_equals_pycocotools(tmp_path, seed, ties):
    gt, dt = random_pair(tmp_path, seed, tie_scores=ties)
    crowded(gt, dt, seed)
    got = ours(gt, dt)
    ref_all, ref_50, ref_per = pycoco(gt, dt)
    assert got["map50_95"] == pytest.approx(ref_all, abs=1e-9)
    assert got["map50"] == pytest.approx(ref_50, abs=1e-9)
    per = {v["category_id"]: (v["ap50"], v["ap50_95"]) for v in got["per_class"].values()}
    assert per.keys() == ref_per.keys()
    for cid, (a50, a) in ref_per.items():
        if a50 is None:
            assert per[cid] == (None, None)      # category 5 has no labels: left out, as pycocotools does
        else:
            assert per[cid] == (pytest.approx(a50, abs=1e-9), pytest.approx(a, abs=1e-9))
    assert 0.01 < got["map50_95"] < got["map50"] < 0.95       # not a degenerate set


def ap_of(labels, dets, crowd=None):
    lab = np.array([b for b in labels], float).reshape(-1, 4)
    d = np.array([b for b, _ in dets], float).reshape(-1, 4)
    return average_precision(classes=("a",), label_frame=np.zeros(len(lab), int), label_class=np.zeros(len(lab), int),
                             label_boxes=lab,
                             label_crowd=np.zeros(len(lab), bool) if crowd is None else np.array(crowd),
                             det_frame=np.zeros(len(d), int), det_class=np.zeros(len(d), int), det_boxes=d,
                             det_score=np.array([s for _, s in dets], float))


def close(got, want):
    """``(map50, map50_95)`` within 1e-12 of ``want`` (precision is ``TP / (TP + FP + eps)``)."""
    return got == (pytest.approx(want[0], abs=1e-12), pytest.approx(want[1], abs=1e-12))


def test_hand_cases():
    box = [0.0, 0.0, 10.0, 10.0]
    # one exact box: precision 1 at every recall point, at every IoU
    assert close(ap_of([box], [(box, 0.9)]).mean(), (1.0, 1.0))
    # an FP above the TP: precision 1/2 at every recall point
    assert close(ap_of([box], [([50, 50, 60, 60], 0.9), (box, 0.5)]).mean(), (0.5, 0.5))
    # IoU 0.6 box: TP at t = 0.5, 0.55, 0.6, none above: AP50 1, AP@[.5:.95] 3/10
    assert close(ap_of([box], [([0, 0, 10, 6], 0.9)]).mean(), (1.0, 0.3))
    # two labels, one found: recall reaches 0.5, so 51 of the 101 recall points have precision 1
    assert close(ap_of([box, [50, 50, 60, 60]], [(box, 0.9)]).mean(), (51 / 101, 51 / 101))
    # no detections: 0; no labels: left out
    assert ap_of([box], []).mean() == (0.0, 0.0)
    assert ap_of([], [(box, 0.9)]).mean() == (None, None)
    # a box on a crowd region is ignored, not an FP
    ap = ap_of([box, [50, 50, 90, 90]], [([60, 60, 70, 70], 0.9), (box, 0.5)], crowd=[False, True])
    assert close(ap.mean(), (1.0, 1.0))


def test_pipeline_ap_equals_pycocotools_on_its_own_export(tmp_path):
    """The demo's demo-v2 scored at thresholds equal to the floor (so the COCO export holds every box
    after NMS, what the pipeline's AP reads) against its labels written as COCO ground truth at full
    precision: the ``ap`` block of every frame equals pycocotools on the export."""

    from candor_eval.detection.config import DetectorParams, MatchParams, ThresholdParams
    from candor_eval.detection.detections_file import read_index
    from candor_eval.detection.scoring.evaluation import score_model
    from candor_eval.detection.scoring.scene import build_scene

    repo = ROOT
    data, dets = repo / "data" / "detector", repo / "build" / "detections" / "detector"
    export: list[dict] = []
    floor = 0.05
    res = score_model("demo-v2", data=data, models=repo / "models", detections=dets,
                      detector=DetectorParams(sets={"detector": ["demo-v2"]}, floor=floor), match=MatchParams(),
                      threshold_params=ThresholdParams(shared={"default": floor}), coco=export.extend)
    index = read_index(dets / "demo-v2.jsonl")
    inputs = build_scene(data=data, raw=index, input_hw=tuple(index.header["input_size"]))
    sc, truth = inputs.scene, inputs.truth
    b = sc.label_boxes
    doc = {"images": [{"id": truth.image_ids[f], "file_name": f"{f}.jpg", "width": 1, "height": 1}
                      for f in sc.frames.tolist()],
           "categories": [{"id": truth.category_ids[c], "name": c} for c in sc.classes],
           "annotations": [{"id": i + 1, "image_id": truth.image_ids[str(sc.frames[f])],
                            "category_id": truth.category_ids[sc.classes[c]], "iscrowd": int(k),
                            "bbox": [x1, y1, x2 - x1, y2 - y1], "area": (x2 - x1) * (y2 - y1)}
                           for i, (f, c, k, (x1, y1, x2, y2)) in enumerate(zip(
                               sc.label_frame.tolist(), sc.label_class.tolist(), sc.label_crowd.tolist(), b.tolist()))]}
    (tmp_path / "gt.json").write_text(json.dumps(doc))
    (tmp_path / "dt.json").write_text(json.dumps(export))
    ref_all, ref_50, ref_per = pycoco(tmp_path / "gt.json", tmp_path / "dt.json")
    ap = res.metrics["ap"]["all"]
    assert (ap["map50"], ap["map50_95"]) == (pytest.approx(ref_50, abs=1e-9), pytest.approx(ref_all, abs=1e-9))
    for v in ap["per_class"].values():
        assert (v["ap50"], v["ap50_95"]) == tuple(pytest.approx(x, abs=1e-9) for x in ref_per[v["category_id"]])
    assert len(export) > 5_000


def test_the_ap_of_a_subset_of_frames_is_the_ap_of_its_matches_alone():
    """accumulate_subsets on frame masks equals accumulate on the masked matches, image order included;
    and a hand case: the FP that lowers the whole set's AP lies in a frame the subset leaves out."""
    rng = np.random.default_rng(5)
    n_f, n_c = 12, 3
    label_frame = rng.integers(0, n_f, 40)
    label_class = rng.integers(0, n_c, 40)
    corner = rng.uniform(0, 50, (40, 2))
    label_boxes = np.hstack([corner, corner + rng.uniform(5, 20, (40, 2))])
    pick = rng.integers(0, 40, 150)
    det_boxes = label_boxes[pick] + rng.normal(0, 2, (150, 4))
    m = match_for_ap(n_classes=n_c, label_frame=label_frame, label_class=label_class, label_boxes=label_boxes,
                     label_crowd=np.zeros(40, bool), det_frame=label_frame[pick],
                     det_class=np.where(rng.random(150) < 0.8, label_class[pick], rng.integers(0, n_c, 150)),
                     det_boxes=det_boxes, det_score=np.round(rng.random(150), 1))
    image_order = rng.permutation(n_f)
    masks = {"all": None, "even": np.arange(n_f) % 2 == 0, "first": np.arange(n_f) < 4}
    labels = {k: np.bincount(label_class[np.ones(40, bool) if f is None else f[label_frame]], minlength=n_c)
              for k, f in masks.items()}
    got = accumulate_subsets(APMatchesByClass.of(m, n_c), classes=("a", "b", "c"),
                             subsets={k: (masks[k], labels[k]) for k in masks}, image_order=image_order)
    for k, f in masks.items():
        want = accumulate(m if f is None else m.of_frames(f), classes=("a", "b", "c"), n_labels=labels[k],
                          image_order=image_order)
        assert np.array_equal(got[k].precision, want.precision), k
    box = [0.0, 0.0, 10.0, 10.0]
    two = match_for_ap(n_classes=1, label_frame=np.array([0]), label_class=np.array([0]),
                       label_boxes=np.array([box]), label_crowd=np.array([False]), det_frame=np.array([1, 0]),
                       det_class=np.array([0, 0]), det_boxes=np.array([[50.0, 50, 60, 60], box]),
                       det_score=np.array([0.9, 0.5]))
    ap = accumulate_subsets(APMatchesByClass.of(two, 1), classes=("a",), subsets={"all": (None, np.array([1])),
                                                           "f0": (np.array([True, False]), np.array([1]))})
    assert close(ap["all"].mean(), (0.5, 0.5)) and close(ap["f0"].mean(), (1.0, 1.0))


def test_interpolated_precision_equals_the_running_sums_in_float64_read_at_each_recall_point():
    """Step 4 against its plain statement: float64 running sums of 0/1, the precision's running maximum
    from the right, read at the first box reaching each recall point (0 beyond the last); bit for bit,
    with ignored boxes, boxes no label makes reachable and classes with fewer boxes than labels."""
    from candor_eval.detection.scoring.coco_ap import RECALL_THRESHOLDS, _interpolated_precision

    def plain(tp_bits, ignored_bits, n_labels):
        q = np.zeros((10, len(RECALL_THRESHOLDS)))
        for i in range(10):
            tp = (tp_bits >> i) & 1
            tps = np.cumsum(tp, dtype=np.float64)
            fps = np.cumsum((1 - tp) & (1 - ((ignored_bits >> i) & 1)), dtype=np.float64)
            pr = tps / (fps + tps + np.spacing(1))
            pr = np.maximum.accumulate(pr[::-1])[::-1]
            for r, point in enumerate(RECALL_THRESHOLDS):
                at = np.flatnonzero(tps / n_labels >= point)
                q[i, r] = pr[at[0]] if len(at) else 0.0
        return q

    rng = np.random.default_rng(4)
    for n, share_ignored in ((0, 0.0), (1, 0.0), (7, 0.5), (500, 0.0), (500, 0.2)):
        tp_bits = rng.integers(0, 1024, n).astype(np.uint16)
        tp_bits[: n // 3] = 0
        ignored_bits = ((rng.random(n) < share_ignored) * rng.integers(0, 1024, n)).astype(np.uint16) & ~tp_bits
        for n_labels in (1, max(n // 4, 1), n + 3):
            assert _interpolated_precision(tp_bits, ignored_bits, n_labels).tobytes() == \
                plain(tp_bits, ignored_bits, n_labels).tobytes()
    # one box matched at the first threshold only, of 2 labels: recall 0.5, precision 1 / (1 + eps), then 0
    one = _interpolated_precision(np.array([1], np.uint16), np.array([0], np.uint16), 2)
    assert one[0].tolist() == [1 / (1 + np.spacing(1))] * 51 + [0.0] * 50 and not one[1:].any()
