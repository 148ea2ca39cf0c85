"""The exact sign-flip test of paired per-cluster differences: the one paired test of candor.

Pure: no I/O, no random numbers. Under the null hypothesis that A and B are equally good, the
difference ``d_g`` of cluster ``g`` (an integer: B's successes minus A's on the cluster's units,
or A's count minus B's where fewer is better) is as likely to have either sign, independently
across clusters (the clusters are the independent units; what happens inside one is not). So
every one of the ``2**G`` sign patterns ``s`` is equally likely, and the two-sided p-value is the
share of patterns whose ``|sum_g s_g d_g|`` is at least the observed ``|sum_g d_g|``
(docs/stats.md, "Paired tests").

Computed exactly: with ``D = sum_g |d_g|`` and ``X`` the sum of the ``|d_g|`` that keep their
sign, ``sum_g s_g d_g = +/-(2X - D)``; the distribution of ``X`` is a subset sum over the
``|d_g|``, built one cluster at a time (``D + 1`` cells, each cluster halves and shifts: exact
in binary floating point but for rounding in the far tail, the same on every CPU). Clusters
with ``d_g = 0`` carry no information. When every ``|d_g| <= 1`` (one discordant unit per
cluster at most) the test *is* the exact McNemar test on the clusters that differ, and it is
computed as such (:func:`candor_eval.stats.rates.mcnemar_p`). Above ``D =`` :data:`EXACT_LIMIT` the
normal limit of the same permutation distribution is used: ``T`` has mean 0 and variance
``sum_g d_g**2``, ``p = erfc(|sum d| / sqrt(2 sum d**2))``.

>>> signflip_p([3, 0, 1, 1]), signflip_p([1, 1, 1, 1, 1, 1]), signflip_p([2, -2])
(0.25, 0.03125, 1.0)
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from candor_eval.stats.rates import mcnemar_p

EXACT_LIMIT = 20_000       # sum of |d_g| up to which the distribution is enumerated (cost: clusters x this)


def signflip_p(diffs: Sequence[int]) -> float:
    """Two-sided exact sign-flip p-value of per-cluster integer differences (module docstring);
    ``1.0`` when every difference is 0 or they sum to 0."""
    for d in diffs:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise ValueError(f"differences must be integers, got {d!r}")
    mags = sorted(abs(int(d)) for d in diffs if d != 0)
    if not mags:
        return 1.0
    observed = abs(sum(int(d) for d in diffs))
    if mags[-1] == 1:
        pos = sum(1 for d in diffs if d > 0)
        return mcnemar_p(pos, len(mags) - pos)
    if observed == 0:
        return 1.0
    total = sum(mags)
    if total > EXACT_LIMIT:
        return min(1.0, math.erfc(observed / math.sqrt(2.0 * sum(m * m for m in mags))))
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    reach = 0
    for m in mags:
        reach += m
        dist[m:reach + 1] += dist[:reach + 1 - m].copy()   # keep its sign or flip it ...
        dist[:reach + 1] *= 0.5                            # ... each with probability 1/2
    lower = (total - observed) // 2                       # |2X - D| >= observed: X <= lower or, symmetrically, above
    return min(1.0, 2.0 * math.fsum(dist[:lower + 1].tolist()))
