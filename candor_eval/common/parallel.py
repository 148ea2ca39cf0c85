"""Fork-parallel map: the same results as a plain loop, computed on every core.

:func:`fork_map` splits its items into one contiguous group per worker; the calling
process works through the first group itself while forked worker processes take the
others. Workers are forked after the items exist, so they read them from the inherited
memory (nothing is sent to them); only each group's results come back, pickled through a
pipe, in item order. Where ``fork`` is unavailable, or one worker is enough, it is a plain
loop in this process. An exception in any item is raised by :func:`fork_map` (the first
group's own first, then the workers' in group order), after every worker has ended.

Each worker is a bare ``os.fork`` with a pipe, not a ``multiprocessing`` pool: a worker runs
one group and ends, so a pool's queues, threads and start-up buy nothing here and cost the
calling process their imports and set-up (a sweep step starts the scoring stage once per set).
A worker ends with ``os._exit``: it never runs the parent's exit handlers or flushes its files.
"""
from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import Any


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's limit), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def groups_of(items: Sequence[Any], n: int) -> list[Sequence[Any]]:
    """``items`` cut into ``n`` contiguous groups whose sizes differ by at most one (earlier ones larger).

    >>> groups_of([1, 2, 3, 4, 5], 2)
    [[1, 2, 3], [4, 5]]
    """
    size, extra = divmod(len(items), n)
    cuts = [k * size + min(k, extra) for k in range(n + 1)]
    return [list(items[cuts[k]:cuts[k + 1]]) for k in range(n)]


def fork_map(fn: Callable[[Any], Any], items: Sequence[Any], *, workers: int | None = None) -> list[Any]:
    """``[fn(x) for x in items]``, spread over ``workers`` processes (default: one per core)."""
    n = min(len(items), workers if workers is not None else usable_cores())
    if n < 2 or not hasattr(os, "fork"):
        return [fn(x) for x in items]
    groups = groups_of(items, n)
    _flush_std_streams()            # else text buffered before the fork would be written by every worker too
    children = [_fork(fn, group) for group in groups[1:]]
    try:
        results = [fn(x) for x in groups[0]]
    finally:
        answers = [_collect(pid, fd) for pid, fd in children]      # every worker is waited for, whatever happened
    for ok, value in answers:
        if not ok:
            raise value
        results.extend(value)
    return results


def _fork(fn: Callable[[Any], Any], group: Sequence[Any]) -> tuple[int, int]:
    """Fork a worker that computes ``fn`` over ``group`` and writes ``(True, results)`` or ``(False, error)``,
    pickled, to a pipe; the worker's pid and the pipe's reading end."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_end)
        return pid, read_end
    code = 1
    try:                                        # the worker: never returns
        os.close(read_end)
        try:
            payload = pickle.dumps((True, [fn(x) for x in group]), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as err:            # noqa: BLE001 - every error goes back to the caller
            payload = _pickled_error(err)
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        code = 0
    finally:
        _flush_std_streams()
        os._exit(code)


def _pickled_error(err: BaseException) -> bytes:
    """``(False, err)`` pickled; a RuntimeError naming ``err`` when ``err`` itself cannot be pickled."""
    try:
        return pickle.dumps((False, err), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:                           # noqa: BLE001 - e.g. an exception holding an open file
        return pickle.dumps((False, RuntimeError(f"{type(err).__name__}: {err}")), protocol=pickle.HIGHEST_PROTOCOL)


def _collect(pid: int, fd: int) -> tuple[bool, Any]:
    """Read a worker's answer from its pipe ``fd`` and wait for it to end; a worker that ended without
    an answer (killed, e.g. out of memory) is a RuntimeError naming its exit status."""
    with os.fdopen(fd, "rb") as inp:
        payload = inp.read()
    _, status = os.waitpid(pid, 0)
    if not payload:
        return False, RuntimeError(f"a fork_map worker (pid {pid}) ended without an answer "
                                   f"(wait status {status}: killed, or out of memory?)")
    answer: tuple[bool, Any] = pickle.loads(payload)
    return answer


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):      # closed, replaced by None, or a broken pipe
            pass
