"""The counts behind every rate a scorer writes: ``k`` of ``n`` independent units.

Every metrics file that holds rates also holds one ``counts`` block at its top level:
``{"<key>": {"k": 12, "n": 18, "unit": "lot"}, ...}``, where ``<key>`` is the dotted path of
the rate in the same file (a list item is named by its name, e.g. ``cases.drill.score``) and
``unit`` names what was counted (a lot, a run, a (case, field), a frame, a label, a
detection). The stats stage reads these blocks and nothing else to find a rate's ``k`` and
``n`` (``docs/stats.md``); it never infers them from key names.

Example:

>>> counts_block({"all.micro.recall": Count(k=3, n=4, unit="label")})
{'all.micro.recall': {'k': 3, 'n': 4, 'unit': 'label'}}
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from candor.common.errors import InputError, Problem

KEY = "counts"
MAX_COUNT = 2 ** 53     # k and n are exact below it as float64 too (and so in every statistic)


@dataclass(frozen=True)
class Count:
    """``k`` of ``n`` units (``0 <= k <= n < MAX_COUNT``); the rate is ``k / n`` (undefined when ``n == 0``)."""

    k: int
    n: int
    unit: str

    def __post_init__(self) -> None:
        if not (0 <= self.k <= self.n < MAX_COUNT) or not self.unit:
            raise ValueError(f"not a count: k={self.k}, n={self.n}, unit={self.unit!r}")

    def as_json(self) -> dict[str, Any]:
        return {"k": self.k, "n": self.n, "unit": self.unit}


def counts_block(counts: Mapping[str, Count]) -> dict[str, dict[str, Any]]:
    """The JSON of a metrics file's ``counts`` block, in the given key order."""
    return {key: c.as_json() for key, c in counts.items()}


def read_counts(doc: Any, *, where: str) -> dict[str, Count]:
    """The ``counts`` block of a metrics document (empty when it has none); a malformed entry
    is an InputError naming the file and key."""
    block = doc.get(KEY, {}) if isinstance(doc, Mapping) else {}
    if not isinstance(block, Mapping):
        raise InputError(Problem(f"{where}:{KEY}", "not a mapping", expected='{"<key>": {"k", "n", "unit"}}'))
    out: dict[str, Count] = {}
    problems = []
    for key, entry in block.items():
        ok = isinstance(entry, Mapping) and set(entry) == {"k", "n", "unit"} and \
            all(isinstance(entry[x], int) and not isinstance(entry[x], bool) for x in ("k", "n")) and \
            isinstance(entry["unit"], str)
        try:
            if not ok:
                raise ValueError
            out[key] = Count(k=entry["k"], n=entry["n"], unit=entry["unit"])
        except ValueError:
            problems.append(Problem(f"{where}:{KEY}.{key}", "bad count",
                                    expected="{k, n, unit} with integers 0 <= k <= n < 2**53 and a unit name",
                                    got=repr(entry)[:200]))
    if problems:
        raise InputError(problems)
    return out
