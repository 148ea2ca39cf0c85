"""Tests for candor_eval/detection/scoring/records.py: the record types sit at the bottom of the scoring room
(they import none of it), empty outcomes have the scene's shapes, the strict TPs are counted per frame, and
the AP matches keep 18 bytes a box."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import candor_eval.detection.scoring.records as records
from candor_eval.detection.scoring.records import STRICT_IOU, APMatches, APMatchesByClass, Outcomes, Scene


def scene(n_frames: int, label_frame: list[int]) -> Scene:
    n = len(label_frame)
    return Scene(classes=("deer",), frames=np.array([f"f{i}" for i in range(n_frames)]),
                 split=np.full(n_frames, "dev"), session=np.full(n_frames, ""), zoom=np.full(n_frames, ""),
                 scale=np.ones(n_frames), label_frame=np.array(label_frame, np.int64),
                 label_index=np.zeros(n, np.int64),
                 label_class=np.zeros(n, np.int64), label_boxes=np.zeros((n, 4)), label_crowd=np.zeros(n, bool))


def test_records_import_nothing_of_the_scoring_room():
    tree = ast.parse(Path(records.__file__).read_text(encoding="utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith("candor_eval.detection")]


def test_empty_outcomes_have_the_scenes_shapes():
    out = Outcomes.empty(scene(3, [0, 2]), n_kinds=5)
    assert out.tp.shape == out.fp.shape == out.fn.shape == out.fn_aimed.shape == (3,)
    assert out.fp_kinds.shape == (3, 5) and out.found.shape == (2,) and not out.found.any()
    assert np.isnan(out.tp_iou).all() and np.isnan(out.tp_edge).all()


def test_strict_true_positives_are_found_labels_at_iou_075_or_more():
    out = Outcomes.empty(scene(2, [0, 0, 1, 1]), n_kinds=5)
    out.found[:] = [True, True, True, False]
    out.tp_iou[:] = [STRICT_IOU, 0.74, 0.9, 0.95]        # the last is not found: not a TP
    assert out.tp_strict().tolist() == [1, 1]


def test_ap_matches_keep_18_bytes_a_box_and_concat_in_order():
    def part(frames):
        n = len(frames)
        return APMatches(np.array(frames, np.int32), np.zeros(n, np.int16), np.linspace(0.9, 0.1, n),
                         np.ones(n, np.uint16), np.zeros(n, np.uint16))

    parts = [part([0, 0]), part([2])]
    m = APMatches.concat(parts)
    assert parts == [] and m.frame.tolist() == [0, 0, 2]
    # int32 + int16 + float64 + 2 x uint16
    assert sum(getattr(m, f).itemsize for f in ("frame", "cls", "score", "tp", "ignored")) == 18
    assert m.of_frames(np.array([False, False, True])).frame.tolist() == [2]


def test_ap_matches_by_class_keep_each_class_in_the_order_it_came_at_16_bytes_a_box():
    ap = APMatchesByClass(3)
    for frames, classes in (([0, 0, 0], [2, 0, 2]), ([1, 1], [2, 2])):
        n = len(frames)
        ap.add(APMatches(np.array(frames, np.int32), np.array(classes, np.int16), np.arange(n, 0, -1) / 10,
                         np.arange(n, dtype=np.uint16), np.zeros(n, np.uint16)))
    stored = [a for parts in ap.parts for p in parts for a in p]
    assert sum(a.nbytes for a in stored) == 16 * 5
    two = ap.take(2)
    assert two.frame.tolist() == [0, 0, 1, 1] and two.tp.tolist() == [0, 2, 0, 1] and set(two.cls.tolist()) == {2}
    assert ap.parts[2] == [] and len(ap.take(2).frame) == 0 and len(ap.take(1).frame) == 0
    assert ap.take(0).score.tolist() == [0.2]
