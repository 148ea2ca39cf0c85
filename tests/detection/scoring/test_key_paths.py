"""Tests for candor_eval/detection/scoring/key_paths.py: nested metrics by dotted key path, and a frozen
evaluation compared with reproduced metrics path by path (numbers within ``tol``, else equal; a
path without a split prefix is read under ``all``)."""
from __future__ import annotations

import pytest

from candor_eval.detection.scoring.key_paths import compare_frozen, flatten

METRICS = {"all": {"micro": {"f1": 0.5, "tp": 3, "precision": None}, "per_class": {"deer": {"f1": 0.25}}},
           "test": {"micro": {"f1": 0.4}}}


def test_flatten_gives_every_leaf_by_its_path():
    assert flatten(METRICS) == {"all.micro.f1": 0.5, "all.micro.tp": 3, "all.micro.precision": None,
                                "all.per_class.deer.f1": 0.25, "test.micro.f1": 0.4}
    assert flatten({}) == {} and flatten({"a": {}}) == {}
    assert flatten({"a": [1, 2]}, prefix="x.") == {"x.a": [1, 2]}      # a list is a leaf


def test_a_reproduced_evaluation_compares_equal():
    expected = {"micro": {"f1": 0.5 + 1e-7, "tp": 3}, "test": {"micro": {"f1": 0.4}}}
    assert compare_frozen(expected, METRICS) == ([], 3)


@pytest.mark.parametrize("expected, differing", [
    ({"micro": {"f1": 0.5 + 2e-6}}, ["micro.f1"]),               # beyond 1e-6
    ({"micro": {"precision": 0.0}}, ["micro.precision"]),        # None is not 0
    ({"micro": {"recall": 0.5}}, ["micro.recall"]),              # a path the metrics lack
    ({"micro": {"tp": True}}, ["micro.tp"]),                     # a bool is not the number 1
    ({"test": {"micro": {"f1": 0.5}}, "micro": {"f1": 0.4}}, ["micro.f1", "test.micro.f1"]),
])
def test_differences_are_listed_sorted(expected, differing):
    got, compared = compare_frozen(expected, METRICS)
    assert got == differing and compared == len(flatten(expected))


def test_the_tolerance_is_a_parameter():
    assert compare_frozen({"micro": {"f1": 0.51}}, METRICS, tol=0.02) == ([], 1)
