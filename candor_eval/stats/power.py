"""What a bench could have detected: exact power of the paired sign test, and the improvement it
detects at a given power.

Pure: no I/O, no simulation. The design is ``n`` independent pairs (lots; or clusters reduced to
their effective number, below), each *discordant* (one side succeeds, the other not) with
probability ``d``; given that it is discordant it favours B with probability
``q = (d + delta) / (2 d)``, so that ``delta`` is B's rate minus A's. The test rejects in B's
favour when the exact McNemar p of the discordant split reaches alpha, which for ``D`` discordant
pairs means at least ``c(D)`` of them favour B (:func:`candor_eval.stats.rates.min_split`). Its power
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

import numpy as np
from scipy.special import betainc, stdtrit

POWER = 0.8
GRID = 1000             # detectable improvements are multiples of 1 / GRID
# The most pairs :func:`detectable` is asked about: its arrays hold one entry per discordant count
# (memory and time grow with ``n``: about 130 MB and 20 s at this bound), and at it any discordance
# detects about 0.003 or less, three steps of the grid: more pairs change nothing a plan decides.
MAX_UNITS = 1_000_000


def _binom_sf(k: np.ndarray, n: np.ndarray | int, p: float) -> np.ndarray:
    """P(Binom(n, p) >= k), elementwise over integer arrays ``k`` (and ``n``)."""
    k = np.asarray(k, dtype=np.int64)
    n = np.broadcast_to(np.asarray(n, dtype=np.int64), k.shape)
    out = np.where(k <= 0, 1.0, 0.0)
    inside = (k > 0) & (k <= n)
    out[inside] = betainc(k[inside], n[inside] - k[inside] + 1, p)
    return out


@cache
def _criticals(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The discordant counts ``D <= n`` at which the test can reach alpha, and ``c(D)`` for each: the least
    B-only count whose exact McNemar p, ``min(1, 2 P(Binom(D, 1/2) >= c))`` for ``c > D/2``
    (:func:`candor_eval.stats.rates.mcnemar_p`, the same arithmetic), is at most alpha. One bisection
    for every ``D`` at once (the p falls as ``c`` grows)."""
    d = np.arange(n + 1, dtype=np.int64)
    def reaches(c: np.ndarray) -> np.ndarray:
        return np.minimum(1.0, 2.0 * betainc(c, d - c + 1, 0.5)) <= alpha
    top = np.maximum(d, 1)
    ok = (d > 0) & reaches(top)
    lo, hi = d // 2, top.copy()                      # reaches(hi) where ok; c = d // 2 never does (p = 1 or more)
    while (hi - lo > 1)[ok].any():
        mid = (lo + hi) // 2
        r = reaches(np.maximum(mid, 1)) & (mid > d // 2)
        hi, lo = np.where(r, mid, hi), np.where(r, lo, mid)
    return d[ok], hi[ok]


def sign_test_power(n: int, discordance: float, improvement: float, *, alpha: float) -> float:
    """Exact power to find B better on ``n`` independent pairs (module docstring)."""
    if not 0.0 < discordance <= 1.0 or not 0.0 <= improvement <= discordance:
        raise ValueError(f"need 0 < discordance <= 1 and 0 <= improvement <= discordance, got "
                         f"{discordance!r}, {improvement!r}")
    q = (discordance + improvement) / (2.0 * discordance)
    ds, cs, pmf = _discordant(n, discordance, alpha)
    if not len(ds):
        return 0.0
    return math.fsum((pmf * _binom_sf(cs, ds, q)).tolist())


@cache
def _discordant(n: int, discordance: float, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_criticals` and ``P(D = d)`` for each of those ``d`` (the same for every improvement)."""
    ds, cs = _criticals(n, alpha)
    return ds, cs, _binom_sf(ds, n, discordance) - _binom_sf(ds + 1, n, discordance)


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
