"""The forest plot: each paired comparison's rates with their intervals, reference then candidates."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from candor.common.png import PNG_DPI, png_bytes, pyplot


def forest_rows(stats: Mapping[str, Any]) -> list[tuple[str, str, float, float, float]]:
    """``(metric, side, rate, lo, hi)`` for the forest plot: reference once, then each candidate."""
    rows = []
    for metric, by_cand in stats["paired"].items():
        ref_done = False
        for cand, c in by_cand.items():
            if not ref_done and c["reference_rate"] is not None:
                rows.append((metric, c["reference"], c["reference_rate"], c["reference_lo"], c["reference_hi"]))
                ref_done = True
            if c["rate"] is not None:
                rows.append((metric, f"{cand} (p={c['p']:.3g})", c["rate"], c["lo"], c["hi"]))
    return rows


def forest_png(rows: Sequence[tuple[str, str, float, float, float]], *, confidence: float) -> bytes:
    """A forest plot (rate and interval per metric and candidate) as PNG bytes (:mod:`candor.common.png`)."""
    plt = pyplot()
    height = 1.2 + 0.28 * max(len(rows), 1)
    fig, ax = plt.subplots(figsize=(9, height), dpi=PNG_DPI)
    ys = list(range(len(rows)))[::-1]
    colors = {}
    for y, (metric, side, rate, lo, hi) in zip(ys, rows):
        name = side.split(" ")[0]
        color = colors.setdefault(name, f"C{len(colors) % 10}")
        ax.plot([lo, hi], [y, y], color=color, lw=2)
        ax.plot([rate], [y], "o", color=color, ms=5)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{m}  {s}" for m, s, *_ in rows], fontsize=7)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"rate with Wilson {confidence:.0%} interval (paired cases)")
    ax.grid(axis="x", alpha=0.3)
    if not rows:
        ax.text(0.5, 0.5, "no paired comparisons (outcome tables absent)", ha="center", va="center")
    fig.tight_layout()
    return png_bytes(plt, fig)
