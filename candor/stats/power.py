"""What a bench could have detected: exact power of the paired sign test, and the improvement it
detects at a given power.

Pure: no I/O, no simulation. The design is ``n`` independent pairs (lots; or clusters reduced to
their effective number, below), each *discordant* (one side succeeds, the other not) with
probability ``d``; given that it is discordant it favours B with probability
``q = (d + delta) / (2 d)``, so that ``delta`` is B's rate minus A's. The test rejects in B's
favour when the exact McNemar p of the discordant split reaches alpha, which for ``D`` discordant
pairs means at least ``c(D)`` of them favour B (:func:`candor.stats.rates.min_split`). Its power
is, exactly,

    power = sum_D Binom(D; n, d) * P(Binom(D, q) >= c(D))

(both terms from the regularised incomplete beta function, SciPy's ``betainc``). The smallest
detectable improvement at a given power is the least ``delta`` on a grid of 0.001 (a tenth of a
percentage point) whose power reaches it: a grid, so the figure is the same on every machine.

*Clusters.* Where units cluster (labels in frames), the pairs are not independent. The bench is
then worth ``n_eff = n / deff`` independent pairs, with ``deff`` the design effect of the paired
difference: its cluster-robust variance (the paired record's interval) over the variance
``(d - delta**2) / n`` it would have over independent pairs, at least 1
(:func:`effective_pairs`).

>>> round(sign_test_power(17, 0.3, 0.2, alpha=0.05), 4)
0.1293
>>> detectable(17, 0.3, alpha=0.05), detectable(200, 0.3, alpha=0.05)
(None, 0.112)
"""
from __future__ import annotations

import math
from functools import cache

from scipy.special import betainc, stdtrit

from candor.stats.rates import min_split

POWER = 0.8
GRID = 1000             # detectable improvements are multiples of 1 / GRID


def _binom_sf(k: int, n: int, p: float) -> float:
    """P(Binom(n, p) >= k)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return float(betainc(k, n - k + 1, p))


def _binom_pmf(k: int, n: int, p: float) -> float:
    return _binom_sf(k, n, p) - _binom_sf(k + 1, n, p)


@cache
def _critical(discordant: int, alpha: float) -> int | None:
    """The least number of the ``discordant`` pairs that must favour B for the test to reach alpha."""
    split = min_split(discordant, alpha)
    return None if split is None else split[0]


def sign_test_power(n: int, discordance: float, improvement: float, *, alpha: float) -> float:
    """Exact power to find B better on ``n`` independent pairs (module docstring)."""
    if not 0.0 < discordance <= 1.0 or not 0.0 <= improvement <= discordance:
        raise ValueError(f"need 0 < discordance <= 1 and 0 <= improvement <= discordance, got "
                         f"{discordance!r}, {improvement!r}")
    q = (discordance + improvement) / (2.0 * discordance)
    total = []
    for d in range(n + 1):
        c = _critical(d, alpha)
        if c is not None:
            total.append(_binom_pmf(d, n, discordance) * _binom_sf(c, d, q))
    return math.fsum(total)


def detectable(n: int, discordance: float, *, alpha: float, power: float = POWER) -> float | None:
    """The least improvement (a multiple of 0.001, at most ``discordance``) detected with at least
    ``power`` on ``n`` independent pairs; ``None`` when even the largest possible one is not."""
    top = math.floor(discordance * GRID)
    if top < 1 or sign_test_power(n, discordance, top / GRID, alpha=alpha) < power:
        return None
    lo, hi = 0, top                    # power(lo) < power <= power(hi); power grows with the improvement
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sign_test_power(n, discordance, mid / GRID, alpha=alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi / GRID


def pairs_needed(discordance: float, improvement: float, *, alpha: float, power: float = POWER,
                 limit: int = 100_000) -> int | None:
    """The least number of independent pairs whose power reaches ``power`` (checked from there on
    for the next 10 sizes, since exact power is not monotone in ``n``); ``None`` above ``limit``."""
    def ok(n: int) -> bool:
        return sign_test_power(n, discordance, improvement, alpha=alpha) >= power
    hi = 8
    while not ok(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    while not all(ok(hi + i) for i in range(1, 11)):
        hi += 1
    return hi


def effective_pairs(n: int, *, discordance: float, diff: float, diff_hi: float | None, clusters: int,
                    confidence: float) -> int:
    """The number of independent pairs a clustered paired comparison is worth (module docstring):
    ``n / deff`` (rounded down), from its difference and the upper bound of its t interval over
    ``clusters`` clusters."""
    if diff_hi is None or clusters < 2 or n == 0:
        return n
    se = (diff_hi - diff) / float(stdtrit(clusters - 1, 0.5 + 0.5 * confidence))
    independent = (discordance - diff * diff) / n
    if independent <= 0:
        return n
    return max(1, math.floor(n / max(1.0, se * se / independent)))
