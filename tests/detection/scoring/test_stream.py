"""Tests for candor_eval/detection/scoring/stream.py: the result does not depend on the chunks, every
frame must come exactly once, and the served detections come with the scene's frame indices."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.detections_file import RawDetections, split_chunks
from candor_eval.detection.scoring.scene import SceneInputs
from candor_eval.detection.scoring.scope import OutOfScope, class_scope
from candor_eval.detection.scoring.stream import collector_paused, frame_labels, score_stream, sub_scene
from candor_eval.detection.scoring.tally import Tally, frame_groups
from candor_eval.detection.served import Served, ServedNms
from tests.detection.scoring.test_tally import CLASSES, GRID, THR, random_dets, random_scene


def inputs_and_raw(seed=0):
    rng = np.random.default_rng(seed)
    scene = random_scene(rng)
    frame, cls, boxes, score = random_dets(rng, scene)
    scope = class_scope(CLASSES, CLASSES, class_map=None, where="card")
    inputs = SceneInputs(scene=scene, det_frame=frame, det_class=cls, scope=scope,
                         outside=OutOfScope((), np.zeros(0, int), np.zeros(0, int)), truth=None)
    frames = tuple(scene.frames.tolist())
    raw = RawDetections(header={}, frames=frames, sizes={f: (100, 100) for f in frames}, frame=frame, cls=cls,
                        boxes=boxes, score=score)
    return inputs, raw


def run(inputs, chunks, nms=None):
    served = []
    sc = inputs.scene
    tally = Tally.empty(frame_groups(sc), classes=sc.classes, band_edges=[16.0], grid=GRID)
    tally, out = score_stream(inputs, chunks, Served(THR, nms or ServedNms(0.6), match_iou=0.5), tally=tally,
                              critical=["deer"], where="m.jsonl", export=served.append)
    return tally, out, served


def test_the_result_does_not_depend_on_the_chunks():
    inputs, raw = inputs_and_raw()
    t1, o1, s1 = run(inputs, split_chunks(raw, max_boxes=10**9))
    for max_boxes in (1, 7, 50):
        t2, o2, s2 = run(inputs, split_chunks(raw, max_boxes=max_boxes))
        for field in ("counts", "frames", "hist", "labels", "matrix"):
            assert np.array_equal(getattr(t1, field), getattr(t2, field)), (max_boxes, field)
        for field in ("tp", "fp", "fn", "found"):
            assert np.array_equal(getattr(o1, field), getattr(o2, field)), (max_boxes, field)
        for field in ("frame", "cls", "boxes", "score"):
            a = np.concatenate([getattr(d, field) for d in s1])
            b = np.concatenate([getattr(d, field) for d in s2])
            assert np.array_equal(a, b), (max_boxes, field)
    # outcomes agree with the tally: per-frame TP/FP/FN sum to the micro counts
    micro = t1.block(splits=None, min_support=1, critical=[])["micro"]
    assert (o1.tp.sum(), o1.fp.sum(), o1.fn.sum()) == (micro["tp"], micro["fp"], micro["fn"])


def test_served_detections_name_scene_frames():
    inputs, raw = inputs_and_raw(1)
    _, out, served = run(inputs, split_chunks(raw, max_boxes=5))
    frames = np.concatenate([d.frame for d in served])
    per_frame = np.bincount(frames, minlength=len(raw.frames))
    assert np.array_equal(per_frame >= out.tp + out.fp, np.ones(len(raw.frames), bool))


def frames_only(*names):
    """A chunk of frames ``names`` without boxes (the frame checks come before any box)."""
    empty = np.zeros(0, np.int64)
    return RawDetections(header={}, frames=names, sizes={}, frame=empty, cls=empty, boxes=np.zeros((0, 4)),
                         score=np.zeros(0))


@pytest.mark.parametrize("chunks, message", [
    ([frames_only("f00", "f01"), frames_only("f01")], "a frame is unknown or repeated"),
    ([frames_only("f00", "zz")], "a frame is unknown or repeated"),
    ([frames_only("f00", "f00")], "a frame is unknown or repeated"),
    ([frames_only("f00")], "frames are missing"),
])
def test_every_frame_exactly_once(chunks, message):
    inputs, _ = inputs_and_raw()
    with pytest.raises(InputError, match=f"m.jsonl: the detections changed while they were read.*{message}"):
        run(inputs, chunks)


def test_sub_scene_keeps_each_frames_labels_in_order():
    inputs, _ = inputs_and_raw()
    scene = inputs.scene
    order, start = frame_labels(scene)
    sub, labels = sub_scene(scene, np.array([5, 2]), order=order, start=start)
    want = [k for f in (5, 2) for k in np.flatnonzero(scene.label_frame == f)]
    assert labels.tolist() == want
    assert sub.frames.tolist() == [scene.frames[5], scene.frames[2]]
    assert sub.label_frame.tolist() == [0 if scene.label_frame[k] == 5 else 1 for k in want]
    assert np.array_equal(sub.label_boxes, scene.label_boxes[want])


def test_the_collector_is_paused_in_the_block_and_restored_as_it_was_also_on_an_error():
    import gc
    was = gc.isenabled()
    try:
        gc.enable()
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled()
        with pytest.raises(KeyError), collector_paused():
            raise KeyError("x")
        assert gc.isenabled()
        gc.disable()                        # paused by the caller: still paused after
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
