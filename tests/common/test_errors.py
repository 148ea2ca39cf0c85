"""Tests for candor_eval/common/errors.py: an InputError survives a trip between processes whole."""
from __future__ import annotations

import pickle

from candor_eval.common.errors import InputError, Problem, fail


def test_an_input_error_pickles_with_its_problems_and_hint():
    one = fail("data/frames.csv:row 3", "unknown split", expected="dev or test", got="tset", hint="fix the row")
    many = InputError([Problem("a.csv", "missing"), Problem("b.csv", "tampered", got="sha 12")])
    for err in (one, many):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is InputError
        assert back.problems == err.problems and back.hint == err.hint
        assert str(back) == str(err) == err.message
    assert str(one) == "data/frames.csv:row 3: unknown split (expected dev or test, got 'tset')\nhint: fix the row"
