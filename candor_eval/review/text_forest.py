"""A forest plot as text: each rate with its interval drawn as a bar of characters on a fixed axis, so it
renders wherever Markdown is read (a forge, a terminal, a review comment) and its bytes are the same on
every machine, unlike a PNG (:mod:`candor_eval.review.forest` draws the PNG locally).

A row is a label, an estimate and its interval ``[lo, hi]`` and a note (a verdict). On an axis
``[0, top]`` of ``width`` cells, cell ``i`` covers ``[i, i + 1) * top / width``; the interval's cells are
``-``, its ends ``[`` and ``]``, the estimate's cell ``o`` (it overwrites an end). Values outside the
axis are clamped to it. Pure, no I/O.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple


class TextRow(NamedTuple):
    """One bar: ``label``, the ``rate`` and its interval ``lo``..``hi``, a ``note`` written after it."""

    label: str
    rate: float
    lo: float
    hi: float
    note: str = ""


def cell(x: float, *, top: float, width: int) -> int:
    """The cell of value ``x`` on an axis ``[0, top]`` of ``width`` cells (clamped to the axis).

    >>> cell(0.0, top=1, width=40), cell(0.5, top=1, width=40), cell(1.0, top=1, width=40), cell(-3, top=1, width=40)
    (0, 20, 39, 0)
    """
    return min(width - 1, max(0, int(x / top * width))) if top > 0 else 0


def bar(row: TextRow, *, top: float, width: int) -> str:
    """The bar of one row (module docstring), ``width`` characters between two ``|``.

    >>> bar(TextRow("a", 0.5, 0.25, 0.75), top=1, width=20)
    '|     [----o----]    |'
    """
    cells = [" "] * width
    lo, hi = cell(row.lo, top=top, width=width), cell(row.hi, top=top, width=width)
    for i in range(lo, hi + 1):
        cells[i] = "-"
    cells[lo], cells[hi] = "[", "]"
    cells[cell(row.rate, top=top, width=width)] = "o"
    return "|" + "".join(cells) + "|"


def axis(*, top: float, width: int, ticks: int = 4) -> str:
    """The axis line: ``ticks + 1`` values from 0 to ``top`` at their cells (the last one right-aligned
    to the axis end), under the bars' ``|...|`` frame.

    >>> axis(top=1, width=20)
    ' 0    0.25 0.5  0.75 1'
    """
    line = [" "] * (width + 2)
    for t in range(ticks + 1):
        text = f"{top * t / ticks:.3g}"
        at = 1 + cell(top * t / ticks, top=top, width=width) if t < ticks else width + 2 - len(text)
        at = min(at, width + 2 - len(text))
        line[at:at + len(text)] = text
    return "".join(line).rstrip()


def nice_top(x: float) -> float:
    """The axis end for values up to ``x``: the least of 1, 2, 2.5, 5 or 10 times a power of ten that is at
    least ``x`` (1 when ``x`` is not positive), so that the ticks are round numbers.

    >>> nice_top(18.16), nice_top(0.3), nice_top(4), nice_top(0)
    (20.0, 0.5, 5.0, 1.0)
    """
    if x <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(x))
    return next(float(f"{m * power:.12g}") for m in (1, 2, 2.5, 5, 10) if m * power >= x)


def text_forest(rows: Sequence[TextRow], *, top: float = 1.0, width: int = 40) -> list[str]:
    """The lines of a text forest plot: one per row (label padded to the longest, the estimate, the bar,
    the note) and an axis line under them. ``top``: the axis end (1 for rates; the largest upper bound
    for a mean). Empty without rows."""
    if not rows:
        return []
    pad = max(len(r.label) for r in rows)
    lines = [f"{r.label:<{pad}}  {r.rate:>6.3f}  {bar(r, top=top, width=width)}  {r.note}".rstrip() for r in rows]
    return lines + [" " * (pad + 10) + axis(top=top, width=width)]
