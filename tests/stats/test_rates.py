"""candor_eval/stats/rates.py against independent values: statsmodels and hand computation."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from candor_eval.common.counts import Count, clusters_of
from candor_eval.common.errors import InputError
from candor_eval.stats.rates import (
    Rate,
    all_or_none_bounds,
    interval,
    kish_df,
    mcnemar_p,
    min_k0,
    min_split,
    ratio_variance,
    wilson,
)


def hand_mcnemar(b: int, c: int) -> float:
    """The exact McNemar p written out from its definition, independently of SciPy."""
    d = b + c
    if d == 0:
        return 1.0
    tail = sum(math.comb(d, i) for i in range(min(b, c) + 1)) / 2 ** d
    return min(1.0, 2 * tail)


def hand_wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize("k,n", [(0, 1), (0, 17), (17, 17), (15, 17), (1, 2), (12, 24), (3, 1000)])
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k, n, conf):
    r = wilson(k, n, confidence=conf)
    lo, hi = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    assert r.lo == pytest.approx(lo, abs=1e-12)
    assert r.hi == pytest.approx(hi, abs=1e-12)
    assert r.rate == k / n


def test_wilson_by_hand_and_edges():
    lo, hi = hand_wilson(15, 17, 1.959963984540054)
    r = wilson(15, 17)
    assert (r.lo, r.hi) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))
    # 15/17 is compatible with "two thirds to nearly all"
    assert round(r.lo, 2) == 0.66 and round(r.hi, 2) == 0.97
    zero, full = wilson(0, 5), wilson(5, 5)
    assert zero.lo == 0.0 and zero.hi == pytest.approx(hand_wilson(0, 5, 1.959963984540054)[1])
    assert full.hi == 1.0 and full.lo == pytest.approx(1 - zero.hi)


def test_wilson_n0_policy():
    r = wilson(0, 0)
    assert (r.rate, r.lo, r.hi, r.n) == (None, 0.0, 1.0, 0)


@pytest.mark.parametrize("k,n,exc", [(3, 2, ValueError), (-1, 2, ValueError), (1, -1, ValueError),
                                     (1.0, 2, TypeError), (True, 2, TypeError)])
def test_wilson_rejects(k, n, exc):
    with pytest.raises(exc):
        wilson(k, n)


def test_wilson_rejects_confidence():
    with pytest.raises(InputError, match="confidence: must be strictly between 0 and 1"):
        wilson(1, 2, confidence=1.0)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_invariants(kn, conf):
    k, n = kn
    r = wilson(k, n, confidence=conf)
    assert 0.0 <= r.lo <= r.hi <= 1.0
    if n:
        assert r.lo <= k / n <= r.hi
        mirror = wilson(n - k, n, confidence=conf)
        assert mirror.lo == pytest.approx(1 - r.hi, abs=1e-9)


@pytest.mark.parametrize("b,c,expected", [(3, 0, 0.25), (5, 1, 0.21875), (6, 0, 0.03125),
                                          (5, 0, 0.0625), (0, 0, 1.0), (4, 4, 1.0), (1, 0, 1.0)])
def test_mcnemar_worked_figures(b, c, expected):
    assert mcnemar_p(b, c) == pytest.approx(expected, abs=1e-12)
    assert mcnemar_p(c, b) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("b,c", [(3, 0), (5, 1), (9, 2), (0, 7), (10, 10), (13, 4), (1, 30)])
def test_mcnemar_matches_statsmodels(b, c):
    ref = sm_mcnemar([[5, b], [c, 5]], exact=True).pvalue
    assert mcnemar_p(b, c) == pytest.approx(ref, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_invariants(b, c):
    p = mcnemar_p(b, c)
    assert 0.0 < p <= 1.0
    assert p == pytest.approx(mcnemar_p(c, b), abs=1e-12)
    assert p == pytest.approx(hand_mcnemar(b, c), abs=1e-9)
    if b == c:
        assert p == 1.0


def test_mcnemar_rejects_negative():
    with pytest.raises(ValueError):
        mcnemar_p(-1, 2)


@pytest.mark.parametrize("alpha,n,expected", [(0.05, None, 6), (0.05, 17, 6), (0.05, 5, None),
                                              (0.05, 6, 6), (0.0625, None, 5), (0.01, None, 8),
                                              (0.5, None, 2), (0.9, None, 2)])
def test_min_k0(alpha, n, expected):
    assert min_k0(alpha, n=n) == expected
    if expected is not None:  # by hand: first k with 2**(1-k) <= alpha
        assert 2 ** (1 - expected) <= alpha < 2 ** (2 - expected) or expected == 2


@pytest.mark.parametrize("d,expected", [(10, (9, 1)), (6, (6, 0)), (5, None), (20, (15, 5)), (0, None)])
def test_min_split(d, expected):
    assert min_split(d, 0.05) == expected
    if expected:
        assert hand_mcnemar(*expected) <= 0.05
        assert expected[1] + 1 > d // 2 or hand_mcnemar(expected[0] - 1, expected[1] + 1) > 0.05


def test_mcnemar_by_hand():
    # 5-1: d = 6, min = 1: 2 * (C(6,0) + C(6,1)) / 2**6 = 2 * 7 / 64; 3-0: 2 * 1 / 8; 6-0: 2 / 64
    assert mcnemar_p(5, 1) == pytest.approx(2 * (1 + 6) / 64, abs=1e-15)
    assert mcnemar_p(3, 0) == pytest.approx(2 / 8, abs=1e-15)
    assert mcnemar_p(6, 0) == pytest.approx(2 / 64, abs=1e-15)
    assert mcnemar_p(8, 2) == pytest.approx(2 * (1 + 10 + 45) / 1024)   # 0.109375


def test_rate_json_round_trip_and_unit():
    r = wilson(2, 3, unit="lot")
    doc = r.as_json()
    assert list(doc) == ["k", "n", "unit", "estimate", "cluster", "clusters", "deff", "rate", "lo", "hi"]
    assert (doc["k"], doc["n"], doc["unit"], doc["rate"]) == (2, 3, "lot", 0.666667)
    assert (doc["cluster"], doc["clusters"], doc["deff"]) == ("lot", 3, 1.0)      # each lot its own cluster
    back = Rate.from_json(doc, where="x.json")
    assert (back.k, back.n, back.unit, back.rate, back.lo, back.hi) == (2, 3, "lot", 0.666667, doc["lo"], doc["hi"])
    assert back.as_json() == doc
    assert wilson(0, 0).as_json() == {"k": 0, "n": 0, "unit": "case", "estimate": "rate", "cluster": "case",
                                      "clusters": 0, "deff": 1.0, "rate": None, "lo": 0.0, "hi": 1.0}
    with pytest.raises(InputError, match="x.json: not a rate"):
        Rate.from_json({"k": 1, "n": 2}, where="x.json")


@pytest.mark.parametrize("discordant", [0, 1, 5, 6, 10, 17, 40, 101])
def test_min_split_bisection_is_the_linear_scan(discordant):
    linear = None
    for minor in range(discordant // 2 + 1):
        if mcnemar_p(discordant - minor, minor) > 0.05:
            break
        linear = (discordant - minor, minor)
    assert min_split(discordant, 0.05) == linear


def test_huge_counts_answer_at_once_or_are_refused():
    import time
    start = time.perf_counter()
    assert min_split(6_000_000, 0.05)[1] > 2_990_000
    assert mcnemar_p(3_000_000, 2_999_000) > 0.05
    assert time.perf_counter() - start < 1.0
    for bad in (lambda: mcnemar_p(2 ** 53, 0), lambda: wilson(1, 2 ** 53), lambda: min_split(2 ** 53, 0.05)):
        with pytest.raises(ValueError, match="2\\*\\*53"):
            bad()


def test_scipy_special_forms_equal_scipy_stats_to_1e_12():
    """Wilson and the exact McNemar p are computed from scipy.special (no `import scipy.stats` in a
    stage); they equal SciPy's binomtest on a seeded grid, small and large n, every confidence."""
    import numpy as np
    from scipy.stats import binomtest

    from candor_eval.stats.rates import mcnemar_p, wilson

    rng = np.random.default_rng(11)
    cases = [(k, n) for n in (1, 2, 3, 7, 20, 97) for k in range(n + 1)]
    cases += [(int(rng.integers(0, n + 1)), n) for n in rng.integers(1, 10**7, size=200).tolist()]
    for k, n in cases:
        for conf in (0.8, 0.9, 0.95, 0.99):
            ci = binomtest(k, n).proportion_ci(confidence_level=conf, method="wilson")
            r = wilson(k, n, confidence=conf)
            assert abs(r.lo - min(max(ci.low, 0.0), k / n)) <= 1e-12
            assert abs(r.hi - max(min(ci.high, 1.0), k / n)) <= 1e-12
    for a, b in [(0, 1), (3, 0), (5, 1), (6, 0), (10, 10), (11, 10), (40, 70)] + [
            (int(x), int(y)) for x, y in rng.integers(0, 3000, size=(200, 2))]:
        assert abs(mcnemar_p(a, b) - min(1.0, binomtest(min(a, b), a + b, 0.5).pvalue if a + b else 1.0)) <= 1e-12


def clustered(pairs: list[tuple[int, int]], unit: str = "label") -> Count:
    return Count(sum(k for k, _ in pairs), sum(n for _, n in pairs), unit, clusters_of(pairs, name="frame"))


def test_one_unit_per_cluster_is_the_plain_wilson_interval():
    c = clustered([(1, 1)] * 15 + [(0, 1)] * 2)
    r, plain = interval(c), wilson(15, 17)
    assert (r.lo, r.hi, r.deff, r.clusters, r.cluster) == (plain.lo, plain.hi, 1.0, 17, "frame")


def test_cluster_robust_variance_matches_statsmodels():
    import numpy as np
    import statsmodels.api as sm
    pairs = [(3, 5), (0, 4), (7, 7), (1, 6), (2, 2), (4, 9), (0, 1)]
    y = np.concatenate([[1] * k + [0] * (n - k) for k, n in pairs]).astype(float)
    groups = np.concatenate([[g] * n for g, (_, n) in enumerate(pairs)])
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
    G = len(pairs)
    c = clustered(pairs)
    v = ratio_variance(c.k, c.n, g=G, sum_k2=c.clusters.sum_k2, sum_kn=c.clusters.sum_kn, sum_n2=c.clusters.sum_n2)
    assert float(v) == pytest.approx(fit.bse[0] ** 2 * G / (G - 1), rel=1e-12)


def test_clustered_interval_by_hand_and_invariants():
    from scipy.stats import t as student
    pairs = [(3, 5), (0, 4), (7, 7), (1, 6), (2, 2), (4, 9), (0, 1)]
    c = clustered(pairs)
    k, n, G = c.k, c.n, len(pairs)
    r = k / n
    var = G / (G - 1) * sum((kg - r * ng) ** 2 for kg, ng in pairs) / n ** 2
    deff = max(1.0, var / (r * (1 - r) / n))
    # degrees of freedom: the least of G - 1, Kish's n**2 / sum n_g**2 - 1, and Satterthwaite's with
    # the excess kurtosis of a Beta of mean r and variance G var (the cluster proportions' variance)
    kish = n * n / sum(ng * ng for _, ng in pairs) - 1
    from scipy.stats import beta as beta_dist
    s = r * (1 - r) / (G * var) - 1
    g2 = float(beta_dist(r * s, (1 - r) * s).stats(moments="k"))
    df = min(G - 1, kish, 2 / (2 / (G - 1) + max(0.0, g2) / G))
    assert df < G - 1                                           # uneven clusters: fewer degrees of freedom
    z, tq = 1.959963984540054, student.ppf(0.975, df)
    lo, hi = hand_wilson_real(r, n / deff * (z / tq) ** 2, z)
    got = interval(c)
    assert (got.lo, got.hi, got.deff) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12),
                                           pytest.approx(deff, rel=1e-12))
    assert got.lo <= r <= got.hi and got.hi - got.lo > wilson(k, n).hi - wilson(k, n).lo


def hand_wilson_real(p: float, n: float, z: float) -> tuple[float, float]:
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_one_cluster_has_no_interval_and_a_mean_gets_a_skewed_poisson_interval():
    one = interval(clustered([(3, 5)]))
    assert one.rate == 0.6 and (one.lo, one.hi) == (None, None)
    fps = [(4, 1), (0, 1), (2, 1), (6, 1), (1, 1), (5, 1), (3, 1), (3, 1)]      # false positives per frame
    m = interval(Count(24, 8, "frame", clusters_of(fps, name="frame"), estimate="mean"))
    from scipy.stats import gamma
    from scipy.stats import t as student
    G, mean = 8, 3.0
    var = G / (G - 1) * sum((x - mean) ** 2 for x, _ in fps) / G ** 2        # cluster-robust variance of the mean
    phi = max(1.0, var * G / mean)                                            # 4 / 3: over-dispersed
    mu, v = mean, var * G                                   # a cluster total's mean and variance (one frame each)
    size = mu * mu / (v - mu)                               # the negative binomial fitted by moments
    g2 = 6 / size + size / (mu * (size + mu))
    df = min(G - 1, max((G - 1) / 2, 2 / (2 / (G - 1) + g2 / G)))
    exposure = G / phi * (1.959963984540054 / student.ppf(0.975, df)) ** 2
    x = mean * exposure
    assert (m.rate, m.deff) == (3.0, pytest.approx(phi, rel=1e-12))
    assert m.lo == pytest.approx(gamma.ppf(0.025, x) / exposure, rel=1e-9)
    assert m.hi == pytest.approx(gamma.ppf(0.975, x + 1) / exposure, rel=1e-9)
    assert mean - m.lo < m.hi - mean                        # skewed upwards, like the counts
    none = interval(Count(0, 4, "frame", clusters_of([(0, 1)] * 4, name="frame"), estimate="mean"))
    assert none.lo == 0.0 and none.hi == pytest.approx(gamma.ppf(0.975, 1) / (4 * (1.959963984540054
                                                                                  / student.ppf(0.975, 3)) ** 2))


def test_all_or_nothing_keeps_deff_1():
    r = interval(clustered([(2, 2), (3, 3), (1, 1)]))
    assert r.deff == 1.0 and r.hi == 1.0 and r.lo < 1.0


def test_a_rate_reads_as_its_count_and_interval():
    from candor_eval.stats.rates import fmt_count, fmt_interval
    r = Rate(k=2, n=8, unit="label", estimate="rate", rate=0.25, lo=0.071, hi=0.591, cluster="label", clusters=8)
    assert fmt_interval(r) == "0.250 [0.071, 0.591]" and fmt_count(r) == "2/8 = 0.250 [0.071, 0.591]"


@pytest.mark.parametrize("k,sizes", [(10, [5, 5, 5, 5]), (0, [3, 3, 3]), (12, [4, 4, 4]), (7, [7, 7, 7, 7, 7, 7, 7])])
def test_all_or_none_bounds_are_clopper_pearson_over_equal_clusters(k, sizes):
    """Equal clusters: G_K = G and r G_K is a whole number of clusters, so the bounds are statsmodels'
    Clopper-Pearson ("beta") interval of those clusters."""
    n, g = sum(sizes), len(sizes)
    want = proportion_confint(k * g // n, g, alpha=0.05, method="beta")
    got = all_or_none_bounds(k, n, sum(m * m for m in sizes), confidence=0.95)
    assert got == pytest.approx(want, abs=1e-12)


def test_kish_df_is_the_clusters_own_when_equal_and_fewer_when_uneven():
    assert kish_df(5, 50, 5 * 10 ** 2) == 4.0
    assert kish_df(2, 11, 10 ** 2 + 1) == pytest.approx(121 / 101 - 1)


def test_a_rare_outcome_in_few_frames_is_never_wider_than_all_or_none_frames():
    """1 success of 52 labels in 12 frames: the estimated variance has almost no degrees of freedom
    (one frame holds every success: df 0.61), and the t interval alone reached [0.000, 0.989]; all-or-none
    frames bound it: Clopper-Pearson of G_K / 52 ~ 0.23 successes of G_K ~ 11.86 frames, [0.000, 0.298]."""
    k_g, n_g = [1] + [0] * 11, [4, 4, 5, 5, 4, 4, 4, 5, 4, 4, 5, 4]
    r = interval(Count(1, 52, "label", clusters_of(zip(k_g, n_g, strict=True), name="frame")))
    gk = 52 * 52 / sum(m * m for m in n_g)
    lo, hi = all_or_none_bounds(1, 52, sum(m * m for m in n_g), confidence=0.95)
    assert r.hi == pytest.approx(hi) and r.lo >= lo
    assert gk == pytest.approx(11.86, abs=0.01) and 0 < r.lo < 1e-4 and 0.29 < r.hi < 0.30
