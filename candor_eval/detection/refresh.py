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

**Summary** (:func:`refresh_p95`): ``p95`` is the nearest-rank 95th percentile (the
``ceil(0.95 n)``-th smallest time, a time that was observed) and ``upper`` its one-sided 95%
distribution-free upper confidence bound: the smallest order statistic ``X_(k)`` with
``P(Binomial(n, 0.95) <= k - 1) >= 0.95``, so that ``X_(k)`` is at least the true p95 with
probability at least 0.95 whatever the distribution of the times (the binomial order-statistic
bound for a quantile). It exists only from :data:`MIN_REFRESHES` = 59 refreshes (``1 -
0.95**n >= 0.95``); with fewer, no p95 claim can be shown and ``upper`` is ``None``.

Written here because no library reads this format; the quantile bound uses SciPy's binomial.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import binom

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import NUMBER, parse_rows, read_text

COLUMNS = ("refresh", "model", "host", "scope", "ms")
SCOPE = "capture-to-handoff"
MAX_BYTES = 16 * 1024 * 1024
QUANTILE = 0.95
CONFIDENCE = 0.95
MIN_REFRESHES = 59


@dataclass(frozen=True)
class RefreshTimings:
    """A whole-refresh timing file, read: ``model``, ``host`` and the times in ms (file order)."""

    where: str
    model: str
    host: str
    ms: tuple[float, ...]


@dataclass(frozen=True)
class RefreshP95:
    """``n`` refreshes, their nearest-rank ``p95`` and its one-sided upper bound ``upper`` (ms; ``None``
    under :data:`MIN_REFRESHES`)."""

    n: int
    p95: float
    upper: float | None


def upper_rank(n: int, *, quantile: float = QUANTILE, confidence: float = CONFIDENCE) -> int | None:
    """The 1-based rank ``k`` of the smallest order statistic that bounds the ``quantile`` from above
    with ``confidence`` (module docstring); ``None`` when even the largest of ``n`` does not.

    >>> upper_rank(58), upper_rank(59), upper_rank(100)
    (None, 59, 99)
    """
    for k in range(math.ceil(quantile * n), n + 1):
        if binom.cdf(k - 1, n, quantile) >= confidence:
            return k
    return None


def refresh_p95(ms: tuple[float, ...]) -> RefreshP95:
    """The summary of the module docstring, of at least one time.

    >>> refresh_p95(tuple(float(i) for i in range(1, 101)))
    RefreshP95(n=100, p95=95.0, upper=99.0)
    >>> refresh_p95((5.0, 1.0, 3.0))
    RefreshP95(n=3, p95=5.0, upper=None)
    """
    times = sorted(ms)
    n = len(times)
    k = upper_rank(n)
    return RefreshP95(n=n, p95=times[math.ceil(QUANTILE * n) - 1], upper=None if k is None else times[k - 1])


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
