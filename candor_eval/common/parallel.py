"""Fork-parallel map: the same results as a plain loop, computed on every core.

:func:`fork_map` splits its items into one contiguous group per worker; the calling
process works through the first group itself while forked worker processes (:func:`os.fork`)
take the others. Workers are forked after the items exist, so they read them from the inherited
memory (nothing is sent to them); only each group's results come back, pickled through a pipe,
in item order. Where ``fork`` is unavailable, or one worker is enough, it is a plain loop in this
process. An exception in any item is raised by :func:`fork_map` (the caller's group's first, then
each worker's in order); a worker that dies without a word is a RuntimeError.

A worker is a bare fork, not a :class:`concurrent.futures.ProcessPoolExecutor`'s: each runs once,
so there is no pool to keep, and the executor's start-up (importing multiprocessing's contexts,
queues and connections, a management thread) was ~15 ms of the score-detection stage a threshold
sweep reruns. Like multiprocessing's fork start, the standard streams are
flushed before the fork (so no buffered text is written twice) and by the worker before it
leaves with :func:`os._exit` (so the parent's exit handlers never run in it).
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


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


def _worker(fn: Callable[[Any], Any], group: Sequence[Any], out: int) -> int:
    """In a forked worker: send ``(True, results)`` or ``(False, exception)`` to pipe ``out``; the exit status."""
    try:
        result: tuple[bool, Any] = (True, [fn(x) for x in group])
    except BaseException as err:  # noqa: BLE001 - every exception goes back to be raised by fork_map
        result = (False, err)
    try:
        blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as err:  # noqa: BLE001 - an unpicklable result or exception: said, not lost
        blob = pickle.dumps((False, RuntimeError(f"a fork_map worker's {'results' if result[0] else 'error'} "
                                                 f"cannot be sent back: {err!r} ({result[1]!r:.200})")))
    with os.fdopen(out, "wb") as pipe:
        pipe.write(blob)
    _flush_std_streams()
    return 0


def _fork(fn: Callable[[Any], Any], group: Sequence[Any]) -> tuple[int, int]:
    """Fork a worker for ``group``: its pid and the read end of its results pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the worker: never returns
        status = 1
        try:
            os.close(read)
            status = _worker(fn, group, write)
        finally:
            os._exit(status)
    os.close(write)
    return pid, read


def _results(pid: int, read: int) -> list[Any]:
    """The results of worker ``pid`` (its exception raised), once it has exited."""
    with os.fdopen(read, "rb") as pipe:
        blob = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not blob:
        raise RuntimeError(f"a fork_map worker (pid {pid}) ended without its results (wait status {status})")
    ok, value = pickle.loads(blob)
    if not ok:
        raise value
    return value


def fork_map(fn: Callable[[Any], Any], items: Sequence[Any], *, workers: int | None = None) -> list[Any]:
    """``[fn(x) for x in items]``, spread over ``workers`` processes (default: one per core)."""
    n = min(len(items), workers if workers is not None else usable_cores())
    if n < 2 or not hasattr(os, "fork"):
        return [fn(x) for x in items]
    groups = groups_of(items, n)
    _flush_std_streams()
    forked: list[tuple[int, int]] = []
    try:
        forked.extend(_fork(fn, group) for group in groups[1:])
        out = [fn(x) for x in groups[0]]
        while forked:
            out += _results(*forked.pop(0))
    finally:
        for pid, read in forked:    # after an error, the workers not read yet: a closed pipe ends a send; reap them
            os.close(read)
            os.waitpid(pid, 0)
    return out
