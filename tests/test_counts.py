"""Tests for candor/common/counts.py: the k-of-n record scorers write next to their rates."""
from __future__ import annotations

import pytest

from candor.common.counts import Count, counts_block, read_counts
from candor.common.errors import InputError


def test_block_round_trips_in_key_order():
    block = counts_block({"b.recall": Count(3, 4, "label"), "a.hit": Count(0, 0, "lot")})
    assert list(block) == ["b.recall", "a.hit"] and block["b.recall"] == {"k": 3, "n": 4, "unit": "label"}
    assert read_counts({"counts": block, "b": {}}, where="m.json") == {"b.recall": Count(3, 4, "label"),
                                                                      "a.hit": Count(0, 0, "lot")}
    assert read_counts({"b": 1}, where="m.json") == {}


@pytest.mark.parametrize("k, n, unit", [(5, 4, "lot"), (-1, 4, "lot"), (1, 4, "")])
def test_impossible_counts_are_refused(k, n, unit):
    with pytest.raises(ValueError):
        Count(k, n, unit)


@pytest.mark.parametrize("entry", [{"k": 5, "n": 4, "unit": "lot"}, {"k": 1.0, "n": 4, "unit": "lot"},
                                   {"k": True, "n": 4, "unit": "lot"}, {"k": 1, "n": 4}, [1, 4]])
def test_a_bad_entry_names_file_and_key(entry):
    with pytest.raises(InputError, match=r"m.json:counts.x.hit: bad count"):
        read_counts({"counts": {"x.hit": entry}}, where="m.json")


@pytest.mark.parametrize("n", [2 ** 53, 10 ** 30, 2.0, "4", True, None])
def test_a_count_beyond_2_53_or_not_an_integer_is_refused(n):
    with pytest.raises(InputError, match="m.json:counts.r"):
        read_counts({"counts": {"r": {"k": 1, "n": n, "unit": "lot"}}}, where="m.json")
