"""The coverage grid of the clustered intervals (``bench/coverage.py``; docs/stats.md, "Rates").

The fast tests run a few of the grid's hardest cells at fewer draws; the slow test runs the whole
grid at the bench's own size and seed and asserts coverage of at least 0.93 in every cell.
"""
from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import coverage  # noqa: E402 - after the sys.path line above

HARD = ("frames/rate G=8 icc=0.2 shape=demo p=0.05",            # rare outcome, strong frame effect
        "frames/rate G=16 icc=0.2 shape=class p=0.05",           # uneven class-shaped frames
        "sessions/rate G=6 icc=0.2 p=0.05",                      # few sessions, strong session effect
        "frames/fp G=8 mu=1.0 size=0.5",                         # heavy over-dispersion, few frames
        "sessions/fp G=6 mu=3.0 size=0.5 session=1.0")          # strong session effect on the counts


def test_the_grid_is_deterministic_and_names_each_cell_once():
    labels = [f"{c.block} {c.label()}" for c, _ in coverage.grid()]
    assert len(labels) == len(set(labels)) == 72 + 36 + 27 + 36
    assert set(HARD) <= set(labels)
    assert coverage.run(reps=50, seed=7, cells=HARD[:1]) == coverage.run(reps=50, seed=7, cells=HARD[:1])


def test_the_hardest_cells_cover_and_the_previous_intervals_did_not():
    """Each hard cell covers at least 0.93 now; the interval used before fails at least 3 of them
    (so this test can fail: it fails on the old method)."""
    after = coverage.run(reps=1500, seed=20260, cells=HARD)
    before = coverage.run(reps=1500, seed=20260, cells=HARD, method="before")
    assert [r["cell"] for r in after] == [h.split(" ", 1)[1] for h in HARD]
    assert all(float(str(r["coverage"])) >= coverage.TARGET for r in after), after
    assert sum(float(str(r["coverage"])) < coverage.TARGET for r in before) >= 3, before


@pytest.mark.slow
def test_every_cell_of_the_grid_covers_at_least_093():
    rows = coverage.run(reps=4000, seed=20260)
    low = [r for r in rows if float(str(r["coverage"])) < coverage.TARGET]
    assert not low, low
