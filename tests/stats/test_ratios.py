"""candor_eval/stats/ratios.py: the paired test of a ratio difference (precision, F1) against a hand
enumeration, its interval against its test, and the precision null it was built for."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from candor_eval.stats.ratios import ratio_difference, ratio_shift_terms
from candor_eval.stats.signflip import signflip_p

cluster = st.tuples(st.integers(0, 6), st.integers(0, 6)).map(lambda t: (min(t), max(t)))   # (x <= y)


def brute_p(a, b) -> float:
    """The definition: centred contributions at the pooled ratio, every sign pattern counted."""
    xa, ya = sum(x for x, _ in a), sum(y for _, y in a)
    xb, yb = sum(x for x, _ in b), sum(y for _, y in b)
    pooled = (xa + xb) / (ya + yb)
    z = [(x2 - pooled * y2) / yb - (x1 - pooled * y1) / ya for (x1, y1), (x2, y2) in zip(a, b)]
    obs = abs(sum(z))
    hits = sum(abs(sum(s * v for s, v in zip(signs, z))) >= obs - 1e-12
               for signs in itertools.product((1, -1), repeat=len(z)))
    return hits / 2 ** len(z)


def test_by_hand():
    """Two frames, A 1 of 2 on each, B 2 of 2 and 1 of 2: P_A = 1/2, P_B = 3/4, pooled 5/8;
    z = (2 - 5/4)/4 - (1 - 5/4)/4 = 1/4, and (1 - 5/4)/4 - (1 - 5/4)/4 = 0: p = 1 (flipping the
    one nonzero term gives the same |sum|)."""
    r = ratio_difference([(1, 2), (1, 2)], [(2, 2), (1, 2)], level=0.05)
    assert (r.diff, r.p) == (0.25, 1.0) and (r.lo, r.hi) == (-1.0, 1.0)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 9).flatmap(lambda g: st.tuples(st.lists(cluster, min_size=g, max_size=g),
                                                     st.lists(cluster, min_size=g, max_size=g))))
def test_matches_enumeration_and_the_interval_agrees_with_the_test(ab):
    a, b = ab
    r = ratio_difference(a, b, level=0.05)
    if not sum(y for _, y in a) or not sum(y for _, y in b):
        assert r.diff is None and r.p is None
        return
    assert r.p == pytest.approx(brute_p(a, b), abs=1e-12)
    assert r.lo is not None and r.hi is not None and r.lo <= r.diff + 1e-9 and r.diff - 1e-9 <= r.hi
    assert (r.lo > 0 or r.hi < 0) == (r.p <= 0.05)                 # excludes 0 exactly when it rejects


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(cluster, cluster), min_size=1, max_size=30))
def test_the_shift_terms_sum_to_the_difference_and_one(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    if not sum(y for _, y in a) or not sum(y for _, y in b):
        return
    ta, tb = ratio_shift_terms(a, b)
    diff = sum(x for x, _ in b) / sum(y for _, y in b) - sum(x for x, _ in a) / sum(y for _, y in a)
    assert sum(ta) == pytest.approx(diff, abs=1e-12) and sum(tb) == pytest.approx(1.0, abs=1e-12)
    assert min(tb) >= -1e-15


@pytest.mark.parametrize("g", [2, 3, 6, 10, 20])
def test_never_claims_more_than_g_clusters_can(g):
    """Frames that all moved alike: p is that of G clusters all favouring B (2**(1 - G) exactly up to 16
    clusters, 1 / (1 + FLIPS) above); the interval excludes 0 only when that reaches the level."""
    r = ratio_difference([(1, 2)] * g, [(2, 2)] * g, level=0.05)
    assert r.diff == 0.5
    assert r.p == (2.0 ** (1 - g) if g <= 16 else pytest.approx(1 / 20_001))
    assert (r.lo > 0) is (r.p <= 0.05)


def half_of_the_detections(rng: np.random.Generator, *, frames: int):
    """A reference with ~20 detections a frame at a frame-varying precision, and a candidate keeping a
    random half of them: the same precision in expectation, half the false positives."""
    a, b, fp_diff = [], [], []
    for _ in range(frames):
        n = int(rng.poisson(20))
        tp = rng.random(n) < rng.beta(4, 2)
        keep = rng.random(n) < 0.5
        a.append((int(tp.sum()), n))
        b.append((int((tp & keep).sum()), int(keep.sum())))
        fp_diff.append(int((~tp).sum()) - int((~tp & keep).sum()))      # A's FPs minus B's: positive favours B
    return a, b, fp_diff


@pytest.mark.parametrize("frames", [8, 12, 32])
def test_equal_precision_half_the_detections_is_not_called_higher(frames):
    """The precision criterion's pass rate (B higher, p <= alpha) stays <= alpha when the candidate keeps
    a random half of the reference's detections; the false-positive count test, which the gate read
    before, calls it better almost every time (this test would fail with it)."""
    rng = np.random.default_rng(39_000 + frames)
    sims, passes, fp_passes = 200, 0, 0
    for _ in range(sims):
        a, b, fp_diff = half_of_the_detections(rng, frames=frames)
        r = ratio_difference(a, b, level=0.05)
        passes += r.p is not None and r.p <= 0.05 and r.diff is not None and r.diff > 0
        fp_passes += signflip_p(fp_diff) <= 0.05 and sum(fp_diff) > 0
    assert passes / sims <= 0.05
    assert fp_passes / sims > 0.5
