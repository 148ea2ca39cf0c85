"""Whole-refresh timings: what the release rule's "p95 of a requested refresh at most 2 s" reads.

A *requested refresh* is everything between the user's request and the boxes handed to the
consumer on the serving runtime: capture, transport, detection and handoff. candor cannot
time that (it runs the detector on decoded images, :mod:`candor_eval.detection.latency`);
the team records it where the detector is served and hands the file to the gate.

**Format** (a CSV file, UTF-8, header row, at most :data:`MAX_BYTES`), one row per requested
refresh:

- ``refresh``: the refresh's id, unique in the file;
- ``model``: the model served (its card's name); every row the same;
- ``host``: the serving host; every row the same (one file is one host's measurement);
- ``scope``: ``capture-to-handoff`` on every row (:data:`SCOPE`): a row timing anything less
  (the model call alone, detection alone) is not a refresh and is refused;
- ``ms``: the refresh's wall time in milliseconds, a finite number >= 0.

The release gate reads the times' nearest-rank p95 and its distribution-free upper bound
(:mod:`candor_eval.stats.quantile`); it needs at least 59 refreshes to bound a p95.

Written here because no library reads this format.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import NUMBER, parse_rows, read_text

COLUMNS = ("refresh", "model", "host", "scope", "ms")
SCOPE = "capture-to-handoff"
MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class RefreshTimings:
    """A whole-refresh timing file, read: ``model``, ``host`` and the times in ms (file order)."""

    where: str
    model: str
    host: str
    ms: tuple[float, ...]


def parse_refresh(text: str, *, where: str) -> RefreshTimings:
    """Read a whole-refresh timing file's text (module docstring); every problem is named by row."""
    table = parse_rows(text, where=where, columns=COLUMNS)
    if not table.rows:
        raise fail(where, "no refreshes", expected="one row per requested refresh")
    problems: list[Problem] = []
    seen: set[str] = set()
    ms: list[float] = []
    first = table.rows[0][1]
    for rowno, row in table.rows:
        at = f"{where}:row {rowno}"
        if not row["refresh"] or row["refresh"] in seen:
            problems.append(Problem(at, "refresh id empty or repeated", "a unique id", repr(row["refresh"])))
        seen.add(row["refresh"])
        for key in ("model", "host"):
            if not row[key] or row[key] != first[key]:
                problems.append(Problem(f"{at}:{key}", f"{key} empty or not the first row's",
                                        f"one {key} per file ({first[key]!r})", repr(row[key])))
        if row["scope"] != SCOPE:
            problems.append(Problem(f"{at}:scope", "not a whole-refresh timing",
                                    f"{SCOPE} (capture, transport, detection and handoff)", repr(row["scope"])))
        value = float(row["ms"]) if NUMBER.fullmatch(row["ms"]) else math.nan
        if not (math.isfinite(value) and value >= 0):
            problems.append(Problem(f"{at}:ms", "not a time", "a finite number of milliseconds >= 0",
                                    repr(row["ms"])))
        ms.append(value)
    if problems:
        raise InputError(problems[:20])
    return RefreshTimings(where=where, model=first["model"], host=first["host"], ms=tuple(ms))


def read_refresh(path: str | Path) -> RefreshTimings:
    """Read a whole-refresh timing file (at most :data:`MAX_BYTES`, a regular file)."""
    text = read_text(path, expected="a whole-refresh timing CSV (refresh,model,host,scope,ms)", max_bytes=MAX_BYTES)
    return parse_refresh(text, where=str(path))
