"""candor_eval.common.unique: ``repeated(values)`` is the set of values that occur more than once, each
once, sorted (by ``repr`` when the values do not compare with each other). Equality is Python's: ``1``,
``1.0`` and ``True`` are one value. Empty input, or no repeat, is ``[]``."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from candor_eval.common.unique import repeat_of, repeated


@pytest.mark.parametrize("values, expected", [
    ([], []),
    (["deer", "boar", "sheep"], []),
    (["deer", "boar", "deer", "deer"], ["deer"]),
    ([3, 1, 2, 3, 1], [1, 3]),
    ([(1, 2), (0, 1), (1, 2)], [(1, 2)]),
    ("abcab", ["a", "b"]),                             # any iterable: a string's characters
    ([1, 1.0, True, 2], [1]),                          # equal in Python: one value, counted three times
    ([None, "a", 1, "a", None, 1], ["a", 1, None]),  # no order among them: by repr, "'a'" < "1" < "None"
])
def test_repeated_by_hand(values, expected):
    assert repeated(values) == expected


def test_a_generator_is_read_once():
    assert repeated(x % 3 for x in range(4)) == [0]


def counted(xs: list) -> set:
    return {x for x in xs if xs.count(x) > 1}


@given(st.lists(st.integers(-5, 5)))
def test_repeated_ints_are_the_values_counted_more_than_once_sorted(xs):
    assert repeated(xs) == sorted(counted(xs))


@given(st.lists(st.text(alphabet="ab", max_size=2)))
def test_repeated_strings_are_the_values_counted_more_than_once_sorted(xs):
    assert repeated(xs) == sorted(counted(xs))


@given(st.lists(st.one_of(st.integers(0, 3), st.sampled_from(["0", "x"]), st.none())))
def test_values_that_do_not_compare_are_sorted_by_repr(xs):
    got = repeated(xs)
    assert set(got) == counted(xs) and len(got) == len(set(got))
    if len({type(x) for x in got}) > 1:
        assert got == sorted(got, key=repr)


def test_repeat_of_names_both_rows():
    """A key an earlier row had: the problem names this row's field and the first row (or line)."""
    p = repeat_of({("T001", 1): 1}, ("T001", 1), where="r.jsonl:line 7.run", noun="(case, run)", unit="line")
    assert p is not None
    assert (p.where, p.what, p.got) == ("r.jsonl:line 7.run", "duplicate (case, run) (first on line 1)",
                                        "('T001', 1)")
    assert repeat_of({"a": 1}, "b", where="x", noun="id") is None
