"""candor_eval/stats/signflip.py: the exact sign-flip test against brute-force enumeration and McNemar."""
from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from candor_eval.stats.rates import mcnemar_p
from candor_eval.stats.signflip import EXACT_LIMIT, signflip_p


def brute(d: list[int]) -> float:
    """Every sign pattern, counted: the definition itself."""
    observed = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= observed
               for signs in itertools.product((1, -1), repeat=len(d)))
    return min(1.0, hits / 2 ** len(d))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-6, 6), min_size=0, max_size=12))
def test_matches_enumeration(d):
    assert signflip_p(d) == pytest.approx(brute(d), abs=1e-12)


@pytest.mark.parametrize("d,p", [
    ([1] * 6, 2 / 64), ([1] * 5, 2 / 32), ([3, 0, 1, 1], 0.25), ([2, -2], 1.0), ([], 1.0), ([0, 0], 1.0),
    ([5], 1.0), ([4, 4, 4, 4, 4, 4], 2 / 64),
])
def test_by_hand(d, p):
    assert signflip_p(d) == pytest.approx(p, abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 80), st.integers(0, 80), st.integers(0, 20))
def test_one_unit_per_cluster_is_mcnemar(pos, neg, zeros):
    assert signflip_p([1] * pos + [-1] * neg + [0] * zeros) == mcnemar_p(pos, neg)


def test_normal_limit_above_the_stated_size_is_close_to_exact(monkeypatch):
    exact = [2] * (EXACT_LIMIT // 4) + [-2] * (EXACT_LIMIT // 4 - 30)          # sum |d| = EXACT_LIMIT - 60
    assert sum(map(abs, exact)) <= EXACT_LIMIT
    limit = exact + [2] * 40                                                   # just above: the normal limit
    assert sum(map(abs, limit)) > EXACT_LIMIT
    z = abs(sum(limit)) / math.sqrt(sum(x * x for x in limit))
    assert signflip_p(limit) == pytest.approx(math.erfc(z / math.sqrt(2)), abs=1e-15)
    # at that size the normal limit is within 0.01 of the exact enumeration of the same differences
    import candor_eval.stats.signflip as sf
    monkeypatch.setattr(sf, "EXACT_LIMIT", 10 * EXACT_LIMIT)
    assert signflip_p(limit) == pytest.approx(math.erfc(z / math.sqrt(2)), abs=0.01)


def test_rejects_non_integers():
    with pytest.raises(ValueError):
        signflip_p([1.5])
    with pytest.raises(ValueError):
        signflip_p([True])
