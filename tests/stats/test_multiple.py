"""candor_eval/stats/multiple.py: families of tests and Holm's adjustment, by hand."""
from __future__ import annotations

import pytest

from candor_eval.stats.multiple import family, holm


def test_holm_by_hand():
    # sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> running max 0.06)
    got = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert got == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02})


def test_holm_caps_at_one_and_keeps_a_single_test():
    assert holm({"x": 0.3, "y": 0.6}) == pytest.approx({"x": 0.6, "y": 0.6})
    assert holm({"only": 0.04}) == {"only": 0.04}
    assert holm({}) == {}


def test_a_significant_raw_p_can_lose_its_verdict():
    """Ten per-class tests with one raw p = 0.02: after Holm it is 0.2, not a 'B better'."""
    ps = {f"c{i}": 0.5 for i in range(9)} | {"deer": 0.02}
    assert holm(ps)["deer"] == pytest.approx(0.2)


@pytest.mark.parametrize("metric, fam", [
    ("detection.demo.test.class.deer.label_found", "detection.demo.test.class.*.label_found"),
    ("detection.birds.dev.class.berry_bush.label_found", "detection.birds.dev.class.*.label_found"),
    ("identification.held.hit", "identification.*.hit"),
    ("identification.hit", None), ("identification.not_wrong", None), ("identification.count_exact", None),
    ("detection.demo.test.label_found", None), ("fields.majority", None), ("valuation.in_band", None),
])
def test_families(metric, fam):
    assert family(metric) == fam


def test_holm_agrees_with_statsmodels_on_random_families(monkeypatch):
    """The peer implementation (statsmodels' multipletests, method holm) on 200 seeded families.
    Its holm branch ends with ``gc.collect()``, a full collection of the test process (0.1-0.3 s each
    in a pytest-xdist worker, most of this test's time); that housekeeping is skipped here, the
    computation is statsmodels' own."""
    import gc

    import numpy as np
    from statsmodels.stats.multitest import multipletests

    monkeypatch.setattr(gc, "collect", lambda *args: 0)

    rng = np.random.default_rng(5)
    for _ in range(200):
        ps = rng.uniform(0, 0.2, size=int(rng.integers(1, 30))).round(4)
        ours = holm({f"t{i}": float(p) for i, p in enumerate(ps)})
        theirs = multipletests(ps, method="holm")[1]
        assert [ours[f"t{i}"] for i in range(len(ps))] == pytest.approx(list(theirs), abs=1e-12)
