"""Tests for candor_eval/detection/scoring/nms_match.py: NMS (within a class, or across a frame's classes),
the per-frame cap, then the greedy matcher, against the definition written one box at a time, and
on tiny hand-computed frames."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.detection.scoring.nms_match import score_detections
from candor_eval.detection.scoring.records import Scene


def _inter(a, b):
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _iou(a, b):
    inter = _inter(a, b)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def naive_score(sc, frame, cls, boxes, score, *, nms_iou, match_iou, agnostic=False, max_det=None):
    """The module docstring's definition, one detection at a time in plain Python loops: NMS within
    each class (or, ``agnostic``, each frame) by score, ties by class then input order; then the
    ``max_det`` highest-scored boxes of each frame; then matching."""
    order = sorted(range(len(score)), key=lambda i: (frame[i], cls[i], -score[i], i))
    def by_frame(i):
        return frame[i], -score[i], cls[i], i

    if nms_iou is not None:
        kept = []
        for i in sorted(order, key=by_frame):
            if not any(frame[j] == frame[i] and (agnostic or cls[j] == cls[i])
                       and _iou(boxes[j], boxes[i]) > nms_iou for j in kept):
                kept.append(i)
        order = [i for i in order if i in set(kept)]
    if max_det is not None:
        ranked = sorted(order, key=by_frame)
        capped = {i for i in ranked
                  if sum(1 for j in ranked if frame[j] == frame[i] and by_frame(j) < by_frame(i)) < max_det}
        order = [i for i in order if i in capped]
    taken, label, ignored = {}, [], []
    for i in order:
        best, best_iou = -1, -1.0
        for k in range(len(sc.label_frame)):
            if (sc.label_frame[k], sc.label_class[k]) != (frame[i], cls[i]) or sc.label_crowd[k] or k in taken:
                continue
            v = _iou(boxes[i], sc.label_boxes[k])
            if v >= match_iou and v > best_iou:       # strict: an IoU tie keeps the lower label index
                best, best_iou = k, v
        if best >= 0:
            taken[best] = i
        area = (boxes[i][2] - boxes[i][0]) * (boxes[i][3] - boxes[i][1])
        in_crowd = best < 0 and area > 0 and any(
            sc.label_crowd[k] and (sc.label_frame[k], sc.label_class[k]) == (frame[i], cls[i])
            and _inter(boxes[i], sc.label_boxes[k]) / area >= match_iou
            for k in range(len(sc.label_frame)))
        label.append(best)
        ignored.append(in_crowd)
    label_score = [score[taken[k]] if k in taken else -np.inf for k in range(len(sc.label_frame))]
    return order, label, ignored, label_score


def random_scene(rng, n_frames=12, n_cls=3, n_lab=40):
    lf, lc = rng.integers(0, n_frames, n_lab), rng.integers(0, n_cls, n_lab)
    xy = np.round(rng.uniform(0, 40, (n_lab, 2)))
    lb = np.hstack([xy, xy + np.round(rng.uniform(2, 20, (n_lab, 2)))])
    return Scene(classes=tuple(f"c{i}" for i in range(n_cls)), frames=np.array([f"f{i}" for i in range(n_frames)]),
                 split=np.full(n_frames, "dev"), session=np.full(n_frames, "s"), zoom=np.full(n_frames, "1"),
                 scale=np.ones(n_frames), label_frame=lf, label_index=np.zeros(n_lab, int), label_class=lc,
                 label_boxes=lb, label_crowd=rng.random(n_lab) < 0.1)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nms_iou, agnostic, max_det", [(None, False, None), (0.5, False, None), (0.5, True, None),
                                                         (0.5, False, 4), (0.5, True, 3), (None, False, 2)])
def test_chunked_scoring_equals_the_naive_definition(seed, nms_iou, agnostic, max_det):
    rng = np.random.default_rng(seed)
    sc = random_scene(rng)
    n = 300
    src = rng.integers(0, len(sc.label_frame), n)        # jittered copies of labels, some of another frame/class
    frame = np.where(rng.random(n) < 0.8, sc.label_frame[src], rng.integers(0, 12, n))
    cls = np.where(rng.random(n) < 0.8, sc.label_class[src], rng.integers(0, 3, n))
    boxes = sc.label_boxes[src] + np.round(rng.normal(0, 1.5, (n, 4)))
    boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2])
    score = np.round(rng.uniform(0, 1, n), 1)             # many score ties: input order decides
    order, label, ignored, label_score = naive_score(sc, frame, cls, boxes, score, nms_iou=nms_iou, match_iou=0.5,
                                                     agnostic=agnostic, max_det=max_det)
    for chunk in (1, 40, 10_000):
        s = score_detections(sc, frame=frame, cls=cls, boxes=boxes, score=score, nms_iou=nms_iou, match_iou=0.5,
                             agnostic=agnostic, max_det=max_det, chunk_dets=chunk)
        assert s.frame.tolist() == frame[order].tolist() and s.cls.tolist() == cls[order].tolist()
        assert s.boxes.tolist() == boxes[order].tolist() and s.score.tolist() == score[order].tolist()
        assert s.label.tolist() == label
        assert s.ignored.tolist() == ignored
        assert s.label_score.tolist() == label_score


def one_frame(labels: list[tuple[int, list[float]]]) -> Scene:
    """A scene of one frame ``f`` with ``labels`` (class, xyxy) of classes ``a``, ``b``."""
    n = len(labels)
    return Scene(classes=("a", "b"), frames=np.array(["f"]), split=np.array(["dev"]), session=np.array(["s"]),
                 zoom=np.array(["1"]), scale=np.ones(1), label_frame=np.zeros(n, np.int64),
                 label_index=np.arange(n), label_class=np.array([c for c, _ in labels], np.int64),
                 label_boxes=np.array([b for _, b in labels], float).reshape(-1, 4), label_crowd=np.zeros(n, bool))


# three boxes on one frame: a 0.9 and b 0.8 on the same spot (IoU 1), a 0.7 elsewhere
BOXES = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [20, 20, 30, 30]], float)
CLS, SCORE = np.array([0, 1, 0]), np.array([0.9, 0.8, 0.7])


@pytest.mark.parametrize("agnostic, max_det, kept", [
    (False, None, [(0, 0.9, 0), (0, 0.7, -1), (1, 0.8, 1)]),   # within each class: nothing overlaps
    (True, None, [(0, 0.9, 0), (0, 0.7, -1)]),                 # across classes: the b box under the a box goes
    (False, 2, [(0, 0.9, 0), (1, 0.8, 1)]),                    # the two highest-scored boxes of the frame
    (True, 1, [(0, 0.9, 0)]),
])
def test_nms_scope_and_cap_by_hand(agnostic, max_det, kept):
    """Kept boxes as (class, score, matched label) in (class, score descending) order; labels: a and b
    on the spot of the first two boxes; each label's score is that of the kept box that matched it."""
    scene = one_frame([(0, [0, 0, 10, 10]), (1, [0, 0, 10, 10])])
    s = score_detections(scene, frame=np.zeros(3, int), cls=CLS, boxes=BOXES, score=SCORE, nms_iou=0.5,
                         match_iou=0.5, agnostic=agnostic, max_det=max_det)
    assert list(zip(s.cls.tolist(), s.score.tolist(), s.label.tolist())) == kept
    assert s.label_score.tolist() == [0.9, 0.8 if (1, 0.8, 1) in kept else -np.inf]


def test_without_nms_every_box_is_matched_at_most_once():
    """Two a boxes on one a label: the higher-scored one matches, the other is unmatched (label -1)."""
    scene = one_frame([(0, [0, 0, 10, 10])])
    s = score_detections(scene, frame=np.zeros(2, int), cls=np.zeros(2, int), boxes=BOXES[:2],
                         score=np.array([0.6, 0.8]), nms_iou=None, match_iou=0.5)
    assert s.score.tolist() == [0.8, 0.6] and s.label.tolist() == [0, -1] and s.label_score.tolist() == [0.8]


def test_no_detection_and_no_label():
    s = score_detections(one_frame([]), frame=np.zeros(0, int), cls=np.zeros(0, int), boxes=np.zeros((0, 4)),
                         score=np.zeros(0), nms_iou=0.5, match_iou=0.5)
    assert len(s.frame) == len(s.label) == len(s.label_score) == 0 and s.match_iou == 0.5


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("nms_iou", [None, 0.6])
def test_ap_matched_in_the_same_pass_equals_match_for_ap_on_the_same_boxes(seed, nms_iou):
    """``ap=True``: the operating point's match is unchanged and ``Scored.ap`` is what
    :func:`match_for_ap` gives on the boxes after NMS. Labels in identical pairs make IoU ties between
    labels (the two tie rules then differ: candor's lower index, AP's higher); one frame and class
    with 150 boxes exceeds AP's 100 boxes a group; crowd labels are ignored regions."""
    from candor_eval.detection.scoring.coco_ap import match_for_ap

    rng = np.random.default_rng(seed)
    sc = random_scene(rng, n_lab=30)
    twins = replace_labels(sc, np.concatenate([sc.label_boxes, sc.label_boxes]))
    n = 400
    src = rng.integers(0, len(twins.label_frame), n)
    frame, cls = twins.label_frame[src].copy(), twins.label_class[src].copy()
    frame[:150], cls[:150] = 0, 0                        # one crowded group beyond AP's cap
    boxes = twins.label_boxes[src] + np.round(rng.normal(0, 1.0, (n, 4)))
    boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2] + 1)
    score = np.round(rng.uniform(0, 1, n), 1)
    for chunk in (7, 10_000):
        plain = score_detections(twins, frame=frame, cls=cls, boxes=boxes, score=score, nms_iou=nms_iou,
                                 match_iou=0.5, chunk_dets=chunk)
        both = score_detections(twins, frame=frame, cls=cls, boxes=boxes, score=score, nms_iou=nms_iou,
                                match_iou=0.5, chunk_dets=chunk, ap=True)
        assert plain.ap is None and both.ap is not None
        assert both.label.tolist() == plain.label.tolist() and both.ignored.tolist() == plain.ignored.tolist()
        ref = match_for_ap(n_classes=3, label_frame=twins.label_frame, label_class=twins.label_class,
                           label_boxes=twins.label_boxes, label_crowd=twins.label_crowd, det_frame=plain.frame,
                           det_class=plain.cls, det_boxes=plain.boxes, det_score=plain.score)
        for f in ("frame", "cls", "score", "tp", "ignored"):
            assert getattr(both.ap, f).tolist() == getattr(ref, f).tolist(), f
        assert ref.tp.any() and ref.ignored.any() and (nms_iou is not None or len(ref.frame) < len(plain.frame))


def replace_labels(sc: Scene, boxes: np.ndarray) -> Scene:
    """``sc`` with its labels listed twice (``boxes``: the label boxes, then the same again)."""
    twice = lambda a: np.concatenate([a, a])         # noqa: E731 - a one-line helper
    return Scene(classes=sc.classes, frames=sc.frames, split=sc.split, session=sc.session, zoom=sc.zoom,
                 scale=sc.scale, label_frame=twice(sc.label_frame), label_index=twice(sc.label_index),
                 label_class=twice(sc.label_class), label_boxes=boxes, label_crowd=twice(sc.label_crowd))
