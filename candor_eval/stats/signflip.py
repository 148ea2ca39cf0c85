"""The exact sign-flip test of paired per-cluster differences: the one paired test of candor.

Pure: no I/O; its only random numbers are a fixed set of sign patterns drawn once from a fixed
generator (:func:`flip_patterns`, above :data:`EXACT_CLUSTERS` clusters), so every result is the
same on every run and every CPU.

**The null hypothesis is symmetry, not "equally good".** The test assumes that, under the null, the
difference ``d_g`` of cluster ``g`` (an integer: B's successes minus A's on the cluster's units,
or A's count minus B's where fewer is better) is symmetric about 0 and independent across
clusters: each ``d_g`` is as likely to be ``+x`` as ``-x`` (the clusters are the independent
units; what happens inside one is not). That holds when A's and B's outputs on a cluster are
exchangeable (swapping them would be as likely), which is stronger than "A and B equally good on
average": a zero-mean but *skewed* difference (B gains 1 label on 80% of frames and loses 4 on
20%) is rejected more often than alpha = 0.05, most with few clusters: exactly 16.9% at 8 frames,
11.4% at 10, 7.3% at 12, and on and off beyond (3.5% at 16, 10.3% at 18, 7.1% at 48, 5.8% at 100,
4.4% at 200: the binomial sum over how many frames lost, ``tests/stats/test_signflip.py``,
``test_a_skewed_zero_mean_difference``). A verdict therefore says "B's and A's outputs are not
exchangeable on these clusters"; it reads as "B's mean is higher" only when the per-cluster
difference is not strongly skewed, which few clusters cannot check. Few clusters make it worse:
a few large losses against many small gains are then both likely and easy to mistake for a
shift.

Under that null every one of the ``2**G`` sign patterns ``s`` is equally likely, and the two-sided
p-value is the share of patterns whose ``|sum_g s_g d_g|`` is at least the observed ``|sum_g d_g|``
(docs/stats.md, "Paired tests").

Computed exactly: with ``D = sum_g |d_g|`` and ``X`` the sum of the ``|d_g|`` that keep their
sign, ``sum_g s_g d_g = +/-(2X - D)``; the distribution of ``X`` is a subset sum over the
``|d_g|``, built one cluster at a time (``D + 1`` cells, each cluster halves and shifts: exact
in binary floating point but for rounding in the far tail, the same on every CPU). Up to
:data:`EXACT_COUNTS` clusters that differ, every cell is a count of patterns over ``2**G``, below
``2**53``, so nothing rounds: the p is the count of patterns with ``X <= (D - |sum d|) / 2`` over
``2**(G-1)``, and it is counted with Python integers instead (:func:`patterns_at_most`: the same
float, bit for bit, several times faster). Clusters
with ``d_g = 0`` carry no information. When every ``|d_g| <= 1`` (one discordant unit per
cluster at most) the test *is* the exact McNemar test on the clusters that differ, and it is
computed as such (:func:`candor_eval.stats.rates.mcnemar_p`). Above ``D =`` :data:`EXACT_LIMIT` the
normal limit of the same permutation distribution is used: ``T`` has mean 0 and variance
``sum_g d_g**2``, ``p = erfc(|sum d| / sqrt(2 sum d**2))``.

**Shifted, real-valued differences and the interval that agrees with the test**
(:func:`shift_test`, :func:`shift_interval`). A difference ``delta`` of B minus A is tested by the
sign-flip test of ``z_g(delta) = a_g - delta * b_g`` (``sum_g b_g = 1``, ``b_g >= 0``, so
``sum_g z_g = sum_g a_g - delta``): for a rate, ``a_g = d_g / n`` and ``b_g = n_g / n``; for a
ratio such as precision, the linearised per-cluster contributions of
:mod:`candor_eval.stats.ratios`. The ``1 - level`` interval is the set of shifts the test does not
reject at ``level``, from the estimate outward to the first rejected shift on each side (bisection
to 1e-9). Its p is exact over every pattern up to :data:`EXACT_CLUSTERS` clusters, above over
:data:`FLIPS` fixed random patterns plus the observed one (``p = (1 + hits) / (1 + FLIPS)``, a valid
p-value). The interval excludes 0 exactly when the test at shift 0 rejects: where the caller has
the exact integer p (:func:`signflip_p`) it is given as ``p0`` and decides that side.

>>> signflip_p([3, 0, 1, 1]), signflip_p([1, 1, 1, 1, 1, 1]), signflip_p([2, -2])
(0.25, 0.03125, 1.0)
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from candor_eval.stats.rates import mcnemar_p

EXACT_LIMIT = 20_000       # sum of |d_g| up to which the distribution is enumerated (cost: clusters x this)
EXACT_COUNTS = 53          # clusters that differ up to which the pattern counts fit a float's 53-bit significand
EXACT_CLUSTERS = 16        # clusters up to which shift tests enumerate all 2**G sign patterns
NARROW_AFTER = 3           # bisection steps of a shift interval before its patterns are narrowed (Narrowed)
FLIPS = 20_000             # fixed random sign patterns of a shift test above EXACT_CLUSTERS clusters
_PATTERN_SEED = 20261203   # the generator of those patterns: fixed, so every run draws the same
_BLOCK = 2048              # sign patterns converted to floats at a time by a shift test


def signflip_p(diffs: Sequence[int]) -> float:
    """Two-sided exact sign-flip p-value of per-cluster integer differences (module docstring);
    ``1.0`` when every difference is 0 or they sum to 0."""
    ints = diffs if set(map(type, diffs)) <= {int} else _integers(diffs)     # plain ints: checked at once
    mags = sorted(map(abs, filter(None, ints)))
    if not mags:
        return 1.0
    observed = abs(sum(ints))
    if mags[-1] == 1:
        pos = sum(1 for d in ints if d > 0)
        return mcnemar_p(pos, len(mags) - pos)
    if observed == 0:
        return 1.0
    total = sum(mags)
    if total > EXACT_LIMIT:
        return min(1.0, math.erfc(observed / math.sqrt(2.0 * sum(m * m for m in mags))))
    lower = (total - observed) // 2                       # |2X - D| >= observed: X <= lower or, symmetrically, above
    if len(mags) <= EXACT_COUNTS:
        return min(1.0, math.ldexp(patterns_at_most(mags, lower), 1 - len(mags)))    # exact: a power-of-2 scale
    return _float_p(mags, lower)


def _integers(diffs: Sequence[int]) -> list[int]:
    """``diffs`` as Python integers; anything but an integer (a bool included) is a ValueError."""
    for d in diffs:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise ValueError(f"differences must be integers, got {d!r}")
    return [int(d) for d in diffs]


def _float_p(mags: list[int], lower: int) -> float:
    """``2 P(X <= lower)`` from the distribution of ``X`` in floating point (module docstring), for any
    number of clusters: the cells round once counts pass ``2**53``."""
    total = sum(mags)
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    reach = 0
    for m in mags:
        reach += m
        dist[m:reach + 1] += dist[:reach + 1 - m].copy()   # keep its sign or flip it ...
        dist[:reach + 1] *= 0.5                            # ... each with probability 1/2
    return min(1.0, 2.0 * math.fsum(dist[:lower + 1].tolist()))


def patterns_at_most(mags: Sequence[int], lower: int) -> int:
    """How many of the ``2**len(mags)`` subsets of ``mags`` (positive integers) sum to at most ``lower``.

    The counts of each sum are the coefficients of ``prod_g (1 + x**m_g)``, held as the digits of one
    Python integer in base ``2**(len(mags) + 1)`` (no coefficient, nor any sum of them, reaches the
    base, so digits never carry): each factor is one shift and one addition; the digits up to
    ``lower`` are then summed by multiplying by ``1 + x + ... + x**lower`` and reading one digit.

    >>> patterns_at_most([1, 2, 2], 2), patterns_at_most([3], 2), patterns_at_most([1, 1], 5)
    (4, 1, 4)
    """
    bits = len(mags) + 1
    poly = 1
    for m in mags:
        poly += poly << (bits * m)
    if lower < 0:
        return 0
    low = poly & ((1 << (bits * (lower + 1))) - 1)
    ones = ((1 << (bits * (lower + 1))) - 1) // ((1 << bits) - 1)        # 1 + x + ... + x**lower at x = 2**bits
    return ((low * ones) >> (bits * lower)) & ((1 << bits) - 1)


@functools.lru_cache(maxsize=64)
def flip_patterns(g: int) -> np.ndarray:
    """The sign patterns a shift test over ``g`` clusters uses, one per row (``+1``/``-1`` as int8: a
    float copy of 20001 rows would be 8 times the memory, all of it fresh; cached, read-only):
    every pattern up to :data:`EXACT_CLUSTERS` clusters (the first row all ``+1``: the observed
    one), above the observed pattern and :data:`FLIPS` patterns drawn from a fixed generator."""
    if g <= EXACT_CLUSTERS:                 # row i: -1 where bit j of i is set, else +1
        out = np.empty((2 ** g, g), dtype=np.int8)
        for j in range(g):                  # rows 2**j .. 2**(j+1) - 1: rows 0 .. 2**j - 1 with bit j set
            half = 1 << j
            out[half:2 * half, :j] = out[:half, :j]
            out[:half, j] = 1
            out[half:2 * half, j] = -1
    else:
        rng = np.random.default_rng(_PATTERN_SEED + g)
        out = np.empty((FLIPS + 1, g), dtype=np.int8)
        out[0] = 1
        drawn = rng.integers(0, 2, size=(FLIPS, g), dtype=np.int8)
        np.left_shift(drawn, 1, out=drawn)              # a draw of 0 keeps the sign (+1), 1 flips it (-1):
        np.subtract(np.int8(1), drawn, out=out[1:])     # 1 - 2 d in int8 ufuncs (an in-place `*= -2` is 3x slower)
    out.flags.writeable = False             # shared by every test over g clusters (cached)
    return out


@dataclass(frozen=True)
class ShiftTest:
    """The sign-flip test of ``z_g(delta) = a_g - delta * b_g`` for every shift ``delta`` (module
    docstring): ``sa``/``sb`` hold ``sum_g s_g a_g`` and ``sum_g s_g b_g`` for each pattern ``s`` of
    :func:`flip_patterns` (the first one observed); ``exact``: every pattern was enumerated;
    ``intervals``: what :func:`shift_interval` found for it, by its arguments (each computed once)."""

    sa: np.ndarray
    sb: np.ndarray
    exact: bool
    estimate: float
    scale_a: float = 0.0
    scale_b: float = 0.0
    intervals: dict[tuple, tuple[float | None, float | None]] = field(default_factory=dict, compare=False,
                                                                      repr=False)

    def p(self, delta: float) -> float:
        """Two-sided p of the shift ``delta``: the share of patterns whose ``|T|`` reaches the observed one
        (ties within 1e-9 of the terms' scale ``sum |a_g| + |delta| sum |b_g|`` count as reaching it)."""
        u = self.sa - delta * self.sb
        t = np.abs(u, out=u)
        tol = 1e-9 * (self.scale_a + abs(delta) * self.scale_b)
        hits = int(np.count_nonzero(t >= t[0] - tol))
        return min(1.0, hits / t.size)          # exact: hits / 2**G; sampled: (1 + hits) / (1 + FLIPS)


def shift_test(a: Sequence[float], b: Sequence[float]) -> ShiftTest:
    """The shift test of per-cluster ``(a_g, b_g)`` (``b_g >= 0``, ``sum b_g = 1``; module docstring).
    Terms equal to the bit to an earlier call's share its test (and the intervals found on it): the
    stats and the gate test the same clusters, each once."""
    if len(a) != len(b):
        raise ValueError("a and b must have one value per cluster")
    return _shift_test(np.asarray(a, dtype=float).tobytes(), np.asarray(b, dtype=float).tobytes())


@functools.lru_cache(maxsize=128)        # a stage run tests ~60 distinct inputs; its records keep them anyway
def _shift_test(a: bytes, b: bytes) -> ShiftTest:
    """:func:`shift_test` of the float64 terms whose bytes are ``a`` and ``b`` (cached, read-only)."""
    av, bv = np.frombuffer(a).copy(), np.frombuffer(b).copy()       # aligned, owned: the arrays as given
    signs = flip_patterns(len(av))
    sa, sb = np.empty(len(signs)), np.empty(len(signs))
    rows = np.empty((min(_BLOCK, len(signs)), len(av)))
    for start in range(0, len(signs), _BLOCK):          # a block of patterns as floats at a time, reused
        block = rows[:len(signs[start:start + _BLOCK])]
        block[...] = signs[start:start + _BLOCK]           # +1.0 / -1.0 exactly
        for v, out in ((av, sa), (bv, sb)):             # each row's sum, as over the whole float matrix
            np.einsum("ij,j->i", block, v, out=out[start:start + len(block)])    # einsum: no BLAS threads
    sa.flags.writeable = sb.flags.writeable = False
    return ShiftTest(sa=sa, sb=sb, exact=len(av) <= EXACT_CLUSTERS, estimate=float(av.sum()),
                     scale_a=float(np.abs(av).sum()), scale_b=float(np.abs(bv).sum()))


class Narrowed:
    """:meth:`ShiftTest.p` at any shift between ``a`` and ``b``, the same float counted over fewer
    patterns: those whose verdict that bracket leaves open (a bisection's later steps all lie in it).

    Every quantity ``p`` computes is monotone in the shift between the bracket's ends, rounding
    included (a correctly rounded product or difference is monotone in each operand):
    ``u_s = sa_s - delta * sb_s`` moves one way, so ``|u_s|`` lies between its values at the ends
    (between 0 and the larger one where ``u_s`` changes sign), and so does the threshold
    ``|u_0| - tol`` (``tol`` grows with ``|delta|``). A pattern whose ``|u_s|`` stays at or above the
    threshold's largest value counts at every shift of the bracket, one below its smallest never;
    only the others are computed, with the operations of ``p``, so the count and ``p`` are identical."""

    def __init__(self, test: ShiftTest, a: float, b: float) -> None:
        self.test = test
        self._sa0, self._sb0 = float(test.sa[0]), float(test.sb[0])     # the observed pattern: Python floats, same IEEE
        sa, sb = test.sa, test.sb
        ua, ub = sa - a * sb, sa - b * sb
        u_lo = np.minimum(ua, ub)
        u_hi = np.maximum(ua, ub, out=ua)
        u0a, u0b = self._sa0 - a * self._sb0, self._sa0 - b * self._sb0
        t0_hi = max(abs(u0a), abs(u0b))
        t0_lo = 0.0 if (u0a < 0) != (u0b < 0) else min(abs(u0a), abs(u0b))
        near = 0.0 if min(a, b) <= 0.0 <= max(a, b) else min(abs(a), abs(b))
        far = max(abs(a), abs(b))
        top, bottom = self._threshold(near, t0_hi), self._threshold(far, t0_lo)   # the threshold's range
        # |u_s| >= top at both ends, u_s of one sign between (else |u_s| reaches 0 < top): both ends >= top
        # or both <= -top; everything counts when top <= 0. |u_s| < bottom at both ends: both in (-bottom, bottom).
        always = np.ones(len(sa), dtype=bool) if top <= 0 else (u_lo >= top) | (u_hi <= -top)
        kept = (u_hi >= bottom) | (u_lo <= -bottom)        # not below the least threshold ...
        self.counted = int(np.count_nonzero(always))
        self.open = np.flatnonzero(kept > always)          # ... nor settled above: open
        self.sa, self.sb = sa[self.open], sb[self.open]

    def _threshold(self, delta: float, t0: float) -> float:
        return t0 - 1e-9 * (self.test.scale_a + abs(delta) * self.test.scale_b)       # as ShiftTest.p

    def p(self, delta: float) -> float:
        """``self.test.p(delta)`` for ``delta`` within the bracket."""
        u = self.sa - delta * self.sb
        threshold = self._threshold(delta, abs(self._sa0 - delta * self._sb0))
        hits = self.counted + int(np.count_nonzero(np.abs(u, out=u) >= threshold))
        return min(1.0, hits / self.test.sa.size)


def shift_interval(test: ShiftTest, *, level: float, bound: float | None,
                   p0: float | None = None) -> tuple[float | None, float | None]:
    """``(lo, hi)``: the shifts ``delta`` that ``test`` does not reject at ``level`` (module docstring),
    searched within ``[-bound, bound]`` (``None``: unbounded, a mean count). A side on which no shift
    within reach is rejected is ``-bound``/``bound`` (``None`` when unbounded): too few clusters to
    bound it. ``p0``: the exact p at shift 0 when the caller has one (it then decides whether 0 is
    inside); the interval contains 0 exactly when that p (else ``test.p(0)``) exceeds ``level``."""
    key = tuple(None if x is None else (type(x), float(x).hex()) for x in (level, bound, p0))   # exact: to the bit
    if key not in test.intervals:
        test.intervals[key] = _shift_interval(test, level=level, bound=bound, p0=p0)
    return test.intervals[key]


def _shift_interval(test: ShiftTest, *, level: float, bound: float | None,
                    p0: float | None) -> tuple[float | None, float | None]:
    """:func:`shift_interval`, computed."""
    est = test.estimate
    reject0 = (test.p(0.0) if p0 is None else p0) <= level

    def rejected(delta: float) -> bool:
        return test.p(delta) <= level

    def side(direction: int) -> float | None:
        far_limit = None if bound is None else direction * bound
        if reject0 and direction * (0.0 - est) > 0:        # 0 lies this way and is rejected: bracket with it
            out = 0.0
        else:
            step = max(abs(est), 1e-3)
            out = est + direction * step
            for _ in range(80):
                if far_limit is not None and direction * (out - far_limit) >= 0:
                    out = far_limit
                    if not rejected(out):
                        return far_limit
                    break
                if rejected(out):
                    break
                step *= 2
                out = est + direction * step
            else:
                return None
        inside, tol = est, 1e-9 * max(1.0, abs(est))
        narrowed: Narrowed | None = None
        for step in range(100):
            if abs(out - inside) <= tol:
                break
            if step == NARROW_AFTER:                    # every later shift lies within this bracket
                narrowed = Narrowed(test, inside, out)
            mid = 0.5 * (inside + out)
            if (narrowed.p(mid) if narrowed is not None else test.p(mid)) <= level:
                out = mid
            else:
                inside = mid
        if not reject0 and direction * (0.0 - inside) > 0:     # 0 not rejected: the interval reaches it
            inside = 0.0
        return inside

    return side(-1), side(+1)
