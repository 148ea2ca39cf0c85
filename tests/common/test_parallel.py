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


def _die_on_three(x: int) -> int:
    if x == 3:
        os._exit(9)                 # a worker killed mid-group: no answer on its pipe
    return x


class _Unpicklable(Exception):
    def __init__(self, x: int) -> None:
        super().__init__(f"bad {x}")
        self.handle = lambda: x     # a lambda: the exception itself cannot be pickled


def _raise_unpicklable(x: int) -> int:
    if x == 4:
        raise _Unpicklable(x)
    return x


def test_the_callers_own_error_wins_and_the_workers_are_waited_for(tmp_path):
    def fail_first_write_rest(x: int) -> int:
        if x == 1:
            raise KeyError("first")
        (tmp_path / f"{x}.done").write_text("")
        return x

    with pytest.raises(KeyError, match="first"):
        fork_map(fail_first_write_rest, [1, 2, 3, 4], workers=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["3.done", "4.done"]   # the worker ran to its end


def test_a_worker_that_dies_is_an_error_naming_it():
    with pytest.raises(RuntimeError, match="ended without an answer"):
        fork_map(_die_on_three, [1, 2, 3, 4], workers=2)


def test_an_unpicklable_error_comes_back_named():
    with pytest.raises(RuntimeError, match="_Unpicklable: bad 4"):
        fork_map(_raise_unpicklable, [1, 2, 3, 4], workers=2)


def test_results_that_fill_the_pipe_come_back_whole():
    out = fork_map(lambda x: bytes([x]) * 1_000_000, [1, 2, 3], workers=3)      # > a pipe's buffer each
    assert [len(b) for b in out] == [1_000_000] * 3 and [b[0] for b in out] == [1, 2, 3]


def test_text_printed_before_the_fork_is_written_once(tmp_path):
    import subprocess
    import sys
    script = ("import sys\nfrom candor_eval.common.parallel import fork_map\n"
              "sys.stdout.write('before\\n')\nprint(fork_map(abs, [-1, -2, -3], workers=3))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONUNBUFFERED": ""}, stdin=subprocess.DEVNULL).stdout
    assert out == "before\n[1, 2, 3]\n"
