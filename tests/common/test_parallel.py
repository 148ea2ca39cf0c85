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


def _unpicklable(x: int):
    return (lambda: x) if x == 2 else x


def _die_on_two(x: int) -> int:
    if x == 2:
        os._exit(3)
    return x


def test_a_result_that_cannot_come_back_is_said_not_lost():
    with pytest.raises(RuntimeError, match="worker's results cannot be sent back"):
        fork_map(_unpicklable, [1, 2], workers=2)


def test_a_worker_that_dies_is_an_error_not_a_short_list():
    with pytest.raises(RuntimeError, match=r"ended without its results \(wait status 768\)"):   # exit status 3
        fork_map(_die_on_two, [1, 2], workers=2)


def test_an_error_in_the_caller_s_group_reaps_every_worker():
    with pytest.raises(ValueError, match="three"):
        fork_map(_fail_on_three, [3, 4, 5], workers=3)
    with pytest.raises(ChildProcessError):                  # no worker left behind, not even a zombie
        os.waitpid(-1, os.WNOHANG)


def test_printed_text_appears_once(tmp_path):
    """Text the caller printed before the fork (still buffered) and text a worker prints: each once."""
    import subprocess
    import sys

    script = ("from candor_eval.common.parallel import fork_map\n"
              "print('before', end=';')\n"
              "fork_map(lambda x: print(f'item {x}', end=';'), [1, 2], workers=2)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert sorted(out.split(";")) == ["", "before", "item 1", "item 2"]
