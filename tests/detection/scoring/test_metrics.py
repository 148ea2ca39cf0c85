"""Tests for candor_eval/detection/scoring/metrics.py (and the blocks and curves read off its matched
arrays, candor_eval/detection/scoring/tally.py) on a tiny hand-computed scene."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from candor_eval.detection.scoring.anatomy import FP_KINDS, error_anatomy
from candor_eval.detection.scoring.metrics import (
    band_names,
    best_thresholds,
    confusion,
    confusion_by_group,
    operating_point,
    rate_counts,
    size_at_input,
    threshold_grid,
    wrong_targets,
    zoom_key,
)
from candor_eval.detection.scoring.nms_match import score_detections
from candor_eval.detection.scoring.records import Counts, Scene
from candor_eval.detection.scoring.tally import Tally, frame_groups, summarise
from candor_eval.detection.served import Served
from tests.conftest import ROOT

CLASSES = ("deer", "sheep", "tree", "relic")   # relic: never labelled


def anatomy(**kinds: int) -> dict[str, int]:
    """An ``fp_anatomy`` block: the kinds given, the others 0."""
    return {k: kinds.get(k, 0) for k in FP_KINDS}


def scene(frames=("a", "b", "c"), split=("dev", "dev", "test"), zoom=("1", "2", "1")):
    # frame a: deer [0,0,10,10], sheep [20,20,40,40]; frame b: tree [0,0,100,100]; frame c: empty
    return Scene(classes=CLASSES, frames=np.array(frames), split=np.array(split),
                 session=np.array(["s1", "s1", "s2"]), zoom=np.array(zoom), scale=np.array([2.0, 1.0, 1.0]),
                 label_frame=np.array([0, 0, 1]), label_index=np.array([0, 1, 0]),
                 label_class=np.array([0, 1, 2]),
                 label_boxes=np.array([[0, 0, 10, 10], [20, 20, 40, 40], [0, 0, 100, 100]], float),
                 label_crowd=np.zeros(3, bool))


# detections: frame, class, box, score
DETS = [
    (0, 0, [0, 0, 10, 10], 0.9),     # deer TP
    (0, 0, [0, 0, 10, 10.2], 0.8),   # duplicate deer: NMS removes it
    (0, 0, [20, 20, 40, 40], 0.7),   # deer on the sheep: FP, wrong target
    (0, 1, [20, 20, 40, 40], 0.3),   # sheep TP only at thresholds <= 0.3
    (1, 3, [50, 50, 60, 60], 0.6),   # relic: class with no labels -> FP
    (2, 2, [0, 0, 5, 5], 0.4),       # tree on the empty frame -> FP
]


def scored(nms_iou=0.5):
    f, c, b, s = zip(*DETS)
    return score_detections(scene(), frame=np.array(f), cls=np.array(c), boxes=np.array(b, float),
                            score=np.array(s), nms_iou=nms_iou, match_iou=0.5)


def curves(s, *, grid):
    """The curves of every frame of ``s`` on the curve ``grid`` (a tally of one chunk)."""
    t = Tally.empty(frame_groups(s.scene), classes=s.scene.classes, band_edges=[], grid=grid)
    op = operating_point(s, Served.at(np.full(len(s.scene.classes), 0.5)))
    t.add(s, op, wrong=wrong_targets(s, op), anatomy=error_anatomy(s, op), of_frame=t.groups.of_frame)
    return t.curves()


def test_counts_rates_and_zero_division_policy():
    k = Counts(tp=3, fp=1, fn=2, frames=4)
    assert (k.precision, k.recall, k.f1, k.fp_per_frame) == (0.75, 0.6, pytest.approx(6 / 9, abs=1e-6), 0.25)
    z = Counts(0, 0, 0, 0)
    assert (z.precision, z.recall, z.f1, z.fp_per_frame) == (None, None, None, None)
    assert Counts(0, 2, 0, 1).recall is None and Counts(0, 2, 0, 1).f1 == 0.0


def test_nms_then_match_then_threshold_hand_counts():
    s = scored()
    assert len(s.score) == 5                      # the duplicate is gone
    op = operating_point(s, Served.at(np.array([0.35, 0.35, 0.35, 0.35])))
    allf = np.ones(3, bool)
    m = summarise(s, op, frame_mask=allf, min_support=1, critical=["deer", "sheep"], band_edges=[16, 48])
    # TP: deer; FP: deer-on-sheep, relic, tree(empty frame); FN: sheep (0.3 < 0.35), tree
    assert m["micro"] == {"precision": 0.25, "recall": pytest.approx(1 / 3, abs=1e-6),
                          "f1": pytest.approx(2 / 7, abs=1e-6),
                          "tp": 1, "fp": 3, "fn": 2, "fp_per_frame": 1.0, "frames": 3,
                          # deer-on-sheep: class confusion aimed at the sheep; relic (IoU 0.01 with the
                          # tree) and the tree on the empty frame: background; the tree label: missed
                          "fp_anatomy": anatomy(class_confusion=1, background=2),
                          "fn_anatomy": {"aimed": 1, "missed": 1}}
    assert m["per_class"]["relic"] == {"precision": 0.0, "recall": None, "f1": 0.0, "support": 0,
                                       "tp": 0, "fp": 1, "fn": 0, "qualified": False,
                                       "fp_anatomy": anatomy(background=1), "fn_anatomy": {"aimed": 0, "missed": 0}}
    assert m["per_class"]["deer"]["fp"] == 1 and m["per_class"]["deer"]["tp"] == 1
    assert m["critical"] == {"deer": {"missed": 0, "wrong": 1}, "sheep": {"missed": 1, "wrong": 0},
                             "total": {"missed": 1, "wrong": 1}}
    # lower the sheep threshold: the sheep becomes TP
    op2 = operating_point(s, Served.at(np.array([0.35, 0.3, 0.35, 0.35])))
    m2 = summarise(s, op2, frame_mask=allf, min_support=1, critical=[], band_edges=[16, 48])
    assert (m2["micro"]["tp"], m2["micro"]["fn"]) == (2, 1)


def test_without_nms_the_duplicate_is_a_fp():
    s = scored(nms_iou=None)
    op = operating_point(s, Served.at(np.full(4, 0.35)))
    m = summarise(s, op, frame_mask=np.ones(3, bool), min_support=1, critical=[], band_edges=[])
    assert m["micro"]["fp"] == 4


def test_splits_zoom_and_bands():
    s = scored()
    op = operating_point(s, Served.at(np.full(4, 0.35)))
    sc = s.scene
    dev = summarise(s, op, frame_mask=sc.split == "dev", min_support=1, critical=[], band_edges=[16, 48])
    test = summarise(s, op, frame_mask=sc.split == "test", min_support=1, critical=[], band_edges=[16, 48])
    assert (dev["micro"]["tp"], dev["micro"]["fp"], dev["micro"]["fn"], dev["micro"]["frames"]) == (1, 2, 2, 2)
    assert (test["micro"]["tp"], test["micro"]["fp"], test["micro"]["fn"], test["micro"]["frames"]) == (0, 1, 0, 1)
    # zoom "1": frames a and c
    z = summarise(s, op, frame_mask=np.ones(3, bool), min_support=1, critical=[], band_edges=[16, 48])["by_zoom"]
    assert list(z) == ["zoom_1", "zoom_2"]
    assert (z["zoom_1"]["tp"], z["zoom_1"]["fp"], z["zoom_1"]["fn"], z["zoom_1"]["frames"]) == (1, 2, 1, 2)
    assert (z["zoom_2"]["tp"], z["zoom_2"]["fp"], z["zoom_2"]["fn"], z["zoom_2"]["frames"]) == (0, 1, 1, 1)
    # bands at input: deer 10*2=20 (16to48), sheep 20*2=40 (16to48), tree 100 (ge48);
    # FP: deer-on-sheep 40 (16to48), relic 10 (lt16), tree-on-empty 5 (lt16)
    b = summarise(s, op, frame_mask=np.ones(3, bool), min_support=1, critical=[], band_edges=[16, 48])["by_band"]
    assert list(b) == ["lt16", "16to48", "ge48"]
    assert (b["lt16"]["tp"], b["lt16"]["fp"], b["lt16"]["fn"]) == (0, 2, 0)
    assert (b["16to48"]["tp"], b["16to48"]["fp"], b["16to48"]["fn"], b["16to48"]["support"]) == (1, 1, 1, 2)
    assert (b["ge48"]["tp"], b["ge48"]["fn"]) == (0, 1)


def test_confusion_matrix_rows_are_labels_and_columns_detections():
    s = scored()
    op = operating_point(s, Served.at(np.full(4, 0.35)))
    mat = confusion(s, op)
    bg = 4
    assert mat[0, 0] == 1             # deer TP
    assert mat[1, 0] == 1             # the sheep label was "seen" as deer
    assert mat[bg, 3] == 1 and mat[bg, 2] == 1   # relic and tree FPs on background
    assert mat[2, bg] == 1            # tree missed
    assert mat.sum(axis=1)[:4].tolist() == [1, 1, 1, 0]
    assert mat.sum(axis=0)[:4].tolist() == [2, 0, 1, 1]


def test_confusion_by_group_puts_each_cell_in_its_frames_group():
    """Frames a, b in group 0, c in group 1: a's deer TP and sheep-seen-as-deer, b's relic FP and
    missed tree go to group 0, c's tree FP on background to group 1; a frame of group -1 is not
    counted; the groups add up to the whole matrix."""
    s = scored()
    op = operating_point(s, Served.at(np.full(4, 0.35)))
    bg = 4
    by = confusion_by_group(s, op, of_frame=np.array([0, 0, 1]), n_groups=2)
    assert by.shape == (2, 5, 5) and np.array_equal(by.sum(axis=0), confusion(s, op))
    assert (by[0, 0, 0], by[0, 1, 0], by[0, bg, 3], by[0, 2, bg], by[0].sum()) == (1, 1, 1, 1, 4)
    assert (by[1, bg, 2], by[1].sum()) == (1, 1)
    only_c = confusion_by_group(s, op, of_frame=np.array([-1, -1, 0]), n_groups=1)
    assert only_c.sum() == 1 and only_c[0, bg, 2] == 1


def test_curves_agree_with_operating_points_at_every_threshold():
    s = scored()
    grid = threshold_grid(0.05)
    cv = curves(s, grid=grid)
    for i in (0, 25, 30, 35, 60, 95):
        t = grid[i]
        op = operating_point(s, Served.at(np.full(4, t)))
        m = summarise(s, op, frame_mask=np.ones(3, bool), min_support=1, critical=[], band_edges=[])
        micro = m["micro"]
        assert (cv["all"].tp[i], cv["all"].fp[i], cv["all"].fn[i]) == (micro["tp"], micro["fp"], micro["fn"])
        for name in CLASSES:
            pc = m["per_class"][name]
            assert (cv[name].tp[i], cv[name].fp[i], cv[name].fn[i]) == (pc["tp"], pc["fp"], pc["fn"])


def test_best_thresholds_and_support_rule():
    s = scored()
    grid = threshold_grid(0.05)
    cv = curves(s, grid=grid)
    best = best_thresholds(cv, support={"deer": 1, "sheep": 1, "tree": 1, "relic": 0}, min_support=1, default=0.35)
    assert cv["tree"].tp.max() == 0
    assert best["sheep"] == 0.3        # highest threshold still catching the sheep at 0.3
    assert best["deer"] == 0.9         # drop the 0.7 FP, keep the 0.9 TP
    assert best["relic"] == 0.35       # no support: default
    assert best["tree"] == 0.35        # supported but never found: F1 0 everywhere, default
    assert best_thresholds(cv, support={"deer": 1}, min_support=5, default=0.35)["deer"] == 0.35


def test_grid_and_keys():
    g = threshold_grid(0.05)
    assert g[0] == 0.05 and g[-1] == 1.0 and len(g) == 96
    assert threshold_grid(0.055)[:2].tolist() == [0.055, 0.06]
    assert band_names([16, 48]) == ["lt16", "16to48", "ge48"]
    assert zoom_key("0.5") == "zoom_0_5" and zoom_key("") == "zoom_unknown"


@pytest.mark.parametrize("floor, start", [
    (0.0, [0.0, 0.01]), (0.01, [0.01, 0.02]), (0.0100004, [0.01, 0.02]), (0.0123456, [0.012346, 0.02]),
    (0.00999999996, [0.01, 0.02]), (0.9999, [0.9999, 1.0]), (1.0, [1.0])])
def test_the_grid_starts_at_the_floor_rounded_and_never_repeats_it(floor, start):
    g = threshold_grid(floor)
    assert g[:2].tolist() == start and g[-1] == 1.0 and (np.diff(g) > 0).all()


def test_the_grid_and_the_chunk_check_do_not_load_numpy_ma():
    """np.unique's plain call imports numpy.ma (~13 ms of a sweep stage's run): the scoring path avoids it."""
    code = ("import sys, numpy as np; from candor_eval.detection.scoring.metrics import threshold_grid; "
            "threshold_grid(0.05); print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_empty_everything():
    sc = Scene(classes=("deer",), frames=np.array(["a"]), split=np.array(["dev"]), session=np.array(["s"]),
               zoom=np.array(["1"]), scale=np.ones(1), label_frame=np.zeros(0, int), label_index=np.zeros(0, int),
               label_class=np.zeros(0, int), label_boxes=np.zeros((0, 4)), label_crowd=np.zeros(0, bool))
    s = score_detections(sc, frame=np.zeros(0, int), cls=np.zeros(0, int), boxes=np.zeros((0, 4)),
                         score=np.zeros(0), nms_iou=0.5, match_iou=0.5)
    op = operating_point(s, Served.at(np.array([0.35])))
    m = summarise(s, op, frame_mask=np.ones(1, bool), min_support=1, critical=["deer"], band_edges=[16])
    assert m["micro"] == {"precision": None, "recall": None, "f1": None, "tp": 0, "fp": 0, "fn": 0,
                          "fp_per_frame": 0.0, "frames": 1, "fp_anatomy": anatomy(),
                          "fn_anatomy": {"aimed": 0, "missed": 0}}
    assert confusion(s, op).sum() == 0


def test_no_threshold_does_not_find_unmatched_labels():
    s = scored()
    op = operating_point(s, Served.at(np.full(4, -np.inf)))
    # the tree label has no detection at all: still a FN without any threshold
    assert op.fn.tolist() == [False, False, True]


@pytest.mark.parametrize("box, scale, size", [
    ([0, 0, 8, 2], 1.0, 4.0),          # sqrt(8 * 2)
    ([10, 10, 40, 40], 0.5, 15.0),     # 30 px at half scale
    ([0, 0, 16, 16], 3.0, 48.0),       # exactly on a band edge
    ([5, 5, 5, 9], 2.0, 0.0),          # zero width: size 0
    ([5, 5, 3, 9], 2.0, 0.0),          # negative width: size 0, never NaN
])
def test_size_at_input(box, scale, size):
    assert size_at_input(np.array([box], dtype=float), np.array([scale])).tolist() == [size]


def test_size_at_input_decides_the_band():
    """A box on an edge falls in the upper band (``[e0, e1)``)."""
    sizes = size_at_input(np.array([[0, 0, 15.9, 16], [0, 0, 16, 16], [0, 0, 48, 48]], dtype=float), np.ones(3))
    assert np.searchsorted(np.array([16.0, 48.0]), sizes, side="right").tolist() == [0, 1, 2]


def test_rate_counts_are_the_counts_behind_every_rate():
    s = scored()
    op = operating_point(s, Served.at(np.zeros(4)))
    block = summarise(s, op, frame_mask=np.ones(3, bool), min_support=1, critical=[], band_edges=[16.0])
    counts = rate_counts({"all": block})
    # kept after NMS: deer TP, deer FP, sheep TP, relic FP, tree FP; the tree label is missed
    assert (counts["all.micro.precision"].k, counts["all.micro.precision"].n) == (2, 5)
    assert (counts["all.micro.recall"].k, counts["all.micro.recall"].n) == (2, 3)
    assert counts["all.per_class.relic.recall"].n == 0 and block["per_class"]["relic"]["recall"] is None
    assert {c.unit for k, c in counts.items() if k.endswith("precision")} == {"detection"}
    assert {c.unit for k, c in counts.items() if k.endswith("recall")} == {"label"}


def test_size_at_input_is_the_plain_expression_bit_for_bit_whatever_the_dtype():
    """The in-place arithmetic gives the bits of ``sqrt(max(w, 0) * max(h, 0)) * scale`` and its dtype, for
    float64, float32 and integer boxes, a scale per box or one for all; the input is left untouched."""
    rng = np.random.default_rng(3)
    corner = rng.uniform(-50, 500, (200, 2))
    base = np.concatenate([corner, corner + rng.uniform(-5, 90, (200, 2))], axis=1)   # some inverted: size 0
    for boxes in (base, base.astype(np.float32), np.round(base).astype(np.int64)):
        for scale in (rng.uniform(0.1, 3, 200), 0.75):
            before = boxes.copy()
            w = np.maximum(boxes[:, 2] - boxes[:, 0], 0.0)
            h = np.maximum(boxes[:, 3] - boxes[:, 1], 0.0)
            want = np.sqrt(w * h) * scale
            got = size_at_input(boxes, scale)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
            assert np.array_equal(boxes, before) and (got == 0).any()
