"""candor_eval/stats/power.py: exact power of the paired sign test against enumeration and simulation."""
from __future__ import annotations

import math
import random

import pytest

from candor_eval.stats.power import detectable, pairs_needed, sign_test_power
from candor_eval.stats.rates import mcnemar_p


def enumerated_power(n: int, d: float, delta: float, alpha: float) -> float:
    """Every (B-only, A-only, concordant) table of n pairs, with its multinomial probability."""
    pb, pa = (d + delta) / 2, (d - delta) / 2
    total = 0.0
    for b in range(n + 1):
        for a in range(n - b + 1):
            if b > a and mcnemar_p(a, b) <= alpha:
                total += math.comb(n, b) * math.comb(n - b, a) * pb ** b * pa ** a * (1 - d) ** (n - a - b)
    return total


@pytest.mark.parametrize("n,d,delta", [(17, 0.3, 0.2), (30, 0.5, 0.1), (12, 0.9, 0.9), (40, 0.2, 0.0)])
def test_power_matches_enumeration(n, d, delta):
    assert sign_test_power(n, d, delta, alpha=0.05) == pytest.approx(enumerated_power(n, d, delta, 0.05), abs=1e-12)


def test_power_matches_a_simulation():
    rng = random.Random(7)
    n, d, delta, runs = 60, 0.3, 0.15, 4000
    hits = 0
    for _ in range(runs):
        a = b = 0
        for _ in range(n):
            u = rng.random()
            b += u < (d + delta) / 2
            a += (d + delta) / 2 <= u < d
        hits += b > a and mcnemar_p(a, b) <= 0.05
    assert hits / runs == pytest.approx(sign_test_power(n, d, delta, alpha=0.05), abs=0.03)


def test_null_power_is_at_most_half_alpha():
    for n in (6, 17, 50, 200):
        assert sign_test_power(n, 0.4, 0.0, alpha=0.05) <= 0.025


def test_detectable_and_pairs_needed_agree():
    x = detectable(200, 0.3, alpha=0.05)
    assert x is not None and sign_test_power(200, 0.3, x, alpha=0.05) >= 0.8
    assert sign_test_power(200, 0.3, x - 0.001, alpha=0.05) < 0.8
    assert detectable(5, 0.5, alpha=0.05) is None                       # 5 pairs can never reach 0.05
    n = pairs_needed(0.3, 0.15, alpha=0.05)
    assert sign_test_power(n, 0.3, 0.15, alpha=0.05) >= 0.8 > sign_test_power(n - 1, 0.3, 0.15, alpha=0.05)


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_critical_counts_are_the_least_split_reaching_alpha(alpha):
    from candor_eval.stats.power import _criticals
    from candor_eval.stats.rates import min_split
    ds, cs = _criticals(400, alpha)
    expected = {d: s[0] for d in range(401) if (s := min_split(d, alpha)) is not None}
    assert dict(zip(ds.tolist(), cs.tolist())) == expected


# --- the power of the test that runs (clustered_detectable) ---

def independent_power(discordant: list[int], diffs: list[int], n: int, improvement: float, *, alpha: float,
                      reps: int, seed: int) -> float:
    """The power of the exact sign-flip test, simulated unit by unit with its own seed and loop (not
    the library's vectorised draws): each cluster's discordant units move together with probability
    rho (the library's moment estimate), else each favours B on its own."""
    import random

    from candor_eval.stats.power import _rho
    from candor_eval.stats.signflip import signflip_p
    rng = random.Random(seed)
    rho, q = _rho(discordant, diffs), 0.5 + improvement * n / (2 * sum(discordant))
    hits = 0
    for _ in range(reps):
        d = []
        for m in discordant:
            if rng.random() < rho:
                d.append(m if rng.random() < q else -m)
            else:
                d.append(sum(1 if rng.random() < q else -1 for _ in range(m)))
        hits += sum(d) > 0 and signflip_p(d) <= alpha
    return hits / reps


@pytest.mark.parametrize("discordant,diffs,n,alpha", [
    ([2, 3, 1, 2, 1, 1, 2, 1], [2, 1, 1, 0, 1, 1, 0, -1], 40, 0.05),          # 8 cases, fields-like
    ([1] * 12, [1, -1] * 6, 30, 0.05),                                         # 12 lots: exact McNemar
    ([4, 0, 6, 2, 3, 5, 1, 0, 2, 3], [2, 0, 4, 0, -1, 3, 1, 0, 2, 1], 190, 0.05),   # 10 frames of labels
])
def test_the_printed_power_is_the_simulated_power_of_the_test_that_runs(discordant, diffs, n, alpha):
    """At the improvement it prints, the power of the exact sign-flip test (an independent
    simulation) is within 0.05 of 80%; a point lower is under it."""
    from candor_eval.stats.power import clustered_detectable
    got = clustered_detectable(discordant, diffs, n, alpha=alpha)
    assert got.reason is None and got.detectable is not None
    sim = independent_power(discordant, diffs, n, got.detectable, alpha=alpha, reps=2000, seed=11)
    assert abs(sim - 0.8) <= 0.05, (got, sim)
    assert clustered_detectable(discordant, diffs, n, alpha=alpha) == got                 # seeded: deterministic


def test_six_cases_at_35_pp_are_not_80_percent():
    """The audit's case: 6 cases, 22 fields. The sign-flip test over 6 clusters rejects only when all
    six move one way, so the least improvement at 80% power is far above 35 pp, or none."""
    from candor_eval.stats.power import clustered_detectable
    got = clustered_detectable([4, 4, 3, 4, 4, 3], [2, 1, 1, 0, 1, 1], 22, alpha=0.05)
    assert got.detectable is None or got.detectable > 0.35
    assert independent_power([4, 4, 3, 4, 4, 3], [2, 1, 1, 0, 1, 1], 22, 0.35, alpha=0.05, reps=1000, seed=3) < 0.8


def test_too_few_clusters_say_so_and_give_no_power_figure():
    """6 clusters at alpha 0.01: 2**-5 = 0.031 > 0.01, so nothing can reject: a reason, no figure."""
    from candor_eval.stats.power import clustered_detectable, power_json
    got = clustered_detectable([3, 2, 4, 1, 2, 2], [1, 0, 2, 1, 0, 2], 60, alpha=0.01)
    assert got.detectable is None and got.best == 0.0
    assert got.reason == ("cannot reject at alpha 0.01 with 6 clusters that differ: even all of them moving one way "
                          "gives p = 0.0312")
    assert power_json(got)["detectable"] is None
    assert clustered_detectable([0, 0], [0, 0], 10, alpha=0.05).reason == "no discordant unit: nothing to plan with"


def test_cluster_discordance_counts_each_clusters_discordant_units():
    from candor_eval.stats.power import cluster_discordance
    a = {("f1", "0"): 1, ("f1", "1"): 1, ("f2", "0"): 0, ("f3", "0"): 1, ("x", "0"): 1}
    b = {("f1", "0"): 0, ("f1", "1"): 1, ("f2", "0"): 1, ("f3", "0"): 1}
    of = {c: c[0] for c in a}
    assert cluster_discordance(a, b, cluster_of=of) == ([1, 1, 0], [-1, 1, 0], 4)
    assert cluster_discordance(a, b, cluster_of=None) == ([1, 0, 1, 0], [-1, 0, 1, 0], 4)


def test_a_simulated_power_tests_each_distinct_draw_once_with_the_same_result():
    """The simulation asks the sign-flip test once per distinct multiset of per-cluster differences; the
    power is the share the plain loop over every draw gives, to the last bit."""
    import numpy as np

    from candor_eval.stats.power import _Bench, _sorted_signflip_p
    from candor_eval.stats.signflip import signflip_p

    bench = _Bench([3, 1, 2, 4, 1, 2, 5, 1], 0.3, reps=400, seed=5)
    for q in (0.5, 0.6, 0.75, 0.9):
        b_units = ((bench.each < q) & bench.mask).sum(axis=2)
        d = np.where(bench.together, np.where(bench.one < q, bench.m, -bench.m), 2 * b_units - bench.m)
        every = sum(1 for row in d.tolist() if sum(row) > 0 and signflip_p(row) <= 0.05) / len(d)
        _sorted_signflip_p.cache_clear()
        assert bench.power(q, 0.05) == every
        assert 0 < _sorted_signflip_p.cache_info().currsize < len({tuple(sorted(r)) for r in d.tolist()}) + 1 < 400
    assert _Bench([0, 0], 0.0, reps=10, seed=1).power(0.7, 0.05) == 0.0          # no discordant cluster: no draw


@pytest.mark.parametrize("target", [0.0, 0.1, 0.35, 0.8, 0.95, 1.0])
def test_reaches_decides_as_the_full_power_would(target):
    """The bisection's question, answered from as few draws as settle it, is the full share's answer."""
    from candor_eval.stats.power import _Bench

    bench = _Bench([3, 1, 2, 4, 1, 2, 5, 1], 0.3, reps=300, seed=9)
    for q in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        assert bench.reaches(q, 0.05, target) == (bench.power(q, 0.05) >= target), (q, target)
    assert _Bench([0, 0], 0.0, reps=10, seed=1).reaches(0.7, 0.05, 0.0)          # 0 >= 0: reached


def test_unique_rows_is_numpy_s_unique_along_rows():
    import numpy as np

    from candor_eval.stats.power import _unique_rows
    rng = np.random.default_rng(7)
    for trial in range(200):
        rows, width, top = int(rng.integers(0, 300)), int(rng.integers(1, 12)), int(rng.integers(1, 4))
        a = np.sort(rng.integers(-top, top + 1, size=(rows, width)), axis=1)
        if trial % 4 == 0:
            a = a[:, :1].repeat(width, axis=1)                 # few distinct rows, long runs
        want, want_counts = np.unique(a, axis=0, return_counts=True)
        got, counts = _unique_rows(a)
        assert np.array_equal(got, want) and got.shape == want.shape, trial
        assert counts.tolist() == want_counts.tolist(), trial
