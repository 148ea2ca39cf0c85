"""The one precision of every stored rate, bound, box quality and price: ``DECIMALS`` = 6 decimals.

A metric is written rounded so that equal results give equal bytes on every machine (the last
bits of a float sum differ between CPUs and BLAS builds; six decimals are far above that noise
and far below any difference a reviewer reads).
"""
from __future__ import annotations

DECIMALS = 6


def rounded(x: float | None) -> float | None:
    """``x`` as a float rounded to :data:`DECIMALS` decimals; ``None`` stays ``None``.

    >>> rounded(2 / 3), rounded(1), rounded(None)
    (0.666667, 1.0, None)
    """
    return None if x is None else round(float(x), DECIMALS)


def ratio(num: int, den: int) -> float | None:
    """``num / den`` rounded to :data:`DECIMALS` decimals, or ``None`` when ``den`` is 0.

    >>> ratio(1, 3), ratio(0, 0)
    (0.333333, None)
    """
    return None if den == 0 else round(num / den, DECIMALS)
