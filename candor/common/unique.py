"""Keys that must be unique: one definition of "listed more than once" for every reader that
refuses a repeated class, model, candidate, frame or id."""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from typing import Any, TypeVar

H = TypeVar("H", bound=Hashable)


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
