"""Tests for candor_eval/detection/scoring/evaluation.py: the outcome rows of several models, made one by
one from per-frame and per-label arrays, come in the order of the rows sorted as tuples."""
from __future__ import annotations

import numpy as np

from candor_eval.detection.scoring.evaluation import frame_rows, label_rows
from candor_eval.detection.scoring.records import Outcomes, Scene


def scene(classes, label_class, label_index, label_frame, crowd):
    return Scene(classes=classes, frames=np.array(["b", "a,1", "c"]), split=np.array(["test", "dev", "test"]),
                 session=np.array(["s2", "s1", "s2"]), zoom=np.array(["1", "1", ""]), scale=np.ones(3),
                 label_frame=np.array(label_frame), label_index=np.array(label_index),
                 label_class=np.array(label_class), label_boxes=np.zeros((len(label_frame), 4)),
                 label_crowd=np.array(crowd, bool))


def test_rows_of_two_models_in_tuple_order():
    # "wide" is scored on deer and sheep; "narrow" on sheep only (deer out of scope: no rows)
    nan = np.nan
    wide = Outcomes(scene(("deer", "sheep"), [0, 1, 1, 0], [1, 0, 0, 2], [0, 0, 1, 0], [0, 0, 0, 1]),
                    tp=np.array([1, 0, 2]), fp=np.array([0, 3, 0]), fn=np.array([1, 1, 0]),
                    found=np.array([True, False, True, False]),
                    fp_kinds=np.array([[0, 0, 0, 0, 0], [1, 0, 0, 2, 0], [0, 0, 0, 0, 0]]),
                    fn_aimed=np.array([1, 0, 0]),
                    tp_iou=np.array([0.8, nan, 0.7, nan]), tp_edge=np.array([1.0, nan, 2.0, nan]))
    narrow = Outcomes(scene(("sheep",), [0, 0], [0, 0], [0, 1], [0, 0]),
                      tp=np.array([0, 1, 0]), fp=np.array([1, 1, 1]), fn=np.array([1, 0, 0]),
                      found=np.array([False, True]), fp_kinds=np.array([[0, 0, 0, 1, 0]] * 3),
                      fn_aimed=np.array([0, 0, 0]), tp_iou=np.array([nan, 0.9]), tp_edge=np.array([nan, 0.5]))
    outcomes = {"wide": wide, "narrow": narrow}
    # then the FPs by kind, fn_aimed, fn_missed and tp_strict (the frame's found labels at IoU >= 0.75)
    assert list(frame_rows(outcomes)) == [
        ("a,1", "dev", "s1", "1", "narrow", 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1),
        ("a,1", "dev", "s1", "1", "wide", 0, 3, 1, 1, 0, 0, 2, 0, 0, 1, 0),
        ("b", "test", "s2", "1", "narrow", 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0),
        ("b", "test", "s2", "1", "wide", 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1),
        ("c", "test", "s2", "", "narrow", 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0),
        ("c", "test", "s2", "", "wide", 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)]
    assert list(label_rows(outcomes)) == [
        ("a,1", "dev", 0, "sheep", "narrow", 1), ("a,1", "dev", 0, "sheep", "wide", 1),
        ("b", "test", 0, "sheep", "narrow", 0), ("b", "test", 0, "sheep", "wide", 0),
        ("b", "test", 1, "deer", "wide", 1)]          # the crowd label (b, 2) has no row
    assert list(frame_rows({"wide": wide})) == sorted(frame_rows({"wide": wide}))


def test_first_uses_are_built_before_a_fork_and_errors_left_to_scoring(tmp_path):
    """build_first_uses builds the card validator and the frame-line pattern in the calling process (a fresh
    interpreter here: nothing built before); a card it cannot read raises nothing there."""
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    script = (
        "import json, sys\n"
        "from candor_eval.detection import detections_file\n"
        "from candor_eval.detection.model_card import ModelCard\n"
        "from candor_eval.detection.scoring.evaluation import build_first_uses\n"
        "before = [ModelCard.__pydantic_complete__, detections_file.plain_line.cache_info().currsize]\n"
        "build_first_uses(sys.argv[1], 'nope')\n"
        "missing = [ModelCard.__pydantic_complete__, detections_file.plain_line.cache_info().currsize]\n"
        "build_first_uses(sys.argv[2], 'demo-v1')\n"
        "print(json.dumps([before, missing, [ModelCard.__pydantic_complete__]]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(ROOT / "models")], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [[False, 0], [False, 1], [True]]
