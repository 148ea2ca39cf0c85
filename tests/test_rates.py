"""candor/stats/rates.py against independent values: statsmodels and hand computation."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from candor.stats.rates import (
    compare_paired, detection_units, fields_units, identification_units, mcnemar_p, min_k0,
    min_split, valuation_units, verdict, wilson,
)


def hand_mcnemar(b: int, c: int) -> float:
    """Seed 000's few lines, written out independently of SciPy."""
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
    # seed 000: 15/17 is compatible with "two thirds to nearly all"
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
    with pytest.raises(ValueError):
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
def test_mcnemar_seed_figures(b, c, expected):
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


@pytest.mark.parametrize("a_only,b_only,expected", [
    (0, 6, "B better"), (6, 0, "B worse"), (0, 3, "no detectable difference"),
    (1, 5, "no detectable difference"), (0, 0, "no detectable difference"), (2, 12, "B better"),
])
def test_verdict(a_only, b_only, expected):
    assert verdict(a_only, b_only, alpha=0.05) == expected


def test_compare_paired_counts_and_only_in():
    a = {("l1",): True, ("l2",): True, ("l3",): False, ("l4",): False, ("l5",): True}
    b = {("l1",): True, ("l2",): False, ("l3",): True, ("l4",): False, ("l6",): True}
    r = compare_paired(a, b, alpha=0.05, confidence=0.95)
    assert (r.n, r.both, r.a_only, r.b_only, r.neither) == (4, 1, 1, 1, 1)
    assert (r.a.k, r.b.k) == (2, 2)
    assert r.p == 1.0
    assert r.only_in_a == (("l5",),) and r.only_in_b == (("l6",),)
    assert r.min_k0 is None  # 4 cases can never reach 0.05
    assert "even a 4-0 split" in r.explanation


def test_compare_paired_explanation_names_what_could_be_seen():
    a = {(f"l{i}",): True for i in range(17)}
    b = dict(a) | {("l0",): False, ("l1",): False, ("l2",): False}
    r = compare_paired(a, b, alpha=0.05, confidence=0.95)
    assert (r.a_only, r.b_only, r.p) == (3, 0, 0.25)
    assert r.explanation == ("no detectable difference (could not have seen less than a "
                             "6-0 split: 6 of 17 cases, 35 percentage points)")


def test_identification_units_majority_per_lot():
    rows = []
    for cand, outs in (("a", ["hit", "hit", "wrong"]), ("b", ["hit", "abstain", "wrong"])):
        for run, o in enumerate(outs):
            rows.append(dict(lot="L1", tier="held", candidate=cand, run=run, outcome=o,
                             count_exact=True if run else None))
    u = identification_units(rows)
    assert u["identification.hit"] == {"a": {("L1",): True}, "b": {("L1",): False}}
    assert u["identification.held.hit"]["a"] == {("L1",): True}
    assert u["identification.not_wrong"] == {"a": {("L1",): True}, "b": {("L1",): True}}
    # count: runs 1 and 2 labelled, both exact -> majority of labelled runs
    assert u["identification.count_exact"]["a"] == {("L1",): True}


def test_identification_units_even_runs_tie_is_not_majority():
    rows = [dict(lot="L", tier="photo", candidate="a", run=i, outcome=o, count_exact=None)
            for i, o in enumerate(["hit", "wrong"])]
    u = identification_units(rows)
    assert u["identification.hit"]["a"][("L",)] is False
    assert "identification.count_exact" not in u


def test_fields_valuation_detection_units():
    f = fields_units([dict(case="c", candidate="a", field="x", hits=2, total=3),
                      dict(case="c", candidate="a", field="y", hits=1, total=2),
                      dict(case="c", candidate="a", field="z", hits=0, total=0)])
    assert f["fields.majority"]["a"] == {("c", "x"): True, ("c", "y"): False}
    v = valuation_units([dict(lot="L1", candidate="a", in_band=True),
                         dict(lot="L2", candidate="a", in_band=None),
                         dict(lot="L3", candidate="a", in_band=False)])
    assert v["valuation.in_band"]["a"] == {("L1",): True, ("L2",): False, ("L3",): False}
    d = detection_units(
        [dict(frame="f1", split="test", model="m", tp=2, fp=0, fn=0),
         dict(frame="f2", split="test", model="m", tp=1, fp=1, fn=0)],
        [dict(frame="f1", split="test", label="0", **{"class": "deer"}, model="m", found=True),
         dict(frame="f2", split="test", label="0", **{"class": "tree"}, model="m", found=False)])
    assert d["detection.test.frame_error_free"]["m"] == {("f1",): True, ("f2",): False}
    assert d["detection.test.label_found"]["m"] == {("f1", "0"): True, ("f2", "0"): False}
    assert d["detection.test.class.deer.label_found"]["m"] == {("f1", "0"): True}
