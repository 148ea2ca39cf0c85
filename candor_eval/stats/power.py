"""What a bench could have detected: exact power of the paired sign test, and the improvement it
detects at a given power.

Pure: no I/O. For independent units, no simulation: the design is ``n`` independent pairs (lots),
each *discordant* (one side succeeds, the other not) with
probability ``d``; given that it is discordant it favours B with probability
``q = (d + delta) / (2 d)``, so that ``delta`` is B's rate minus A's. The test rejects in B's
favour when the exact McNemar p of the discordant split reaches alpha, which for ``D`` discordant
pairs means at least ``c(D)`` of them favour B (:func:`candor_eval.stats.rates.min_split`). Its power
is, exactly,

    power = sum_D Binom(D; n, d) * P(Binom(D, q) >= c(D))

(both terms from the regularised incomplete beta function, SciPy's ``betainc``). The smallest
detectable improvement at a given power is the least ``delta`` on a grid of 0.001 (a tenth of a
percentage point) whose power reaches it: a grid, so the figure is the same on every machine.

*Clusters.* Where units cluster (labels in frames, fields in cases), the test that runs is the
exact sign-flip test over the clusters, and its power is that of :func:`clustered_detectable`
(a seeded simulation of that test over the bench's own clusters), not this formula on some
"effective" number of pairs: with ``G`` clusters no outcome reaches a p below ``2 ** (1 - G)``.

>>> round(sign_test_power(17, 0.3, 0.2, alpha=0.05), 4)
0.1293
>>> detectable(17, 0.3, alpha=0.05), detectable(200, 0.3, alpha=0.05)
(None, 0.112)
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
from scipy.special import betainc

from candor_eval.stats.clusters import min_clusters
from candor_eval.stats.signflip import signflip_p

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


# --- the power of the test that runs: the exact sign-flip test over the bench's own clusters ---

REPS = 600              # simulated benches per power figure (seeded: the same figure on every machine)
SEED = 20260            # the simulation's fixed seed


@dataclass(frozen=True)
class ClusterPower:
    """What a clustered bench could have detected with the exact sign-flip test it runs
    (:func:`clustered_detectable`): ``clusters`` with any discordant unit of ``total`` clusters,
    ``detectable`` the least improvement (rate units, a multiple of 0.001) found with ``power``
    (``None``: none is), ``best`` the power at the largest improvement the observed discordance
    allows, and ``reason`` when no improvement can reach ``power``."""

    clusters: int
    total: int
    discordance: float
    rho: float
    detectable: float | None
    best: float
    power: float
    alpha: float
    reason: str | None = None


def _rho(discordant: Sequence[int], diffs: Sequence[int]) -> float:
    """The share of clusters whose discordant units move together, by moments: with ``m_g`` discordant
    units and difference ``d_g``, ``(sum e_g**2 - sum m_g) / (sum m_g**2 - sum m_g)`` clipped to
    ``[0, 1]``, ``e_g = d_g - m_g sum d / sum m`` (0 when no cluster has two discordant units)."""
    total_m, total_d = sum(discordant), sum(diffs)
    sm2 = sum(m * m for m in discordant)
    if total_m == 0 or sm2 == total_m:
        return 0.0
    e2 = math.fsum((d - m * total_d / total_m) ** 2 for m, d in zip(discordant, diffs, strict=True))
    return min(1.0, max(0.0, (e2 - total_m) / (sm2 - total_m)))


class _Bench:
    """Seeded draws of a bench's per-cluster differences under an improvement (common random
    numbers: one set of uniforms serves every improvement, so power grows with it)."""

    def __init__(self, discordant: Sequence[int], rho: float, *, reps: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.m = np.asarray([m for m in discordant if m > 0], dtype=np.int64)
        g, top = len(self.m), int(self.m.max()) if len(self.m) else 0
        self.together = rng.random((reps, g)) < rho          # the cluster's units move as one
        self.one = rng.random((reps, g))                      # that one direction's uniform
        self.each = rng.random((reps, g, top))                # each unit's own uniform
        self.mask = np.arange(top)[None, None, :] < self.m[None, :, None]
        np.copyto(self.each, np.inf, where=~self.mask)        # no unit there: never below q

    def _distinct(self, q: float) -> tuple[list[tuple[int, ...]], list[int], int]:
        """The draws under ``q`` whose differences sum above 0 (the test can find B better only there), each
        distinct multiset once as its sorted differences, with how many draws it stands for, the most
        frequent first; and the number of draws (the p of a draw depends on its multiset only)."""
        b_units = (self.each < q).sum(axis=2)
        d = np.where(self.together, np.where(self.one < q, self.m, -self.m), 2 * b_units - self.m)
        if d.shape[1] == 0:
            return [], [], len(d)
        rows, counts = _unique_rows(np.sort(d[d.sum(axis=1) > 0], axis=1))
        order = np.argsort(-counts, kind="stable")        # stable: ties keep the rows' lexicographic order
        return list(map(tuple, rows[order].tolist())), counts[order].tolist(), len(d)

    def power(self, q: float, alpha: float) -> float:
        """Share of draws where the two-sided sign-flip test reaches alpha in B's favour, each
        discordant unit favouring B with probability ``q``."""
        rows, counts, n = self._distinct(q)
        return sum(c for r, c in zip(rows, counts, strict=True) if _sorted_signflip_p(r) <= alpha) / n

    def reaches(self, q: float, alpha: float, power: float) -> bool:
        """``self.power(q, alpha) >= power``, testing draws only until the ones tested settle it: the
        hits so far already reach ``power``, or even every draw left cannot."""
        rows, counts, n = self._distinct(q)
        hits, left = 0, sum(counts)
        for row, count in zip(rows, counts, strict=True):
            if hits / n >= power:
                return True
            if (hits + left) / n < power:
                return False
            left -= count
            if _sorted_signflip_p(row) <= alpha:
                hits += count
        return hits / n >= power


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_counts=True)`` of a 2-D integer array: its distinct rows in
    lexicographic order and how often each occurs, by :func:`numpy.lexsort` on the columns (NumPy's
    ``axis=0`` sorts the rows as structured records, field by field, several times slower).

    >>> rows, counts = _unique_rows(np.array([[2, 1], [0, 5], [2, 1], [0, -1]]))
    >>> rows.tolist(), counts.tolist()
    ([[0, -1], [0, 5], [2, 1]], [1, 1, 2])
    """
    if len(a) == 0:
        return a, np.zeros(0, dtype=np.int64)
    s = a[np.lexsort(a.T[::-1])]                                 # the last key is the primary one: column 0
    starts = np.flatnonzero(np.concatenate(([True], np.any(s[1:] != s[:-1], axis=1))))
    return s[starts], np.diff(np.append(starts, len(s)))


@lru_cache(maxsize=1 << 16)
def _sorted_signflip_p(diffs: tuple[int, ...]) -> float:
    """:func:`~candor_eval.stats.signflip.signflip_p` of a draw's differences in ascending order. The
    test's p does not depend on the clusters' order (it reads the sorted magnitudes, the sum and the
    count of positive ones), so a simulation asks once per distinct multiset of differences, and
    the benches of one stage run (every improvement of a bisection, every metric) share the answers:
    the same p, a fraction of the calls."""
    return signflip_p(diffs)


def clustered_detectable(discordant: Sequence[int], diffs: Sequence[int], n: int, *, alpha: float,
                         power: float = POWER, reps: int = REPS, seed: int = SEED,
                         rho: float | None = None) -> ClusterPower:
    """The least improvement the exact sign-flip test over these clusters detects with ``power``
    (docs/stats.md, "What the bench could have detected"), planned with the observed (post-hoc)
    discordance.

    ``discordant[g]``: the discordant units of cluster ``g`` (one side succeeded, the other not),
    ``diffs[g]`` its B-minus-A difference, ``n`` the paired units. Model: under an improvement
    ``delta`` (B's rate minus A's) each discordant unit favours B with probability
    ``q = 1/2 + delta n / (2 D)``, ``D = sum discordant``; a share ``rho`` of clusters
    (:func:`_rho`, the observed clustering of the differences) have all their discordant units move
    together (``rho`` given: a plan's assumption instead). The power at ``delta`` is the share of
    ``reps`` seeded simulated benches whose exact
    sign-flip p (:func:`candor_eval.stats.signflip.signflip_p`, the test the stats stage runs) is at
    most alpha in B's favour; the least ``delta`` on a grid of 0.001 up to ``D / n`` reaching
    ``power`` is found by bisection. Clusters with no discordant unit carry no information: with
    fewer than :func:`candor_eval.stats.clusters.min_clusters` that differ, no outcome can reach
    alpha, and that is said instead (``reason``), never a power figure.
    """
    if len(discordant) != len(diffs) or n <= 0:
        raise ValueError("need one difference per cluster and n > 0")
    g = sum(1 for m in discordant if m > 0)
    total = len(discordant)
    big_d = sum(discordant)
    rho = _rho(discordant, diffs) if rho is None else rho
    disc = big_d / n
    if g < min_clusters(alpha):
        clusters = f"{g} cluster that differs" if g == 1 else f"{g} clusters that differ"
        why = (f"cannot reject at alpha {alpha:g} with {clusters}: even all of them moving one way "
               f"gives p = {2.0 ** (1 - g):.3g}" if g else "no discordant unit: nothing to plan with")
        return ClusterPower(g, total, disc, rho, None, 0.0, power, alpha, why)
    bench = _Bench(discordant, rho, reps=reps, seed=seed)
    top = math.floor(disc * GRID)
    def q_at(step: int) -> float:
        return 0.5 + step / GRID * n / (2.0 * big_d)
    best = bench.power(q_at(top), alpha)
    if top < 1 or best < power:
        return ClusterPower(g, total, disc, rho, None, best, power, alpha,
                            f"cannot reach {power:.0%} power at any improvement the observed discordance allows "
                            f"(at most {best:.0%})")
    lo, hi = 0, top
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if bench.reaches(q_at(mid), alpha, power) else (mid, hi)
    return ClusterPower(g, total, disc, rho, hi / GRID, best, power, alpha)


def cluster_discordance(a: Mapping[tuple[str, ...], int], b: Mapping[tuple[str, ...], int], *,
                        cluster_of: Mapping[tuple[str, ...], str] | None) -> tuple[list[int], list[int], int]:
    """Per cluster (sorted by cluster id) of the units A and B share: its discordant units and its
    B-minus-A difference (outcomes, 1 = success), and the number of shared units; ``cluster_of``
    ``None``: each unit is its own cluster.

    >>> cluster_discordance({("f1", "0"): 1, ("f1", "1"): 0, ("f2", "0"): 1}, {("f1", "0"): 0, ("f1", "1"): 1,
    ...                     ("f2", "0"): 1}, cluster_of={("f1", "0"): "f1", ("f1", "1"): "f1", ("f2", "0"): "f2"})
    ([2, 0], [0, 0], 3)
    """
    common = sorted(set(a) & set(b))
    per: dict[str, list[int]] = {}
    for case in common:
        s = per.setdefault("/".join(case) if cluster_of is None else cluster_of[case], [0, 0])
        va, vb = int(a[case]), int(b[case])
        s[0] += va != vb
        s[1] += vb - va
    return [per[g][0] for g in sorted(per)], [per[g][1] for g in sorted(per)], len(common)


def power_json(p: ClusterPower) -> dict[str, object]:
    """The stored form of a :class:`ClusterPower` (``stats.json``: ``power``)."""
    return {"test": "exact sign-flip over clusters", "clusters_total": p.total, "clusters_discordant": p.clusters,
            "discordance": round(p.discordance, 6), "rho": round(p.rho, 6), "alpha": p.alpha, "power": p.power,
            "detectable": p.detectable, "power_at_most": round(p.best, 6), "reason": p.reason,
            "planned_with": "the observed (post-hoc) discordance", "reps": REPS, "seed": SEED}


def plan_clusters(clusters: int, cluster_size: int, discordance: float, *, alpha: float, power: float = POWER,
                  rho: float = 0.0) -> ClusterPower:
    """What a planned clustered bench detects: ``clusters`` clusters of ``cluster_size`` units, each
    with ``round(cluster_size * discordance)`` discordant units (at least 1) of which a share ``rho``
    of clusters move together (:func:`clustered_detectable` on that bench)."""
    m = max(1, round(cluster_size * discordance))
    return clustered_detectable([m] * clusters, [0] * clusters, clusters * cluster_size, alpha=alpha, power=power,
                                rho=rho)


def clusters_needed(improvement: float, cluster_size: int, discordance: float, *, alpha: float, power: float = POWER,
                    rho: float = 0.0, limit: int = 512) -> int | None:
    """The least number of clusters of ``cluster_size`` units whose sign-flip test detects
    ``improvement`` with ``power`` (:func:`plan_clusters`); ``None`` above ``limit``. Searched upward
    from :func:`~candor_eval.stats.clusters.min_clusters` by doubling, then bisection."""
    def ok(g: int) -> bool:
        p = plan_clusters(g, cluster_size, discordance, alpha=alpha, power=power, rho=rho)
        return p.detectable is not None and p.detectable <= improvement
    hi = min_clusters(alpha)
    while not ok(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = max(min_clusters(alpha) - 1, hi // 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
