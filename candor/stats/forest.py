"""The forest plot: each paired comparison's rates with their intervals, reference then candidates."""
from __future__ import annotations

from collections.abc import Sequence

from candor.common.png import PNG_DPI, png_bytes, pyplot
from candor.stats.stats_file import StatsFile


def forest_rows(stats: StatsFile) -> list[tuple[str, str, float, float, float]]:
    """``(metric, side, rate, lo, hi)`` of the stats file for the forest plot: each metric's
    reference once, then each candidate; a side with no paired cases (no rate) is left out."""
    rows = []
    for metric, comp in stats.paired.items():
        ref_done = False
        for cand, c in comp.candidates.items():
            if not ref_done and c.a.rate is not None:
                rows.append((metric, comp.reference, c.a.rate, c.a.lo, c.a.hi))
                ref_done = True
            if c.b.rate is not None:
                rows.append((metric, f"{cand} (p={c.p:.3g})", c.b.rate, c.b.lo, c.b.hi))
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
