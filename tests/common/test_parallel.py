"""parallel.fork_map: the same results, in order, as a plain loop."""
from __future__ import annotations

import os

import pytest

from candor_eval.common.parallel import fork_map, groups_of


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


@pytest.mark.parametrize("n,k", [(5, 2), (4, 4), (3, 5), (0, 2), (7, 3)])
def test_groups_are_contiguous_and_balanced(n, k):
    groups = groups_of(list(range(n)), k)
    assert len(groups) == k and [x for g in groups for x in g] == list(range(n))
    assert max(map(len, groups)) - min(map(len, groups)) <= 1


def test_fork_map_equals_the_loop_and_uses_other_processes():
    out = fork_map(_square_and_pid, list(range(9)), workers=3)
    assert [v for v, _ in out] == [x * x for x in range(9)]
    pids = {p for _, p in out}
    assert os.getpid() in pids and len(pids) >= 2          # the caller works too, with forked workers


def test_one_worker_is_a_plain_loop():
    assert {p for _, p in fork_map(_square_and_pid, [1, 2, 3], workers=1)} == {os.getpid()}


def test_an_error_in_a_worker_is_raised():
    with pytest.raises(ValueError, match="three"):
        fork_map(_fail_on_three, [1, 2, 3, 4], workers=2)
