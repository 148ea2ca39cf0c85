"""Tests for candor_eval/detection/scoring/tally.py: counts added chunk by chunk equal the counts of the
whole, and the curves equal the definition counted box by box (scores anywhere, not only on the grid)."""
from __future__ import annotations

import numpy as np

from candor_eval.detection.scoring.anatomy import error_anatomy
from candor_eval.detection.scoring.metrics import confusion, operating_point, threshold_grid, wrong_targets
from candor_eval.detection.scoring.nms_match import score_detections
from candor_eval.detection.scoring.records import Scene
from candor_eval.detection.scoring.stream import frame_labels, sub_scene
from candor_eval.detection.scoring.tally import Tally, frame_groups
from candor_eval.detection.served import Served

CLASSES = ("deer", "sheep", "boar")


def random_scene(rng, n_frames=30):
    lf, boxes = [], []
    for f in range(n_frames):
        for _ in range(int(rng.integers(0, 5))):
            xy = rng.uniform(0, 80, 2)
            lf.append(f)
            boxes.append([*xy, *(xy + rng.uniform(5, 30, 2))])
    n = len(lf)
    idx = np.zeros(n, int)
    for i in range(1, n):
        idx[i] = idx[i - 1] + 1 if lf[i] == lf[i - 1] else 0
    return Scene(classes=CLASSES, frames=np.array([f"f{i:02d}" for i in range(n_frames)]),
                 split=np.array(["dev" if i % 3 == 0 else "test" for i in range(n_frames)]),
                 session=np.full(n_frames, "s"), zoom=np.array([str(1 + i % 2) for i in range(n_frames)]),
                 scale=rng.uniform(0.5, 2, n_frames), label_frame=np.array(lf, int), label_index=idx,
                 label_class=rng.integers(0, 3, n), label_boxes=np.array(boxes).reshape(-1, 4),
                 label_crowd=rng.random(n) < 0.1)


def random_dets(rng, scene, per_label=3, scattered=40):
    near = np.repeat(np.arange(len(scene.label_frame)), per_label)
    frame = np.concatenate([scene.label_frame[near], rng.integers(0, len(scene.frames), scattered)])
    boxes = np.concatenate([scene.label_boxes[near] + rng.normal(0, 3, (len(near), 4)),
                            np.column_stack([xy := rng.uniform(0, 80, (scattered, 2)), xy + 15])])
    boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2])
    cls = np.concatenate([scene.label_class[near], rng.integers(0, 3, scattered)])
    cls[rng.random(len(cls)) < 0.2] = rng.integers(0, 3)
    score = rng.uniform(0.05, 1, len(cls))     # not rounded: the curves must not need the grid
    order = np.argsort(frame, kind="stable")
    return frame[order], cls[order], boxes[order], score[order]


THR = np.array([0.4, 0.3, 0.5])
GRID = threshold_grid(0.05)


def tally_of(scene, frame, cls, boxes, score):
    s = score_detections(scene, frame=frame, cls=cls, boxes=boxes, score=score, nms_iou=0.6, match_iou=0.5)
    op = operating_point(s, Served.at(THR))
    return s, op, wrong_targets(s, op, classes=[0])


def test_chunks_add_up_to_the_whole():
    rng = np.random.default_rng(0)
    scene = random_scene(rng)
    frame, cls, boxes, score = random_dets(rng, scene)
    groups = frame_groups(scene)
    whole = Tally.empty(groups, classes=CLASSES, band_edges=[16, 32], grid=GRID)
    s, op, wrong = tally_of(scene, frame, cls, boxes, score)
    whole.add(s, op, wrong=wrong, anatomy=error_anatomy(s, op), of_frame=groups.of_frame)
    parts = Tally.empty(groups, classes=CLASSES, band_edges=[16, 32], grid=GRID)
    order, start = frame_labels(scene)
    for frames in (np.arange(0, 7), np.arange(7, 8), np.arange(8, 30)):
        sub, _ = sub_scene(scene, frames, order=order, start=start)
        sel = np.isin(frame, frames)
        s, op, wrong = tally_of(sub, frame[sel] - frames[0], cls[sel], boxes[sel], score[sel])
        parts.add(s, op, wrong=wrong, anatomy=error_anatomy(s, op), of_frame=groups.of_frame[frames])
    for field in ("counts", "frames", "hist", "labels", "matrix"):
        assert np.array_equal(getattr(whole, field), getattr(parts, field)), field
    assert whole.counts.sum() > 0 and whole.matrix.sum() > 0
    kw = dict(min_support=2, critical=["deer"])
    assert whole.block(splits=None, **kw) == parts.block(splits=None, **kw)
    assert whole.block(splits=("dev",), **kw)["micro"]["frames"] == 10
    dev, test = whole.confusion(splits=("dev",)), whole.confusion(splits=("test",))
    assert np.array_equal(dev + test, whole.confusion()) and 0 < dev.sum() < whole.confusion().sum()


def test_the_matrix_is_the_operating_points_when_curves_are_scored_apart():
    """With the curves from another scoring (the floor, as for a class-agnostic NMS), the confusion
    matrix still counts the operating point's boxes (those ``op`` marks)."""
    rng = np.random.default_rng(2)
    scene = random_scene(rng)
    frame, cls, boxes, score = random_dets(rng, scene)
    groups = frame_groups(scene)
    s, op, wrong = tally_of(scene, frame, cls, boxes, score)
    keep = score >= 0.5
    floor = score_detections(scene, frame=frame[keep], cls=cls[keep], boxes=boxes[keep], score=score[keep],
                             nms_iou=0.6, match_iou=0.5)
    tally = Tally.empty(groups, classes=CLASSES, band_edges=[], grid=GRID)
    tally.add(s, op, wrong=wrong, anatomy=error_anatomy(s, op), of_frame=groups.of_frame, curves=floor)
    assert len(floor.cls) != len(s.cls)
    assert np.array_equal(tally.confusion(), confusion(s, op))


def test_curves_are_the_definition_counted_box_by_box():
    rng = np.random.default_rng(1)
    scene = random_scene(rng)
    frame, cls, boxes, score = random_dets(rng, scene)
    groups = frame_groups(scene)
    tally = Tally.empty(groups, classes=CLASSES, band_edges=[], grid=GRID)
    s, op, wrong = tally_of(scene, frame, cls, boxes, score)
    tally.add(s, op, wrong=wrong, anatomy=error_anatomy(s, op), of_frame=groups.of_frame)
    regular = ~scene.label_crowd
    for splits in (None, ("test",), ("dev",)):
        curves = tally.curves(splits=splits)
        det_in = np.isin(scene.split[s.frame], splits or ("dev", "test"))
        lab_in = np.isin(scene.split[scene.label_frame], splits or ("dev", "test"))
        for j in (0, 10, 37, 60, 95):
            t = GRID[j]
            for c, name in [*enumerate(CLASSES), (None, "all")]:
                mine = det_in & (np.ones(len(s.cls), bool) if c is None else s.cls == c)
                labs = lab_in & regular & (np.ones(len(regular), bool) if c is None else scene.label_class == c)
                tp = sum(1 for k in np.flatnonzero(mine) if s.label[k] >= 0 and s.score[k] >= t)
                fp = sum(1 for k in np.flatnonzero(mine) if s.label[k] < 0 and not s.ignored[k] and s.score[k] >= t)
                fn = sum(1 for k in np.flatnonzero(labs) if not s.label_score[k] >= t)
                got = (curves[name].tp[j], curves[name].fp[j], curves[name].fn[j])
                assert got == (tp, fp, fn), (splits, name, t)
    whole, test, dev = (tally.curves(splits=sp)["all"] for sp in (None, ("test",), ("dev",)))
    assert np.array_equal(whole.tp, test.tp + dev.tp) and 0 < dev.tp[0] < whole.tp[0]


def test_a_score_exactly_on_a_threshold_counts_at_that_threshold():
    scene = Scene(classes=("deer",), frames=np.array(["a"]), split=np.array(["test"]), session=np.array([""]),
                  zoom=np.array([""]), scale=np.ones(1), label_frame=np.array([0]), label_index=np.array([0]),
                  label_class=np.array([0]), label_boxes=np.array([[0.0, 0, 10, 10]]), label_crowd=np.zeros(1, bool))
    grid = np.array([0.1, 0.3, 0.5])
    s = score_detections(scene, frame=np.array([0, 0]), cls=np.array([0, 0]),
                         boxes=np.array([[0.0, 0, 10, 10], [50.0, 50, 60, 60]]), score=np.array([0.3, 0.5]),
                         nms_iou=None, match_iou=0.5)
    op = operating_point(s, Served.at(np.array([0.3])))
    tally = Tally.empty(frame_groups(scene), classes=("deer",), band_edges=[], grid=grid)
    tally.add(s, op, wrong=np.zeros(2, bool), anatomy=error_anatomy(s, op), of_frame=np.array([0]))
    cv = tally.curves()["deer"]
    # the TP scores 0.3: counted at 0.1 and 0.3, not 0.5; the FP scores 0.5: counted everywhere
    assert cv.tp.tolist() == [1, 1, 0] and cv.fp.tolist() == [1, 1, 1] and cv.fn.tolist() == [0, 0, 1]


def test_cells_at_or_below_equals_searchsorted_right():
    """Values on the edges, between, below and above them, -inf (a label no detection found); no edge,
    a few edges (comparisons), many (binary search), and NaN (binary search)."""
    from candor_eval.detection.scoring.tally import cells_at_or_below

    rng = np.random.default_rng(8)
    values = np.concatenate([np.round(rng.uniform(-5, 60, 400)), [16.0, 48.0, -np.inf, np.inf]])
    for edges in (np.zeros(0), np.array([16.0, 48.0]), np.array([0.0, 0.0, 5.0]), np.sort(rng.uniform(0, 50, 30))):
        assert cells_at_or_below(edges, values).tolist() == np.searchsorted(edges, values, side="right").tolist()
    with_nan = np.array([1.0, np.nan, 20.0])
    assert cells_at_or_below(np.array([16.0]), with_nan).tolist() == \
        np.searchsorted(np.array([16.0]), with_nan, side="right").tolist()


def test_without_a_grid_no_histograms_are_kept_and_the_counts_are_the_same():
    """``grid`` empty (a metrics block alone, :func:`summarise`): ``hist`` is ``(3, G, C, 0)``, the curves are
    empty, and every count, label total and block equals the tally's with a grid."""
    rng = np.random.default_rng(1)
    scene = random_scene(rng)
    frame, cls, boxes, score = random_dets(rng, scene)
    groups = frame_groups(scene)
    s, op, wrong = tally_of(scene, frame, cls, boxes, score)
    tallies = [Tally.empty(groups, classes=CLASSES, band_edges=[16, 32], grid=g) for g in (GRID, np.zeros(0))]
    for t in tallies:
        t.add(s, op, wrong=wrong, anatomy=error_anatomy(s, op), of_frame=groups.of_frame)
    full, bare = tallies
    assert bare.hist.shape == (3, len(groups.split), len(CLASSES), 0) and full.hist.sum() > 0
    for field in ("counts", "frames", "labels", "matrix"):
        assert np.array_equal(getattr(full, field), getattr(bare, field)), field
    kw = dict(min_support=2, critical=["deer"])
    assert full.block(splits=None, **kw) == bare.block(splits=None, **kw)
    assert all(len(c.grid) == len(c.tp) == len(c.fp) == len(c.fn) == 0 for c in bare.curves().values())
