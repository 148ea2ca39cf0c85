"""The distribution-free upper bound of a quantile: hand cases, SciPy's binomial, and its coverage."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from candor_eval.stats.quantile import quantile_bound, upper_rank


def test_the_point_is_an_observed_value_by_nearest_rank():
    assert quantile_bound([10.0, 20.0]).point == 20.0                        # ceil(0.95 * 2) = 2
    assert quantile_bound([float(i) for i in range(1, 21)]).point == 19.0     # ceil(19.0) = 19
    assert quantile_bound([float(i) for i in range(100, 0, -1)]).point == 95.0  # order of the input is no matter


def test_the_p95_bound_needs_59_draws():
    assert 1 - 0.95 ** 58 < 0.95 <= 1 - 0.95 ** 59                          # the largest of n bounds it from n = 59
    assert upper_rank(58) is None and upper_rank(59) == 59
    assert quantile_bound([float(i) for i in range(58)]).upper is None
    assert upper_rank(10, q=0.5) == 9                                          # the median of 10 at 95%


@pytest.mark.parametrize("n", [59, 60, 100, 200, 1000])
def test_the_rank_is_the_smallest_with_enough_confidence(n):
    k = upper_rank(n)
    assert binom.cdf(k - 1, n, 0.95) >= 0.95 > binom.cdf(k - 2, n, 0.95)


@pytest.mark.parametrize("n", [60, 80, 200])
def test_the_bound_covers_the_true_p95_at_least_95_percent_of_the_time(n):
    rng = np.random.default_rng(7)
    true_p95 = float(np.exp(1.6448536269514722))                             # lognormal(0, 1)
    covered = [quantile_bound(rng.lognormal(0.0, 1.0, n).tolist()).upper >= true_p95 for _ in range(3000)]
    assert np.mean(covered) >= 0.94
