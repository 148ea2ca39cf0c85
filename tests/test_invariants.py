"""Property-based invariants of the scoring kernels (hypothesis): candor_eval.detection.scoring.boxes,
candor_eval.detection.scoring.matching, candor_eval.stats.rates.

- IoU is symmetric, in [0, 1], and 1 for a positive-area box with itself.
- NMS keeps a subset with no two kept boxes of one group above the IoU, and always the
  best box of each group.
- Matching: TP + FN = the regular label count, TP + FP (+ crowd-ignored) = the
  detections given to it; threshold then NMS then match gives TP + FP = kept detections;
  the result does not depend on the order of the detections (distinct scores) or of the
  labels (when no detection has an IoU tie between two different labels: the tie rule
  is order-based by definition).
- Wilson interval inside [0, 1] and containing k / n; exact McNemar p symmetric in
  (b, c), in (0, 1], and 1 at b = c.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from candor_eval.detection.scoring.boxes import box_iou, nms
from candor_eval.detection.scoring.matching import match_detections
from candor_eval.stats.rates import mcnemar_p, wilson

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

coord = st.floats(min_value=0, max_value=60, allow_nan=False).map(lambda v: round(v, 1))
size = st.floats(min_value=0, max_value=40, allow_nan=False).map(lambda v: round(v, 1))


@st.composite
def box(draw) -> list[float]:
    x, y, w, h = draw(coord), draw(coord), draw(size), draw(size)
    return [x, y, x + w, y + h]


@st.composite
def scene(draw, max_labels: int = 8, max_dets: int = 10, groups: int = 2):
    """Labels and detections in a few groups; detection scores are distinct."""
    n_lab = draw(st.integers(0, max_labels))
    n_det = draw(st.integers(0, max_dets))
    lab_boxes = np.array([draw(box()) for _ in range(n_lab)], dtype=np.float64).reshape(-1, 4)
    det_boxes = np.array([draw(box()) for _ in range(n_det)], dtype=np.float64).reshape(-1, 4)
    lab_groups = np.array(draw(st.lists(st.integers(0, groups - 1), min_size=n_lab, max_size=n_lab)), dtype=np.int64)
    det_groups = np.array(draw(st.lists(st.integers(0, groups - 1), min_size=n_det, max_size=n_det)), dtype=np.int64)
    scores = np.array(draw(st.lists(st.integers(1, 10_000), min_size=n_det, max_size=n_det, unique=True)),
                      dtype=np.float64) / 10_000
    crowd = np.array(draw(st.lists(st.booleans(), min_size=n_lab, max_size=n_lab)), dtype=bool)
    return lab_groups, lab_boxes, det_groups, det_boxes, scores, crowd


# ---------------------------------------------------------------- IoU and NMS


@SETTINGS
@given(st.lists(box(), min_size=1, max_size=6), st.lists(box(), min_size=1, max_size=6))
def test_iou_symmetric_and_in_unit_interval(a, b):
    m, mt = box_iou(np.array(a), np.array(b)), box_iou(np.array(b), np.array(a))
    assert m.shape == (len(a), len(b))
    assert np.allclose(m, mt.T, rtol=0, atol=1e-12)
    assert np.all((m >= 0) & (m <= 1))
    self_iou = np.diag(box_iou(np.array(a), np.array(a)))
    area = np.array([(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in a])
    assert np.allclose(self_iou[area > 0], 1.0)
    assert np.all(self_iou[area == 0] == 0)


@SETTINGS
@given(scene(max_labels=0, max_dets=14, groups=3), st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]))
def test_nms_keeps_a_subset_without_same_group_overlap(sc, thr):
    _, _, groups, boxes, scores, _ = sc
    keep = nms(groups, boxes, scores, iou=thr)
    assert keep.dtype == bool and keep.shape == (len(boxes),)
    kept = np.flatnonzero(keep)
    iou = box_iou(boxes[kept], boxes[kept])
    same = groups[kept][:, None] == groups[kept][None, :]
    off_diag = ~np.eye(len(kept), dtype=bool)
    assert not np.any((iou > thr) & same & off_diag)
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        assert keep[members[np.argmax(scores[members])]]      # the best box of a group is never suppressed
    # idempotent: NMS of the kept boxes keeps them all
    assert nms(groups[kept], boxes[kept], scores[kept], iou=thr).all()


# ---------------------------------------------------------------- matching


def counts(m, crowd: np.ndarray) -> tuple[int, int, int, int]:
    tp = int(m.det_tp.sum())
    fp = int(m.det_fp.sum())
    fn = int((~m.label_found & ~crowd).sum())
    return tp, fp, fn, int(m.det_ignored.sum())


@SETTINGS
@given(scene(), st.sampled_from([0.1, 0.5, 0.75]))
def test_tp_fn_is_label_count_and_tp_fp_is_detection_count(sc, iou):
    lg, lb, dg, db, s, crowd = sc
    m = match_detections(lg, lb, dg, db, s, iou=iou, label_crowd=crowd)
    tp, fp, fn, ignored = counts(m, crowd)
    assert tp + fn == int((~crowd).sum())
    assert tp + fp + ignored == len(s)
    # one-to-one and consistent both ways, never with a crowd label, always same group and IoU >= iou
    matched = np.flatnonzero(m.det_label >= 0)
    assert len(set(m.det_label[matched].tolist())) == len(matched)
    assert np.all(m.label_det[m.det_label[matched]] == matched)
    assert not np.any(crowd[m.det_label[matched]])
    assert np.all(lg[m.det_label[matched]] == dg[matched])
    if len(matched):
        pair_iou = np.array([box_iou(db[[d]], lb[[m.det_label[d]]])[0, 0] for d in matched])
        assert np.all(pair_iou >= iou - 1e-12)


@SETTINGS
@given(scene(), st.sampled_from([0.0, 0.3, 0.6]), st.sampled_from([0.3, 0.5, 1.0]))
def test_threshold_nms_match_counts_kept_detections(sc, thr, nms_iou):
    """The served pipeline: threshold, then same-group NMS, then matching. TP + FP = kept."""
    lg, lb, dg, db, s, _ = sc
    kept = (s >= thr)
    idx = np.flatnonzero(kept)
    keep = nms(dg[idx], db[idx], s[idx], iou=nms_iou)
    idx = idx[keep]
    m = match_detections(lg, lb, dg[idx], db[idx], s[idx], iou=0.5)
    tp, fp, fn, _ = counts(m, np.zeros(len(lg), bool))
    assert tp + fp == len(idx)
    assert tp + fn == len(lg)


@SETTINGS
@given(scene(), st.randoms(use_true_random=False))
def test_matching_does_not_depend_on_detection_order(sc, rnd):
    lg, lb, dg, db, s, crowd = sc
    perm = np.array(rnd.sample(range(len(s)), len(s)), dtype=np.int64)
    a = match_detections(lg, lb, dg, db, s, label_crowd=crowd)
    b = match_detections(lg, lb, dg[perm], db[perm], s[perm], label_crowd=crowd)
    # detection perm[i] of the original is detection i of the permuted input
    assert np.array_equal(b.det_label, a.det_label[perm])
    assert np.array_equal(b.det_ignored, a.det_ignored[perm])
    assert np.array_equal(b.label_found, a.label_found)


@SETTINGS
@given(scene(), st.randoms(use_true_random=False))
def test_matching_does_not_depend_on_label_order_without_iou_ties(sc, rnd):
    lg, lb, dg, db, s, crowd = sc
    iou = box_iou(db, lb) if len(db) and len(lb) else np.zeros((len(db), len(lb)))
    for d in range(len(db)):                      # the tie rule is order-based by definition: exclude ties
        cand = np.flatnonzero((lg == dg[d]) & ~crowd & (iou[d] >= 0.5))
        vals = iou[d, cand]
        for i in range(len(cand)):
            for j in range(i + 1, len(cand)):
                assume(vals[i] != vals[j] or np.array_equal(lb[cand[i]], lb[cand[j]]))
    perm = np.array(rnd.sample(range(len(lg)), len(lg)), dtype=np.int64)
    a = match_detections(lg, lb, dg, db, s, label_crowd=crowd)
    b = match_detections(lg[perm], lb[perm], dg, db, s, label_crowd=crowd[perm])
    assert counts(a, crowd) == counts(b, crowd[perm])
    # the same detections match boxes with the same coordinates
    for d in range(len(s)):
        if a.det_label[d] >= 0:
            assert np.array_equal(lb[a.det_label[d]], lb[perm][b.det_label[d]])
        else:
            assert b.det_label[d] < 0


# ---------------------------------------------------------------- rates


@SETTINGS
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_inside_unit_interval_and_contains_the_rate(kn, confidence):
    k, n = kn
    r = wilson(k, n, confidence=confidence)
    assert 0.0 <= r.lo <= r.rate <= r.hi <= 1.0
    assert r.rate == k / n
    if 0 < k < n:
        assert r.lo < r.rate < r.hi
    wider = wilson(k, n, confidence=0.999)
    assert wider.lo <= r.lo + 1e-12 and wider.hi >= r.hi - 1e-12


def test_wilson_empty_is_the_whole_interval():
    r = wilson(0, 0)
    assert (r.rate, r.lo, r.hi) == (None, 0.0, 1.0)


@SETTINGS
@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_symmetric_in_unit_interval(b, c):
    p = mcnemar_p(b, c)
    assert p == mcnemar_p(c, b)
    assert 0.0 < p <= 1.0
    if b == c:
        assert p == 1.0
    if b + c > 0 and b != c:
        # more lopsided at the same total is never less significant
        lo, hi = min(b, c), max(b, c)
        if lo > 0:
            assert mcnemar_p(lo - 1, hi + 1) <= p
