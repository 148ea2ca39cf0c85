"""A rate with its Wilson interval, and the exact McNemar test on discordant counts.

Pure: no I/O, no printing. The ``stats`` stage, ``candor compare`` and the release
gate all use these functions; nothing else computes an interval or a p-value.

Definitions (docs/stats.md)
---------------------------
*Rate*: ``k`` successes of ``n`` units, ``k / n``; the *unit* names what was counted (a lot,
a run, a (case, field), a frame, a label, a detection). Whether higher is better depends on
the metric (a hit rate is higher-better, a wrong rate lower-better; this module does not care).
Its *Wilson interval* is the score interval ``c -/+ d`` with ``z = Phi^-1(1/2 + confidence/2)``,
``t = 1 + z^2/n``, ``c = (k/n + z^2/(2n)) / t`` and ``d = (z/t) sqrt(k/n (1 - k/n)/n + z^2/(4n^2))``,
clipped to ``[0, 1]`` and made to contain ``k / n``: SciPy's
``binomtest(k, n).proportion_ci(confidence_level, method="wilson")``, computed here from
``scipy.special`` (``ndtri``) so that a stage does not pay ``import scipy.stats`` (about 0.6 s);
``tests/stats/test_rates.py`` checks both agree to 1e-12. Policy for ``n = 0``: no rate (``None``) and the interval
``[0, 1]``: nothing was measured, so every rate is compatible with it.

*Exact McNemar test* of two sides A and B on the same cases, from the discordant counts
``a_only`` (A succeeded, B did not) and ``b_only`` (the reverse): the two-sided binomial test of
``min(a_only, b_only)`` successes in ``d = a_only + b_only`` trials at 0.5, which equals
``min(1, 2 * sum_{i <= min(a_only, b_only)} C(d, i) / 2**d)``: twice the binomial CDF as the
regularized incomplete beta function ``scipy.special.betainc(d - m, m + 1, 1/2)`` (the Boost
routine behind SciPy's ``binomtest(...).pvalue``, checked equal to 1e-12). Policy: zero discordant pairs
give ``p = 1`` (no evidence either way). By hand: 3-0 gives ``2 / 8 = 0.25``; 5-1 gives
``2 * (1 + 6) / 64 = 0.21875``; 6-0 gives ``2 / 64 = 0.03125``.

*Reaching alpha* means ``p <= alpha``. The *smallest k-0 split* (:func:`min_k0`) is the least
number of discordant cases, all one way, whose p reaches alpha: a k-0 split has
``p = 2 ** (1 - k)``, so at alpha 0.05 it is 6 (5-0 gives 0.0625). On a bench of ``n`` paired
cases it is ``None`` when even ``n``-0 cannot reach alpha.

*Imports*: ``scipy.special`` (about 0.15 s to import: SciPy loads its array-API layer with it) is
imported inside the functions that compute with it, not with this module: modules that need only
:data:`CONFIDENCE`, :class:`Rate` or the formatters (the parameters of the release gate, read by
the ``score-detection`` stage) then start without it.

>>> r = wilson(15, 17, unit="lot")
>>> (r.k, r.n, round(r.rate, 3), round(r.lo, 3), round(r.hi, 3))
(15, 17, 0.882, 0.657, 0.967)
>>> mcnemar_p(5, 1), min_k0(0.05)
(0.21875, 6)
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from candor_eval.common.counts import MAX_COUNT, Count, Estimate
from candor_eval.common.params import check_probability
from candor_eval.common.rounding import rounded
from candor_eval.stats.records import decoded

CONFIDENCE = 0.95          # the default confidence level of every interval (params.yaml: stats.confidence)


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n`` units (``unit`` names them), clustered in ``clusters`` clusters named
    ``cluster``, with the interval ``[lo, hi]`` (``None``: no interval, fewer than 2 clusters).

    ``estimate`` is ``rate`` (a proportion) or ``mean`` (a total per unit, e.g. false positives
    per frame); ``deff`` the design effect the interval used (1 for independent units).
    Stored as ``{"k", "n", "unit", "estimate", "cluster", "clusters", "deff", "rate", "lo",
    "hi"}`` (rate, bounds and deff to 6 decimals; ``rate`` is ``null`` when ``n = 0``). The
    confidence level is stored once per file.
    """

    k: int
    n: int
    unit: str
    rate: float | None
    lo: float | None
    hi: float | None
    cluster: str = ""
    clusters: int = 0
    deff: float = 1.0
    estimate: Estimate = "rate"

    def as_json(self) -> dict[str, Any]:
        """The stored form."""
        return {"k": self.k, "n": self.n, "unit": self.unit, "estimate": self.estimate,
                "cluster": self.cluster or self.unit, "clusters": self.clusters, "deff": rounded(self.deff),
                "rate": rounded(self.rate), "lo": rounded(self.lo), "hi": rounded(self.hi)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> Rate:
        """Read :meth:`as_json`'s form back; another shape is an InputError naming ``where``."""
        def build() -> Rate:
            def opt(key: str) -> float | None:
                return None if doc[key] is None else float(doc[key])
            if doc["estimate"] not in ("rate", "mean"):
                raise ValueError(f"estimate {doc['estimate']!r}")
            return cls(k=int(doc["k"]), n=int(doc["n"]), unit=str(doc["unit"]), rate=opt("rate"),
                       lo=opt("lo"), hi=opt("hi"), cluster=str(doc["cluster"]), clusters=int(doc["clusters"]),
                       deff=float(doc["deff"]), estimate=doc["estimate"])
        return decoded(where, "a rate {k, n, unit, estimate, cluster, clusters, deff, rate, lo, hi}", build)


def _check_counts(k: int, n: int) -> None:
    if isinstance(k, bool) or isinstance(n, bool) or not isinstance(k, int) or not isinstance(n, int):
        raise TypeError(f"k and n must be integers, got {k!r}, {n!r}")
    if n < 0 or k < 0 or k > n or n >= MAX_COUNT:
        raise ValueError(f"need 0 <= k <= n < 2**53, got k={k}, n={n}")


def wilson(k: int, n: int, *, unit: str = "case", confidence: float = CONFIDENCE) -> Rate:
    """The rate ``k / n`` of ``unit`` with its Wilson interval (definition and ``n = 0`` policy above)."""
    _check_counts(k, n)
    check_probability(confidence, where="confidence")
    if n == 0:
        return Rate(k=0, n=0, unit=unit, rate=None, lo=0.0, hi=1.0, cluster=unit)
    from scipy.special import ndtri  # here, not at the top: see "Imports" in the module docstring

    lo, hi = _wilson_bounds(k / n, n, float(ndtri(0.5 + 0.5 * confidence)))
    return Rate(k=k, n=n, unit=unit, rate=k / n, lo=lo, hi=hi, cluster=unit, clusters=n)


def _wilson_bounds(p: float, n: float, z: float) -> tuple[float, float]:
    """The Wilson bounds of proportion ``p`` at (possibly fractional) sample size ``n``, clipped to
    ``[0, 1]`` and made to contain ``p``."""
    t = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / t
    half = z / t * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return min(max(centre - half, 0.0), p), max(min(centre + half, 1.0), p)


def ratio_variance(k: int, n: int, *, g: int, sum_k2: int, sum_kn: int, sum_n2: int) -> Fraction:
    """``G/(G-1) * sum_g (k_g - r n_g)**2 / n**2`` with ``r = k / n``, exactly, from the per-cluster
    sums: the cluster-robust (linearised) variance of the ratio ``k / n`` over ``G >= 2`` clusters
    (``n > 0``; ``k_g`` may be any integers, e.g. paired differences).

    >>> ratio_variance(3, 4, g=2, sum_k2=5, sum_kn=6, sum_n2=8)     # clusters (2 of 2) and (1 of 2)
    Fraction(1, 16)
    """
    num = n * n * sum_k2 - 2 * n * k * sum_kn + k * k * sum_n2        # n**2 sum (k_g - r n_g)**2
    return Fraction(g * num, (g - 1) * n ** 4)


def kish_df(g: int, n: int, sum_n2: int) -> float:
    """``min(G - 1, G_K - 1)``: the clusters' own degrees of freedom, or fewer when the clusters are
    uneven, with ``G_K = n**2 / sum n_g**2`` Kish's effective number of ``G`` clusters holding ``n``
    units in all (``sum_n2`` the sum of their squared sizes; ``G_K = G`` when all are equal, near 1
    when one cluster holds nearly everything).

    >>> kish_df(4, 8, 16), kish_df(4, 8, 5 * 5 + 1 + 1 + 1)
    (3.0, 1.2857142857142856)
    """
    return min(g - 1.0, n * n / sum_n2 - 1.0)


def cluster_df(count: Count, var: Fraction) -> float:
    """The degrees of freedom of Student's t for a clustered interval (docs/stats.md, "Rates"): the
    least of

    - ``G - 1``, the clusters' own;
    - ``G_K - 1`` with ``G_K = n**2 / sum n_g**2`` (Kish's effective number of clusters: uneven
      clusters are worth fewer; ``G_K = G`` when all are equal; :func:`kish_df`);
    - Satterthwaite's ``2 / (2 / (G - 1) + g2 / G)``, the degrees of freedom of a variance estimated
      from ``G`` clusters whose per-cluster values have excess kurtosis ``g2``, with ``g2`` that of a
      working model fitted by moments to the rate and its cluster variance: for a proportion, the
      cluster proportions as Beta with mean ``r`` and variance ``G V`` (all-or-none clusters when
      that variance reaches ``r (1 - r)``); for a mean, the cluster totals as negative binomial
      with mean ``m n / G`` and variance ``V n**2 / G`` (Poisson when not over-dispersed). Its
      kurtosis is a moment estimate from few clusters, so for a mean it is not taken below
      ``(G - 1) / 2``. ``g2 = 0`` (no adjustment) when the rate is 0 or, for a proportion, 1.

    ``count`` has ``G >= 2`` clusters and ``n > 0``; ``var`` is its :func:`ratio_variance`.

    >>> from candor_eval.common.counts import Clusters
    >>> cluster_df(Count(4, 8, "label", Clusters("frame", 2, 8, 16, 32)), Fraction(0))   # 2 equal clusters
    1.0
    """
    c = count.clusters
    assert c is not None and c.g >= 2 and count.n > 0
    g, k, n = c.g, count.k, count.n
    df = kish_df(g, n, c.sum_n2)
    g2 = 0.0
    if count.estimate == "rate" and 0 < k < n:
        r = k / n
        s = max(0.0, r * (1.0 - r) / (g * float(var)) - 1.0) if var > 0 else math.inf
        if math.isfinite(s):
            a, b = r * s, (1.0 - r) * s
            g2 = max(0.0, 6.0 * ((a - b) ** 2 * (a + b + 1) - a * b * (a + b + 2)) / (a * b * (a + b + 2) * (a + b + 3))
                     if s > 0 else (1.0 - 6.0 * r * (1.0 - r)) / (r * (1.0 - r)))
        return min(df, 2.0 / (2.0 / (g - 1) + g2 / g))
    if count.estimate == "mean" and k > 0:
        mu, v = k / g, float(var) * n * n / g          # a cluster total's mean and variance
        if v > mu:
            size = mu * mu / (v - mu)
            g2 = 6.0 / size + size / (mu * (size + mu))
        else:
            g2 = 1.0 / mu
        return min(df, max((g - 1) / 2.0, 2.0 / (2.0 / (g - 1) + g2 / g)))
    return df


def interval(count: Count, *, confidence: float = CONFIDENCE) -> Rate:
    """The rate of ``count`` with its interval over independent clusters (docs/stats.md, "Rates").

    - Independent units (no clusters, or every cluster holds one unit): the plain Wilson interval.
    - A proportion over ``G >= 2`` clusters: the Wilson interval at the effective sample size
      ``n* = n / deff * (z / t)**2``, ``deff = max(1, V / (r (1 - r) / n))`` with ``V``
      the cluster-robust variance (:func:`ratio_variance`) and ``deff = 1`` when ``r`` is
      0 or 1; ``t`` Student's quantile (SciPy's ``stdtrit``) on :func:`cluster_df` degrees of
      freedom, so few, uneven or heavy-tailed clusters widen it; never wider than the interval
      of all-or-none clusters (:func:`all_or_none_bounds`), the most clustering can cost.
    - A mean (``estimate: mean``, e.g. false positives per frame) over ``G >= 2`` clusters: the
      exact Poisson (Garwood) interval of the count ``m n*`` at the effective exposure
      ``n* = n / phi * (z / t)**2``, ``phi = max(1, V n / m)`` (the over-dispersion, stored as
      ``deff``; ``phi = 1`` when ``m = 0``), bounds ``Gamma^-1(m n*, a/2) / n*`` (0 when
      ``m = 0``) and ``Gamma^-1(m n* + 1, 1 - a/2) / n*``: skewed like the counts it describes.
    - Fewer than 2 clusters: no interval (``lo = hi = None``).

    >>> from candor_eval.common.counts import Clusters
    >>> r = interval(Count(4, 6, "label", Clusters("frame", 2, 10, 12, 18)))
    >>> (r.clusters, r.deff, round(r.lo, 3), round(r.hi, 3))     # 3/3 and 1/3: two clusters, all-or-none
    (2, 3.0, 0.04, 0.998)
    """
    check_probability(confidence, where="confidence")
    k, n, c = count.k, count.n, count.clusters
    name = count.unit if c is None else c.name
    if count.estimate == "rate" and (c is None or c.sum_n2 == n):
        w = wilson(k, n, unit=count.unit, confidence=confidence)
        return Rate(k=k, n=n, unit=count.unit, rate=w.rate, lo=w.lo, hi=w.hi, cluster=name,
                    clusters=n if c is None else c.g)
    g = 0 if c is None else c.g
    if c is None or n == 0 or g < 2:
        return Rate(k=k, n=n, unit=count.unit, rate=k / n if n else None, lo=None, hi=None, cluster=name,
                    clusters=g, estimate=count.estimate)
    from scipy.special import gammaincinv, ndtri, stdtrit  # here: see "Imports" in the module docstring

    var = ratio_variance(k, n, g=g, sum_k2=c.sum_k2, sum_kn=c.sum_kn, sum_n2=c.sum_n2)
    z = float(ndtri(0.5 + 0.5 * confidence))
    t = float(stdtrit(cluster_df(count, var), 0.5 + 0.5 * confidence))
    r = k / n
    if count.estimate == "mean":
        phi = 1.0 if k == 0 else max(1.0, float(var * n * n / k))
        exposure = n / phi * (z / t) ** 2
        x = r * exposure
        tail = 0.5 - 0.5 * confidence
        lo = 0.0 if k == 0 else min(r, float(gammaincinv(x, tail)) / exposure)
        hi = max(r, float(gammaincinv(x + 1.0, 1.0 - tail)) / exposure)
        return Rate(k=k, n=n, unit=count.unit, rate=r, lo=lo, hi=hi, cluster=name,
                    clusters=g, deff=phi, estimate="mean")
    deff = 1.0 if k in (0, n) else max(1.0, float(var * n * n * n / (k * (n - k))))
    lo, hi = _wilson_bounds(r, n / deff * (z / t) ** 2, z)
    whole_lo, whole_hi = all_or_none_bounds(k, n, c.sum_n2, confidence=confidence)
    return Rate(k=k, n=n, unit=count.unit, rate=r, lo=max(lo, whole_lo), hi=min(hi, whole_hi), cluster=name,
                clusters=g, deff=deff)


def all_or_none_bounds(k: int, n: int, sum_n2: int, *, confidence: float) -> tuple[float, float]:
    """The Clopper-Pearson interval of the rate ``r = k / n`` were every cluster all-or-none (each unit of
    a cluster a success, or none): ``r G_K`` successes of ``G_K = n**2 / sum n_g**2`` trials (Kish's
    effective clusters; Beta quantiles, so neither need be an integer), bounds 0 and 1 at ``k = 0``
    and ``k = n``. That is the largest variance a rate over these clusters can have,
    ``r (1 - r) / G_K``, with nothing estimated, so a clustered rate's interval is never wider
    (:func:`interval`): where few clusters and a rare outcome leave the estimated variance's degrees of
    freedom near 0, its t quantile would otherwise stretch the interval to almost ``[0, 1]``.

    >>> [round(x, 4) for x in all_or_none_bounds(5, 10, 50, confidence=0.95)]   # 1 of 2 equal clusters
    [0.0126, 0.9874]
    """
    from scipy.special import betaincinv  # here, not at the top: see "Imports" in the module docstring

    gk, a = n * n / sum_n2, 1.0 - confidence
    x = k / n * gk
    lo = 0.0 if k == 0 else float(betaincinv(x, gk - x + 1.0, a / 2))
    hi = 1.0 if k == n else float(betaincinv(x + 1.0, gk - x, 1.0 - a / 2))
    return min(lo, k / n), max(hi, k / n)


def mcnemar_p(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts; ``1.0`` when both are 0.

    Symmetric in its arguments (definition above).
    """
    for name, v in (("a_only", a_only), ("b_only", b_only)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    d = a_only + b_only
    if d >= MAX_COUNT:
        raise ValueError(f"a_only + b_only must be < 2**53, got {d}")
    if d == 0:
        return 1.0
    low = min(a_only, b_only)
    if 2 * low == d:
        return 1.0
    from scipy.special import betainc  # here, not at the top: see "Imports" in the module docstring

    tail = float(betainc(d - low, low + 1, 0.5))        # P(X <= low) for X ~ Binomial(d, 1/2); the upper tail is equal
    return min(1.0, tail + tail)


def min_k0(alpha: float, *, n: int | None = None) -> int | None:
    """Smallest ``k`` such that a k-0 split has ``p <= alpha``; ``None`` if ``k > n``.

    ``n`` is the number of paired cases on the bench (``None``: unbounded).
    """
    check_probability(alpha, where="alpha")
    # p(k-0) = 2**(1-k) <= alpha  <=>  k >= 1 - log2(alpha); check neighbours for float safety
    k = max(1, math.ceil(1.0 - math.log2(alpha)) - 1)
    while mcnemar_p(k, 0) > alpha:
        k += 1
    while k > 1 and mcnemar_p(k - 1, 0) <= alpha:
        k -= 1
    if n is not None and k > n:
        return None
    return k


def min_split(discordant: int, alpha: float) -> tuple[int, int] | None:
    """Most balanced split ``(major, minor)`` of ``discordant`` cases whose p reaches alpha.

    E.g. 10 discordant cases at alpha 0.05 need at least a 9-1 split (8-2 gives 0.109).
    ``None`` when even ``discordant``-0 does not reach alpha. The p-value grows with ``minor``
    up to ``discordant // 2``, so the answer is found by bisection (``O(log n)`` tests).
    """
    check_probability(alpha, where="alpha")
    if isinstance(discordant, bool) or not isinstance(discordant, int) or not 0 <= discordant < MAX_COUNT:
        raise ValueError(f"discordant must be an integer in [0, 2**53), got {discordant!r}")
    if mcnemar_p(discordant, 0) > alpha:
        return None
    lo, hi = 0, discordant // 2          # p(lo) <= alpha; find the largest such minor
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mcnemar_p(discordant - mid, mid) <= alpha:
            lo = mid
        else:
            hi = mid - 1
    return discordant - lo, lo


def fmt_bounds(r: Rate) -> str:
    """``[0.150, 0.850]``; ``(no interval: 1 frame)`` under 2 clusters; ``""`` when nothing was measured."""
    if r.rate is None:
        return ""
    if r.lo is None or r.hi is None:
        return f"(no interval: {r.clusters} {r.cluster})"
    return f"[{r.lo:.3f}, {r.hi:.3f}]"


def fmt_interval(r: Rate) -> str:
    """``0.500 [0.150, 0.850]`` (:func:`fmt_bounds` after the rate); ``n/a`` when nothing was measured."""
    return "n/a" if r.rate is None else f"{r.rate:.3f} {fmt_bounds(r)}"


def fmt_count(r: Rate) -> str:
    """``2/8 = 0.250 [0.071, 0.591]`` (a mean: ``12 per 8 frames = ...``), with its cluster when the
    units cluster; ``n/a (0 <unit>s)`` when nothing was measured."""
    if r.rate is None:
        return f"n/a (0 {r.unit}s)"
    head = f"{r.k} per {r.n} {r.unit}s" if r.estimate == "mean" else f"{r.k}/{r.n}"
    by = "" if r.cluster == r.unit else f" ({r.clusters} {r.cluster}s)"
    return f"{head} = {fmt_interval(r)}{by}"
