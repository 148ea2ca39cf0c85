"""candor_eval/stats/power.py: exact power of the paired sign test against enumeration and simulation."""
from __future__ import annotations

import math
import random

import pytest

from candor_eval.stats.power import detectable, effective_pairs, pairs_needed, sign_test_power
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


def test_effective_pairs():
    assert effective_pairs(100, discordance=0.2, diff=0.0, diff_hi=None, clusters=10, confidence=0.95) == 100
    # a paired difference whose clustered interval is twice as wide as over independent pairs: a quarter
    from scipy.special import stdtrit
    se = 2 * math.sqrt(0.2 / 100)
    hi = float(stdtrit(9, 0.975)) * se
    assert effective_pairs(100, discordance=0.2, diff=0.0, diff_hi=hi, clusters=10, confidence=0.95) == 25


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_critical_counts_are_the_least_split_reaching_alpha(alpha):
    from candor_eval.stats.power import _criticals
    from candor_eval.stats.rates import min_split
    ds, cs = _criticals(400, alpha)
    expected = {d: s[0] for d in range(401) if (s := min_split(d, alpha)) is not None}
    assert dict(zip(ds.tolist(), cs.tolist())) == expected
