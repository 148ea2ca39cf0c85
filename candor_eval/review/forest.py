"""The forest plots: per report group (``lots``, each ``detection.<set>``), the paired comparisons
of the group's headline metrics (:func:`candor_eval.review.report.headline_metrics`), plus, for a
detection set, the false-positive test (``test.false_positives``, false positives per frame), with
their intervals: each metric's reference once, then each candidate, marked by its verdict (better,
worse, or no detectable difference, with p). Rates (0..1) and means per unit (e.g. false positives
per frame) are drawn in two panels, each on its own axis. One figure per group, a row per
(metric, side): 12 candidates on four metrics stay under 1,600 px."""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from candor_eval.common.png import PNG_DPI, png_bytes, pyplot
from candor_eval.review.report import headline_metrics
from candor_eval.review.stats_file import StatsFile

ROW_INCHES = 0.26
HEAD_INCHES = 1.6                   # titles and axis labels
WIDTH_INCHES = 11
FOREST_EXTRA = {"detection": ("test.false_positives",)}      # beyond the headline: the FP test
LABELS = {"identification.hit": "identification: hit", "identification.not_wrong": "identification: not wrong",
          "fields.majority": "fields: majority right", "valuation.in_band": "valuation: in band",
          "label_found": "labels found", "frame_error_free": "frames without an error",
          "false_positives": "false positives per frame"}
VERDICT_STYLE = {"B better": ("tab:green", "better"), "B worse": ("tab:red", "worse"),
                 "no detectable difference": ("tab:gray", "no detectable difference")}


class ForestRow(NamedTuple):
    """One row: ``metric`` (its stats key), ``side`` (a model or candidate name), its ``rate`` and
    interval ``[lo, hi]``; a candidate's ``verdict`` and ``p`` against the reference (``None`` for
    the reference); ``estimate`` ``rate`` (a proportion) or ``mean`` (per ``unit``)."""

    metric: str
    side: str
    rate: float
    lo: float
    hi: float
    verdict: str | None = None
    p: float | None = None
    estimate: str = "rate"
    unit: str = ""


def forest_metrics(group: str) -> tuple[str, ...]:
    """The paired metrics a group's forest plot draws: its headline metrics, then for a detection
    set its false-positive test."""
    if group == "lots":
        return headline_metrics(group)
    return headline_metrics(group) + tuple(f"{group}.{m}" for m in FOREST_EXTRA["detection"])


def metric_label(metric: str) -> str:
    """A reader's name of a metric key.

    >>> metric_label("detection.night.test.false_positives"), metric_label("fields.majority")
    ('false positives per frame (test)', 'fields: majority right')
    >>> metric_label("lots.some_rate")
    'lots some rate'
    """
    if metric in LABELS:
        return LABELS[metric]
    parts = metric.split(".")
    if parts[0] == "detection" and len(parts) >= 4 and parts[-1] in LABELS:
        return f"{LABELS[parts[-1]]} ({parts[2]})"
    return metric.replace(".", " ").replace("_", " ")


def forest_rows(stats: StatsFile, group: str) -> list[ForestRow]:
    """The rows of a group's forest plot (:func:`forest_metrics`): each metric's reference once,
    then each candidate with its verdict and p; a side with no paired cases (no rate) is left out."""
    rows = []
    for metric in forest_metrics(group):
        comp = stats.paired.get(metric)
        if comp is None:
            continue
        ref_done = False
        for cand, c in comp.candidates.items():
            estimate = c.a.estimate
            if not ref_done and c.a.rate is not None and c.a.lo is not None and c.a.hi is not None:
                rows.append(ForestRow(metric, comp.reference, c.a.rate, c.a.lo, c.a.hi,
                                      estimate=estimate, unit=c.a.unit))
                ref_done = True
            if c.b.rate is not None and c.b.lo is not None and c.b.hi is not None:
                rows.append(ForestRow(metric, cand, c.b.rate, c.b.lo, c.b.hi, verdict=c.verdict, p=c.p,
                                      estimate=estimate, unit=c.b.unit))
    return rows


def forest_title(stats: StatsFile, group: str) -> str:
    """``<group>: candidates against <reference>`` (the group's reference, when the stats name it)."""
    reference = next((stats.paired[m].reference for m in forest_metrics(group) if m in stats.paired), None)
    return f"{group}: candidates against {reference}" if reference else group


def _draw(ax, rows: Sequence[ForestRow]) -> None:
    ys = list(range(len(rows)))[::-1]
    for y, row in zip(ys, rows):
        colour, words = VERDICT_STYLE.get(row.verdict or "", ("black", ""))
        ax.plot([row.lo, row.hi], [y, y], color=colour, lw=2.2)
        ax.plot([row.rate], [y], "D" if row.verdict is None else "o", color=colour, ms=6)
        if row.verdict is not None:
            arrow = {"better": "\u25b2 ", "worse": "\u25bc "}.get(words, "")
            ax.text(1.01, y, f"{arrow}{words}, p = {row.p:.3g}", transform=ax.get_yaxis_transform(),
                    va="center", fontsize=9, color=colour, fontweight="bold" if arrow else "normal")
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{metric_label(r.metric)}: {r.side}" + (" (reference)" if r.verdict is None else "")
                        for r in rows], fontsize=9)
    previous = None
    for y, row in zip(ys, rows):                          # a rule between metrics
        if previous is not None and row.metric != previous:
            ax.axhline(y + 0.5, color="#cccccc", lw=0.8)
        previous = row.metric
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.grid(axis="x", alpha=0.3)


def forest_png(rows: Sequence[ForestRow], *, confidence: float, title: str | None = None) -> bytes:
    """A forest plot (rate and interval per metric and side; a candidate coloured by its verdict,
    green better, red worse, grey no detectable difference, its verdict and p written at the right)
    as PNG bytes (:mod:`candor_eval.common.png`). Rates and means per unit get a panel each.
    Size: :data:`WIDTH_INCHES` wide, :data:`HEAD_INCHES` plus :data:`ROW_INCHES` per row (one row at least)
    high, plus 0.8 in for a second panel."""
    plt = pyplot()
    rates = [r for r in rows if r.estimate != "mean"]
    means = [r for r in rows if r.estimate == "mean"]
    panels = [p for p in (rates, means) if p] or [[]]
    height = HEAD_INCHES + ROW_INCHES * max(len(rows), 1) + 0.8 * (len(panels) - 1)
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH_INCHES, height), dpi=PNG_DPI, squeeze=False,
                             gridspec_kw={"height_ratios": [max(len(p), 1) for p in panels]})
    for ax, panel in zip(axes[:, 0], panels):
        _draw(ax, panel)
        if panel is means:
            top = max(r.hi for r in panel)
            ax.set_xlim(0, top * 1.05 if top > 0 else 1)
            units = sorted({r.unit for r in panel})
            ax.set_xlabel(f"mean per {', '.join(units)} with its {confidence:.0%} interval (lower is better "
                          "for false positives)", fontsize=9)
        else:
            ax.set_xlim(-0.02, 1.02)
            ax.set_xlabel(f"rate with its {confidence:.0%} interval over independent clusters (paired units)",
                          fontsize=9)
    if not rows:
        axes[0, 0].text(0.5, 0.5, "no paired comparisons (outcome tables absent)", ha="center", va="center",
                        transform=axes[0, 0].transAxes)
    fig.suptitle((title + "\n" if title else "") + "green: better, red: worse, grey: no detectable difference "
                 "(diamond: the reference)", fontsize=10)
    fig.tight_layout()
    return png_bytes(plt, fig)
