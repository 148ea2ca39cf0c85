"""The paired difference of two ratios over clusters (micro precision, micro F1): its sign-flip test
and the interval that agrees with it.

Pure: no I/O. A ratio ``R = sum_g x_g / sum_g y_g`` over clusters ``g`` (frames, or capture
sessions): micro precision has ``x = tp``, ``y = tp + fp`` (unit: detection), micro F1 has
``x = 2 tp``, ``y = 2 tp + fp + fn``. A and B are scored on the same clusters; B - A is tested
against a shift ``delta`` with the sign-flip test (:mod:`candor_eval.stats.signflip`) of each
cluster's contribution to the linearised difference, centred under the null:

    z_g(delta) = (x_g^B - (P0 + delta) y_g^B) / Y_B  -  (x_g^A - P0 y_g^A) / Y_A

with ``P0 = (X_A + X_B - delta Y_B) / (Y_A + Y_B)`` the pooled estimate of A's ratio under the
null ``R_B - R_A = delta``. Then ``sum_g z_g = R_B - R_A - delta`` exactly, whatever ``P0``, and
``z_g`` is linear in ``delta`` (``z_g = a_g - delta b_g``, ``b_g >= 0``, ``sum b_g = 1``), so the
test of every shift is one pass over precomputed pattern sums. (Centring each side at its *own*
ratio instead would give contributions that always sum to 0: no test at all.) ``p`` is the test
at ``delta = 0`` (precision, or F1, equal); the interval is every shift not rejected
(:func:`candor_eval.stats.signflip.shift_interval`), so it excludes 0 exactly when ``p <= level``.

Why this test: it is a paired test *of the ratio*, not of one of its terms. A candidate that keeps
a random half of the reference's detections has the same precision and half the false positives:
the sign-flip test of false positives per frame calls that "B better" about half the time; this
test rejects at most about alpha (``tests/stats/test_ratios.py``). It assumes, like every
sign-flip test, that each ``z_g`` is symmetric about 0 under the null (signflip.py).

>>> r = ratio_difference([(1, 2), (1, 2), (1, 2)], [(2, 2), (2, 2), (2, 2)], level=0.05)
>>> (r.diff, r.p, r.lo, r.hi)        # three frames alike: p = 2/8, no shift in reach is rejected
(0.5, 0.25, -1.0, 1.0)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from candor_eval.stats.signflip import shift_interval, shift_test


@dataclass(frozen=True)
class RatioDifference:
    """B's ratio minus A's (``diff``), the sign-flip ``p`` of no difference, and the ``1 - level``
    interval ``[lo, hi]`` of the shifts that test does not reject (``None``: undefined, no units)."""

    diff: float | None
    lo: float | None
    hi: float | None
    p: float | None


def ratio_shift_terms(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> tuple[list[float], list[float]]:
    """``(a_g, b_g)`` with ``z_g(delta) = a_g - delta b_g`` (module docstring), from per-cluster
    ``(x_g, y_g)`` of A and of B (same clusters, same order; both totals ``Y`` positive)."""
    xa, ya = sum(x for x, _ in a), sum(y for _, y in a)
    xb, yb = sum(x for x, _ in b), sum(y for _, y in b)
    pooled, share = (xa + xb) / (ya + yb), yb / (ya + yb)
    terms_a, terms_b = [], []
    for (x1, y1), (x2, y2) in zip(a, b):
        e = y2 / yb - y1 / ya
        terms_a.append(x2 / yb - x1 / ya - pooled * e)
        terms_b.append(y2 / yb - share * e)
    return terms_a, terms_b


def ratio_difference(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]], *, level: float) -> RatioDifference:
    """B minus A of the ratio ``sum x_g / sum y_g`` from per-cluster ``(x_g, y_g)`` of each side (same
    clusters, same order), its sign-flip p and its ``1 - level`` interval (module docstring). All
    ``None`` when either side has no units (``sum y = 0``)."""
    if len(a) != len(b):
        raise ValueError("A and B must have one (x, y) per cluster, in the same order")
    ya, yb = sum(y for _, y in a), sum(y for _, y in b)
    if not ya or not yb:
        return RatioDifference(None, None, None, None)
    diff = sum(x for x, _ in b) / yb - sum(x for x, _ in a) / ya
    test = shift_test(*ratio_shift_terms(a, b))
    lo, hi = shift_interval(test, level=level, bound=1.0)
    return RatioDifference(diff, lo, hi, test.p(0.0))
