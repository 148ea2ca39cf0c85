"""The strict majority: the one rule by which repeated runs of one unit become that unit's outcome.

A unit asked ``total`` times (a lot's runs, a (case, field)'s answered runs) *holds* an outcome
when a **strict majority** of its runs give it: ``2 * hits > total``. With an even number of runs
a tie is no majority (2 of 4 is not met). Both tracks use it: the lots track's outcomes per lot and
per (case, field), and the statistics' paired units built from them.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence


def strict_majority(hits: int, total: int) -> bool:
    """``hits`` of ``total`` runs are more than half.

    >>> strict_majority(2, 3), strict_majority(2, 4), strict_majority(0, 0)
    (True, False, False)
    """
    return 2 * hits > total


def majority_of(flags: Iterable[bool]) -> bool:
    """A strict majority of ``flags`` are true.

    >>> majority_of([True, True, False]), majority_of([True, False])
    (True, False)
    """
    flags = list(flags)
    return strict_majority(sum(flags), len(flags))


def majority_value(values: Sequence[object]) -> object | None:
    """The value held by a strict majority of ``values``, else None.

    >>> majority_value(["hit", "hit", "wrong"]), majority_value(["hit", "wrong"]), majority_value([])
    ('hit', None, None)
    """
    for v in dict.fromkeys(values):
        if strict_majority(values.count(v), len(values)):
            return v
    return None
