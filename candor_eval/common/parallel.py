"""Fork-parallel map: the same results as a plain loop, computed on every core.

:func:`fork_map` splits its items into one contiguous group per worker; the calling
process works through the first group itself while forked worker processes take the
others. Workers are forked after the items exist, so they read them from the inherited
memory (nothing is sent to them); only each group's results come back, through a pipe
(:class:`multiprocessing.connection.Connection`, the transport of the standard library's
process pools), in item order. Where ``fork`` is unavailable, or one worker is enough, it is a plain
loop in this process. An exception in any item is raised by :func:`fork_map` (the first
group's own first, then the workers' in group order), after every worker has ended.

Each worker is a bare ``os.fork`` with a pipe, not a process pool: a worker runs one group and
ends, so a pool's queues, threads and start-up buy nothing here and cost the calling process
their imports and set-up (a sweep step starts the scoring stage once per set).
A worker ends with ``os._exit``: it never runs the parent's exit handlers or flushes its files.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from candor_eval.common.streams import flush_std_streams


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
    flush_std_streams()            # else text buffered before the fork would be written by every worker too
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
    """Fork a worker that computes ``fn`` over ``group`` and sends ``(True, results)`` or ``(False, error)``
    through a pipe; the worker's pid and the pipe's reading end."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_end)
        return pid, read_end
    code = 1
    try:                                        # the worker: never returns
        os.close(read_end)
        out = Connection(write_end, readable=False)
        try:
            answer: tuple[bool, Any] = (True, [fn(x) for x in group])
        except BaseException as err:            # noqa: BLE001 - every error goes back to the caller
            answer = (False, err)
        try:
            out.send(answer)
        except Exception as err:                # noqa: BLE001 - an answer that cannot be sent, e.g. an open file
            what = answer[1] if not answer[0] else err
            out.send((False, RuntimeError(f"{type(what).__name__}: {what}")))
        out.close()
        code = 0
    finally:
        flush_std_streams()
        os._exit(code)


def _collect(pid: int, fd: int) -> tuple[bool, Any]:
    """Receive a worker's answer from its pipe ``fd`` and wait for it to end; a worker that ended without
    an answer (killed, e.g. out of memory) is a RuntimeError naming its exit status."""
    inp = Connection(fd, writable=False)
    try:
        answer: tuple[bool, Any] = inp.recv()
    except EOFError:
        answer = (False, None)
    finally:
        inp.close()
        _, status = os.waitpid(pid, 0)
    if answer == (False, None):
        return False, RuntimeError(f"a fork_map worker (pid {pid}) ended without an answer "
                                   f"(wait status {status}: killed, or out of memory?)")
    return answer
