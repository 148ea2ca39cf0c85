"""Keys that must be unique: one definition of "listed more than once" for every reader that
refuses a repeated class, model, candidate, frame or id (:func:`repeated`, over a whole list), and
one message for a row that repeats an earlier row's key (:func:`repeat_of`, naming both rows)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, TypeVar

from candor_eval.common.errors import Problem

H = TypeVar("H", bound=Hashable)
K = TypeVar("K", bound=Hashable)


def repeated(values: Iterable[H]) -> list[H]:
    """The values that occur more than once, each once, sorted (by ``repr`` when they do not compare).

    >>> repeated(["b", "a", "b", "c", "a", "b"])
    ['a', 'b']
    >>> repeated([1, "1", 1])
    [1]
    """
    twice = [v for v, k in Counter(values).items() if k > 1]
    try:
        return sorted(twice, key=_itself)
    except TypeError:                       # values that do not compare with each other (1 and "a")
        return sorted(twice, key=repr)


def _itself(value: Any) -> Any:
    return value


def repeat_of(seen: Mapping[K, int], key: K, *, where: str, noun: str, unit: str = "row") -> Problem | None:
    """The problem of a row whose ``key`` an earlier row had: ``seen`` maps each key kept so far to
    the row (or line) it was first on; ``None`` when ``key`` is new. Recording ``key`` is the
    caller's (a reader records only the rows it keeps).

    >>> str(repeat_of({"T001": 2}, "T001", where="lots.csv:row 4.id", noun="id"))
    "lots.csv:row 4.id: duplicate id (first on row 2) (got 'T001')"
    >>> repeat_of({"T001": 2}, "T002", where="lots.csv:row 4.id", noun="id") is None
    True
    """
    if key not in seen:
        return None
    return Problem(where, f"duplicate {noun} (first on {unit} {seen[key]})", got=repr(key))
