"""A distribution-free upper confidence bound for a quantile, from the order statistics.

For ``n`` independent draws of any continuous distribution, the number below its ``q``-quantile
is Binomial(n, q). So the ``k``-th smallest draw ``X_(k)`` is at least the quantile with
probability ``P(Binomial(n, q) <= k - 1)``: the **upper bound** at ``confidence`` is ``X_(k)``
for the smallest ``k`` that makes this at least ``confidence`` (:func:`upper_rank`). It exists
only when ``1 - q**n >= confidence`` (the largest draw is enough): 59 draws for the 95th
percentile at 95%. The **point estimate** is the nearest-rank quantile, the ``ceil(q n)``-th
smallest draw: a value that was observed.

SciPy gives the binomial; no library gives the bound itself. ``scipy.stats`` is imported where the
bound is computed, not with this module: importing it takes about half a second, and the release
gate (:mod:`candor_eval.review.gate`, loaded by every ``stats`` stage run) needs it only when whole-
refresh timings were recorded.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class QuantileBound:
    """``n`` draws, their nearest-rank ``point`` quantile and its one-sided ``upper`` confidence bound
    (``None``: too few draws to bound it)."""

    n: int
    point: float
    upper: float | None


def upper_rank(n: int, *, q: float = 0.95, confidence: float = 0.95) -> int | None:
    """The 1-based rank of the smallest order statistic of ``n`` draws that bounds the ``q``-quantile
    from above with ``confidence`` (module docstring); ``None`` when even the largest does not.

    >>> upper_rank(58), upper_rank(59), upper_rank(100)
    (None, 59, 99)
    """
    from scipy.stats import binom  # here, not at the top: the module docstring says why

    for k in range(max(1, math.ceil(q * n)), n + 1):
        if binom.cdf(k - 1, n, q) >= confidence:
            return k
    return None


def quantile_bound(values: Sequence[float], *, q: float = 0.95, confidence: float = 0.95) -> QuantileBound:
    """The nearest-rank ``q``-quantile of at least one value and its upper bound (module docstring).

    >>> quantile_bound([float(i) for i in range(1, 101)])
    QuantileBound(n=100, point=95.0, upper=99.0)
    >>> quantile_bound([5.0, 1.0, 3.0])
    QuantileBound(n=3, point=5.0, upper=None)
    """
    ordered = sorted(values)
    n = len(ordered)
    k = upper_rank(n, q=q, confidence=confidence)
    return QuantileBound(n=n, point=ordered[math.ceil(q * n) - 1], upper=None if k is None else ordered[k - 1])
