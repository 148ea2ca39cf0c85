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


def test_fail_quotes_got_once():
    """``fail`` quotes ``got`` itself: ``got "'birds'"`` was a caller quoting it a second time."""
    err = fail("--set", "unknown detection set", expected="a set of detector.sets: detector", got="birds")
    assert "got 'birds')" in err.message and "\"'" not in err.message


def test_no_caller_of_fail_quotes_got_itself():
    """Every ``fail(..., got=repr(x))`` in the package would print ``x`` quoted twice."""
    import ast
    from pathlib import Path

    import candor_eval

    offenders = []
    for path in Path(candor_eval.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "fail":
                offenders += [f"{path.name}:{node.lineno}" for kw in node.keywords if kw.arg == "got"
                              and isinstance(kw.value, ast.Call) and getattr(kw.value.func, "id", "") == "repr"]
    assert offenders == []
