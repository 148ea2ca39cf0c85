"""candor_eval/stats/signflip.py: the exact sign-flip test against brute-force enumeration and McNemar."""
from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from candor_eval.stats.rates import mcnemar_p
from candor_eval.stats.signflip import EXACT_COUNTS, EXACT_LIMIT, patterns_at_most, signflip_p


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


@pytest.mark.parametrize("frames,rate", [(8, 0.169), (10, 0.1137), (12, 0.0726), (16, 0.0352), (18, 0.1033),
                                         (48, 0.0714), (100, 0.0582), (200, 0.044)])
def test_a_skewed_zero_mean_difference_is_rejected_more_often_than_alpha(frames, rate):
    """The null of the test is symmetry, not a zero mean (module docstring): B gains 1 on 80% of
    frames and loses 4 on 20% (mean 0). The rejection rate at alpha 0.05 is computed exactly, over
    the binomial number of losing frames (the test depends only on it), and exceeds alpha well
    beyond a few frames."""
    from math import comb
    rejected = math.fsum(comb(frames, k) * 0.2 ** k * 0.8 ** (frames - k) for k in range(frames + 1)
                         if signflip_p([1] * (frames - k) + [-4] * k) <= 0.05)
    assert rejected == pytest.approx(rate, abs=5e-4)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(-4, 4), st.integers(1, 5)), min_size=1, max_size=12))
@example([(0, 1)] * 7 + [(-1, 1), (2, 2), (-2, 2), (0, 1), (1, 2)])   # sum 0 in floating point: ties by scale
def test_a_shift_test_at_zero_is_the_exact_test_and_its_interval_agrees(clusters):
    """Rate-scale terms ``d_g / n`` and ``n_g / n``: at shift 0 the p is :func:`signflip_p` of the
    integer differences, and the interval excludes 0 exactly when it is at most the level."""
    from candor_eval.stats.signflip import shift_interval, shift_test
    d = [min(x, m) if x >= 0 else max(x, -m) for x, m in clusters]
    n_g = [m for _, m in clusters]
    n = sum(n_g)
    t = shift_test([x / n for x in d], [m / n for m in n_g])
    assert t.p(0.0) == pytest.approx(signflip_p(d), abs=1e-12)
    assert t.p(sum(d) / n) == 1.0
    for level in (0.05, 0.2):
        lo, hi = shift_interval(t, level=level, bound=1.0)
        assert lo is not None and hi is not None and lo <= sum(d) / n <= hi
        assert (lo > 0 or hi < 0) == (signflip_p(d) <= level)


def test_flip_patterns_are_fixed_and_shared():
    """Above EXACT_CLUSTERS the patterns come from a fixed generator: the same on every call (cached)
    and from a fresh process (their first rows checked by value); the first row is the observed one."""
    from candor_eval.stats.signflip import EXACT_CLUSTERS, FLIPS, flip_patterns
    small = flip_patterns(3)
    assert small.shape == (8, 3) and small[0].tolist() == [1, 1, 1] and len({tuple(r) for r in small}) == 8
    assert small.tolist() == [[1 - 2 * (i >> j & 1) for j in range(3)] for i in range(8)]    # sign j: bit j of i
    import numpy as np
    for g in range(EXACT_CLUSTERS + 1):            # every enumerated set, to the byte: 1 - 2 * bit as int8
        bits = (np.arange(2 ** g, dtype=np.int64)[:, None] >> np.arange(g, dtype=np.int64)) & 1
        assert flip_patterns(g).tobytes() == (1 - 2 * bits).astype(np.int8).tobytes()
        assert flip_patterns(g).shape == (2 ** g, g) and flip_patterns(g).flags.c_contiguous
    big = flip_patterns(EXACT_CLUSTERS + 1)
    assert big.shape == (FLIPS + 1, EXACT_CLUSTERS + 1) and big[0].tolist() == [1] * (EXACT_CLUSTERS + 1)
    assert flip_patterns(EXACT_CLUSTERS + 1) is big and not big.flags.writeable
    assert big[1:4, :6].tolist() == FIRST_DRAWN

    from candor_eval.stats.signflip import _PATTERN_SEED
    for g in (EXACT_CLUSTERS + 1, 32):              # every row: the generator's draws (built by vstack)
        drawn = 1 - 2 * np.random.default_rng(_PATTERN_SEED + g).integers(0, 2, size=(FLIPS, g), dtype=np.int8)
        assert flip_patterns(g).dtype == np.int8
        assert flip_patterns(g).tobytes() == np.vstack([np.ones((1, g), dtype=np.int8), drawn]).tobytes()


def test_a_shift_test_sums_each_pattern_as_over_the_whole_float_matrix():
    """The shift test converts its patterns to floats a block at a time: each row's sums are those of
    the einsum over the whole float matrix, to the byte (sizes across the block edges, every scale)."""
    import numpy as np

    from candor_eval.stats import signflip as sf
    rng = np.random.default_rng(5)
    for g in [*range(1, 16), *range(sf.EXACT_CLUSTERS - 4, sf.EXACT_CLUSTERS + 8), 28, 32, 40]:
        for scale in (1e-3, 1.0, 300.0):
            a = rng.normal(size=g) * scale
            b = np.abs(rng.normal(size=g))
            test = sf.shift_test(a, b / b.sum())
            whole = sf.flip_patterns(g).astype(float)
            assert test.sa.tobytes() == np.einsum("ij,j->i", whole, a).tobytes()
            assert test.sb.tobytes() == np.einsum("ij,j->i", whole, b / b.sum()).tobytes()


FIRST_DRAWN = [[1, 1, -1, 1, -1, -1], [1, 1, -1, -1, 1, 1], [-1, -1, 1, 1, -1, -1]]   # PCG64: platform-stable


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=0, max_size=10), st.integers(-2, 95))
def test_patterns_at_most_counts_the_subsets(mags, lower):
    assert patterns_at_most(mags, lower) == sum(
        sum(m for m, keep in zip(mags, pick, strict=True) if keep) <= lower
        for pick in itertools.product((0, 1), repeat=len(mags)))


def test_the_pattern_counts_reach_2_to_the_53_without_carrying():
    assert patterns_at_most([1] * 53, 53) == 2 ** 53 and patterns_at_most([1] * 53, 26) == 2 ** 52
    assert patterns_at_most([1] * 53, 0) == 1 and patterns_at_most([7] * 53, 6) == 1
    assert patterns_at_most([2] * 40 + [3] * 13, 10**6) == 2 ** 53


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(-40, 40), min_size=1, max_size=EXACT_COUNTS + 6))
@example([2] * EXACT_COUNTS + [-1])
@example([3, -2] * 26 + [1, 1])
def test_the_integer_count_is_the_float_distribution_bit_for_bit(d):
    """Up to EXACT_COUNTS clusters that differ the counted p is the float distribution's p exactly
    (every cell is a count over a power of 2 below 2**53): not approximately, the same float."""
    from candor_eval.stats import signflip as sf

    mags = sorted(abs(x) for x in d if x)
    observed = abs(sum(d))
    if not mags or mags[-1] == 1 or observed == 0 or sum(mags) > EXACT_LIMIT:
        return
    lower = (sum(mags) - observed) // 2
    assert signflip_p(d) == min(1.0, sf._float_p(mags, lower))               # above EXACT_COUNTS: that path


def _random_shift_tests(seed: int, n: int):
    import numpy as np

    from candor_eval.stats.signflip import shift_test
    rng = np.random.default_rng(seed)
    for trial in range(n):
        g = int(rng.integers(2, 36))
        if trial % 3 == 0:                                   # a rate: integer differences over cluster sizes
            sizes = rng.integers(1, 30, size=g)
            a, b = rng.integers(-5, 6, size=g) / sizes.sum(), sizes / sizes.sum()
        elif trial % 3 == 1:                                 # a ratio's linearised terms, any scale
            a = rng.normal(size=g) * rng.choice([1e-3, 1.0, 100.0])
            b = np.abs(rng.normal(size=g))
            b = b / b.sum()
        else:                                                # ties: equal weights, few distinct terms
            a, b = rng.integers(-3, 4, size=g) / g, np.full(g, 1.0 / g)
        yield rng, shift_test(a, b)


def test_a_narrowed_test_is_the_test_at_every_shift_of_its_bracket():
    import numpy as np

    from candor_eval.stats.signflip import Narrowed
    other = np.random.default_rng(17)
    for rng, test in _random_shift_tests(11, 150):
        lo, hi = sorted(float(x) for x in test.estimate + rng.normal(size=2) * rng.choice([1e-6, 0.01, 0.5]))
        narrowed = Narrowed(test, hi, lo) if rng.random() < 0.5 else Narrowed(test, lo, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            roots = test.sa / test.sb                                   # where a pattern's |T| touches 0
        roots = roots[(roots >= lo) & (roots <= hi)]
        for delta in [lo, hi, 0.5 * (lo + hi), *(float(x) for x in rng.uniform(lo, hi, size=20)),
                      *(float(x) for x in roots[:: max(1, roots.size // 10)])]:
            assert narrowed.p(delta) == test.p(delta)
        assert narrowed.open.size < test.sa.size or hi - lo > 0.1       # a narrow bracket leaves fewer open
        tiny = sorted(test.estimate + float(x) for x in other.normal(size=2) * 1e-13)   # the tolerance covers it
        hugging = Narrowed(test, *tiny)
        for delta in [*tiny, *(float(x) for x in other.uniform(*tiny, size=5))]:
            assert hugging.p(delta) == test.p(delta)


def test_narrowing_the_bisection_changes_no_interval(monkeypatch):
    from candor_eval.stats import signflip as sf
    cases = list(_random_shift_tests(12, 120))
    kw = [dict(level=level, bound=bound) for level in (0.05, 0.2) for bound in (None, 1.0)]
    narrowed = [sf.shift_interval(t, **k) for _, t in cases for k in kw]
    monkeypatch.setattr(sf, "NARROW_AFTER", 1000)                     # never: every step counts every pattern
    plain = [sf._shift_interval(t, p0=None, **k) for _, t in cases for k in kw]      # computed again, not recalled
    assert repr(narrowed) == repr(plain)


def test_a_test_and_its_intervals_are_computed_once_per_input_to_the_bit():
    from candor_eval.stats import signflip as sf
    a, b = [0.25, -0.5, 0.125, 0.0], [0.25, 0.25, 0.25, 0.25]
    test = sf.shift_test(a, b)
    assert sf.shift_test(list(a), tuple(b)) is test and not test.sa.flags.writeable
    assert sf.shift_test([0.25, -0.5, 0.125, -0.0], b) is not test           # -0.0 is another input
    lo_hi = sf.shift_interval(test, level=0.2, bound=1.0)
    assert sf.shift_interval(test, level=0.2, bound=1.0) is lo_hi           # recalled
    assert sf._shift_interval(test, level=0.2, bound=1.0, p0=None) == lo_hi
    other = sf.shift_interval(test, level=0.5, bound=1.0)                   # another level: computed
    assert other == sf._shift_interval(test, level=0.5, bound=1.0, p0=None) and other != lo_hi
