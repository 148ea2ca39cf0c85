"""Fork-parallel map: the same results as a plain loop, computed on every core.

:func:`fork_map` splits its items into one contiguous group per worker; the calling
process works through the first group itself while forked worker processes take the
others. Workers are forked after the items exist, so they read them from the inherited
memory (nothing is sent to them but a group number); only each group's results come back,
pickled, in item order. Where ``fork`` is unavailable, or one worker is enough, it is a
plain loop in this process. An exception in any item is raised by :func:`fork_map`.
"""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_inherited: tuple[Callable[[Any], Any], list[Sequence[Any]]] | None = None


def _inherit(fn: Callable[[Any], Any], groups: list[Sequence[Any]]) -> None:
    global _inherited
    _inherited = (fn, groups)


def _run_group(index: int) -> list[Any]:
    assert _inherited is not None
    fn, groups = _inherited
    return [fn(x) for x in groups[index]]


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
    if n < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(x) for x in items]
    groups = groups_of(items, n)
    with ProcessPoolExecutor(n - 1, mp_context=multiprocessing.get_context("fork"),
                             initializer=_inherit, initargs=(fn, groups)) as pool:
        futures = [pool.submit(_run_group, k) for k in range(1, n)]
        first = [fn(x) for x in groups[0]]
        return first + [y for f in futures for y in f.result()]
