"""The strict majority rule, by hand: ties are no majority, in every form both tracks use."""
from __future__ import annotations

import pytest

from candor_eval.common.majority import majority_of, majority_value, strict_majority


@pytest.mark.parametrize("hits,total,held", [(2, 3, True), (1, 3, False), (2, 4, False), (3, 4, True), (1, 1, True),
                                             (0, 0, False), (3, 5, True)])
def test_more_than_half_of_the_runs(hits, total, held):
    assert strict_majority(hits, total) is held
    assert majority_of([True] * hits + [False] * (total - hits)) is held


@pytest.mark.parametrize(("values", "expected"), [
    (["hit", "hit", "wrong"], "hit"),       # 2 of 3
    (["hit", "wrong"], None),               # a tie is no majority
    (["hit", "wrong", "abstain"], None),    # a plurality is not a majority
    ([], None),
    ([True], True),
    ([None, None, 1], None),                # None held by a majority reads as no value
])
def test_the_value_a_strict_majority_holds(values, expected):
    assert majority_value(values) == expected
