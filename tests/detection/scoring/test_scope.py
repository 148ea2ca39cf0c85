"""Tests for candor_eval/detection/scoring/scope.py: card classes against the data set's classes."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.scoring.scope import OutOfScope, class_scope, out_of_scope_block

DATA = ("deer", "sheep", "boar")


@pytest.mark.parametrize("card, class_map, classes, out, model_to_class", [
    (["sheep", "boar", "deer"], None, ("deer", "sheep", "boar"), (), [1, 2, 0]),        # same names, any order
    (["doe", "ewe"], {"doe": "deer", "ewe": "sheep"}, ("deer", "sheep"), ("boar",), [0, 1]),   # renamed subset
    (["boar"], {"boar": "boar"}, ("boar",), ("deer", "sheep"), [0]),                  # subset, same name
])
def test_scope(card, class_map, classes, out, model_to_class):
    s = class_scope(DATA, card, class_map=class_map, where="m.yaml")
    assert (s.classes, s.out_of_scope, s.model_to_class.tolist()) == (classes, out, model_to_class)
    assert [s.classes[i] if i >= 0 else None for i in s.data_to_class.tolist()] == [
        c if c in classes else None for c in DATA]


@pytest.mark.parametrize("card, class_map, where", [
    (["deer", "sheep"], None, "m.yaml:classes"),                         # a subset must be declared
    (["deer", "sheep", "boar", "wolf"], None, "m.yaml:classes"),         # a class the data does not have
    (["deer", "sheep"], {"deer": "deer"}, "m.yaml:class_map"),           # a card class left unmapped
    (["deer", "sheep"], {"deer": "deer", "sheep": "goat"}, "m.yaml:class_map"),    # onto an unknown class
    (["deer", "doe"], {"deer": "deer", "doe": "deer"}, "m.yaml:class_map"),        # two onto one
])
def test_anything_else_names_both_lists(card, class_map, where):
    with pytest.raises(InputError) as err:
        class_scope(DATA, card, class_map=class_map, where="m.yaml")
    (p,) = err.value.problems
    assert p.where == where
    assert f"card classes [{', '.join(card)}]; data classes [deer, sheep, boar]" in p.got


def test_out_of_scope_block_counts_per_class_on_the_masked_frames():
    o = OutOfScope(("sheep", "boar"), label_frame=np.array([0, 0, 1, 2]), label_class=np.array([1, 0, 1, 1]))
    assert out_of_scope_block(o, frame_mask=np.array([True, False, True])) == {
        "labels": 3, "per_class": {"sheep": 1, "boar": 2}}
    empty = OutOfScope(("boar",), label_frame=np.zeros(0, np.int64), label_class=np.zeros(0, np.int64))
    assert out_of_scope_block(empty, frame_mask=np.array([True])) == {"labels": 0, "per_class": {"boar": 0}}
