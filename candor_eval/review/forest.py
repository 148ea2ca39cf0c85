"""The forest plots: per report group (``lots``, each ``detection.<set>``), the headline comparisons'
rates with their intervals, reference then candidates (:func:`candor_eval.review.report.headline_metrics`).
One figure per group, a row per (metric, side): 12 candidates on four metrics stay under 1,600 px."""
from __future__ import annotations

from collections.abc import Sequence

from candor_eval.common.png import PNG_DPI, png_bytes, pyplot
from candor_eval.review.report import headline_metrics
from candor_eval.review.stats_file import StatsFile

ROW_INCHES = 0.24


def forest_rows(stats: StatsFile, group: str) -> list[tuple[str, str, float, float, float]]:
    """``(metric, side, rate, lo, hi)`` of a group's headline comparisons for its forest plot: each
    metric's reference once, then each candidate; a side with no paired cases (no rate) is left out."""
    rows = []
    for metric in headline_metrics(group):
        comp = stats.paired.get(metric)
        if comp is None:
            continue
        ref_done = False
        for cand, c in comp.candidates.items():
            if not ref_done and c.a.rate is not None and c.a.lo is not None and c.a.hi is not None:
                rows.append((metric, comp.reference, c.a.rate, c.a.lo, c.a.hi))
                ref_done = True
            if c.b.rate is not None and c.b.lo is not None and c.b.hi is not None:
                rows.append((metric, f"{cand} (p={c.p:.3g})", c.b.rate, c.b.lo, c.b.hi))
    return rows


def forest_png(rows: Sequence[tuple[str, str, float, float, float]], *, confidence: float) -> bytes:
    """A forest plot (rate and interval per metric and candidate) as PNG bytes (:mod:`candor_eval.common.png`)."""
    plt = pyplot()
    height = 1.2 + ROW_INCHES * max(len(rows), 1)
    fig, ax = plt.subplots(figsize=(9, height), dpi=PNG_DPI)
    ys = list(range(len(rows)))[::-1]
    colours: dict[str, str] = {}
    for y, (_metric, side, rate, lo, hi) in zip(ys, rows):
        name = side.split(" ")[0]
        colour = colours.setdefault(name, f"C{len(colours) % 10}")
        ax.plot([lo, hi], [y, y], color=colour, lw=2)
        ax.plot([rate], [y], "o", color=colour, ms=5)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{m}  {s}" for m, s, *_ in rows], fontsize=7)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"rate with its {confidence:.0%} interval over independent clusters (paired units)")
    ax.grid(axis="x", alpha=0.3)
    if not rows:
        ax.text(0.5, 0.5, "no paired comparisons (outcome tables absent)", ha="center", va="center")
    fig.tight_layout()
    return png_bytes(plt, fig)
