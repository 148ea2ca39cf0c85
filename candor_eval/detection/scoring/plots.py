"""Plot data (for ``dvc plots``) and matching PNGs (matplotlib, Agg) of one model's scores.

Everything here is a view of :mod:`candor_eval.detection.scoring.metrics` results; nothing is
recomputed. Files, for a model ``M`` of detection set ``S`` under the plots folder
(``plots/detection``), one folder per kind (:data:`PLOT_KINDS`, each a ``dvc plots`` definition in
``dvc.yaml``) and set:

- one model's detail, on all frames: ``pr/S/M/<class>.csv`` ``threshold,precision,recall``
  (x recall, y precision), one file per class plus ``all`` (micro); ``f1/S/M/<class>.csv``
  ``threshold,f1,precision,recall`` (x threshold, y f1);
- ``confusion/S/M.csv`` ``actual,predicted,count,row_share`` on the headline split, every cell
  (``background`` is the no-box row/column), so the set's models share their columns;
- the set's models compared on the headline split (:data:`COMPARED_SPLIT`, :func:`set_plot_files`):
  ``pr_models/S/<class>.csv``, ``f1_models/S/<class>.csv`` (one line per model in one panel, the
  served point or threshold marked), ``anatomy/S/fp.csv`` (the FP kinds per model) and
  ``per_class/S/f1.csv`` (per-class F1 of every model);
- PNGs that compare the set's models (:func:`figure_jobs`): ``compare-pr.png``,
  ``compare-f1.png``, ``compare-per_class.png`` and ``compare-confusion.png`` (on the headline
  split), rendered by :mod:`stages.figures` into ``plots/figures/<set>/``, not
  by the pipeline: PNG bytes depend on the matplotlib build, so they are outside the
  byte-identical contract.

The templates (``plots/templates/*.json``, named in ``dvc.yaml``) never smooth a curve, and fix
every rate axis on 0..1.

Points with an undefined rate (e.g. precision with no detection left) are
omitted from a curve. PNGs are byte-deterministic for one matplotlib build (:mod:`candor_eval.common.png`).
Figures are independent, so :func:`render` draws them on every core
(:func:`candor_eval.common.parallel.fork_map`); each figure's bytes do not depend on where it
was drawn.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from candor_eval.common.parallel import fork_map
from candor_eval.common.png import PNG_DPI, png_bytes, pyplot
from candor_eval.common.rounding import ratio
from candor_eval.common.tables import csv_text
from candor_eval.detection.scoring.class_names import safe_name
from candor_eval.detection.scoring.records import Curve

BACKGROUND = "background"
PLOT_KINDS = ("pr", "f1", "confusion")                          # one file per model (curves: all frames)
SET_PLOT_KINDS = ("pr_models", "f1_models", "anatomy", "per_class")     # every model of a set in one file
COMPARED_SPLIT = "test"          # the headline split: the one the report, the gate and the comparison files use


@dataclass(frozen=True)
class FigureInputs:
    """What one model's PNGs show: its curves per class (``all`` = micro) on all frames and on the
    headline split (``split_curves``), the headline split's confusion ``matrix`` (rows true,
    columns predicted, last index background) over ``classes``, the headline split's
    ``per_class`` metrics block, the served thresholds in use by class name (``served_by_class``)
    and ``min_support``."""

    model: str
    curves: dict[str, Curve]
    matrix: np.ndarray
    classes: tuple[str, ...]
    per_class: dict[str, dict]
    served_by_class: dict[str, float]
    min_support: int
    split_curves: dict[str, Curve] | None = None


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.6f}".rstrip("0").rstrip(".") if v != 0 else "0"


def _texts(values: Sequence[float | None], memo: dict[float | None, str]) -> list[str]:
    """:func:`_fmt` of each of ``values``, each distinct value formatted once into ``memo`` (value -> text),
    which the caller may share between curves (they share the grid; rates repeat)."""
    for v in set(values):
        if v not in memo:
            memo[v] = _fmt(v)
    return list(map(memo.__getitem__, values))


CurveText = tuple[list[str], list[str], list[str], list[str]]


def _rate_texts(num: np.ndarray, den: np.ndarray, memo: dict[float | None, str]) -> list[str]:
    """:func:`_fmt` of :func:`~candor_eval.common.rounding.ratio` ``(num, den)`` at each point (``""`` where
    ``den`` is 0), without a Python call per point: the quotients as numpy divides them (the same double
    as ``num / den`` of Python's ints below 2**53), then each distinct one rounded and formatted once
    (``memo`` as :func:`_texts`)."""
    quotient = np.divide(num, den, out=np.full(len(num), np.nan), where=den > 0)
    distinct, at = np.unique(quotient, return_inverse=True)
    texts = []
    for v in distinct.tolist():
        key = None if v != v else ratio(v, 1)                    # NaN: den 0, an undefined rate
        if key not in memo:
            memo[key] = _fmt(key)
        texts.append(memo[key])
    return np.array(texts, dtype=object)[at.reshape(-1)].tolist()


def curve_text(curve: Curve, memo: dict[float | None, str] | None = None) -> CurveText:
    """The curve's columns threshold, precision, recall and F1 as the files write them (:func:`_fmt` of
    :meth:`Curve.rows <candor_eval.detection.scoring.records.Curve.rows>`); an undefined rate is ``""`` (only
    an undefined rate is). ``memo``: as :func:`_texts`. The three rates go through :func:`_rate_texts` at once."""
    memo = {} if memo is None else memo
    n = len(curve.grid)
    tp, fp, fn = (np.asarray(a, dtype=np.int64) for a in (curve.tp, curve.fp, curve.fn))
    rates = _rate_texts(np.concatenate([tp, tp, 2 * tp]), np.concatenate([tp + fp, tp + fn, 2 * tp + fp + fn]), memo)
    return _texts(curve.grid.tolist(), memo), rates[:n], rates[n:2 * n], rates[2 * n:]


def pr_csv(curve: Curve, text: CurveText | None = None) -> str:
    """``threshold,precision,recall``: the curve's points where both rates are defined (``text``: the
    curve's :func:`curve_text`, when the caller has it)."""
    t, p, r, _ = text or curve_text(curve)
    return csv_text(("threshold", "precision", "recall"), [row for row in zip(t, p, r) if row[1] and row[2]])


def f1_csv(curve: Curve, text: CurveText | None = None) -> str:
    """``threshold,f1,precision,recall``: the curve's points where F1 is defined (``text`` as :func:`pr_csv`)."""
    t, p, r, f = text or curve_text(curve)
    return csv_text(("threshold", "f1", "precision", "recall"), [row for row in zip(t, f, p, r) if row[1]])


def confusion_csv(matrix: np.ndarray, classes: tuple[str, ...] | list[str]) -> str:
    """``actual,predicted,count,row_share``: every cell of the matrix (``matrix[i, j]`` boxes of true
    name ``i`` predicted as ``j``; background last), zeros included, so that every model of a set
    has the same columns; ``row_share`` is the count over its row's total (empty for an empty row),
    a colour scale on 0..1 that two models share whatever their counts."""
    names = [*classes, BACKGROUND]
    totals = matrix.sum(axis=1)
    return csv_text(("actual", "predicted", "count", "row_share"),
                    [(a, p, int(matrix[i, j]), _fmt(float(matrix[i, j]) / totals[i] if totals[i] else None))
                     for i, a in enumerate(names) for j, p in enumerate(names)])


def plot_files(model: str, *, curves: dict[str, Curve], matrix: np.ndarray,
               classes: tuple[str, ...]) -> dict[str, dict[str, bytes]]:
    """One model's plot data files: kind -> (path relative to the kind's set folder -> bytes), as
    listed above."""
    m = safe_name(model)
    files: dict[str, dict[str, bytes]] = {kind: {} for kind in PLOT_KINDS}
    memo: dict[float | None, str] = {}
    for name, curve in curves.items():
        text = curve_text(curve, memo)
        files["pr"][f"{m}/{safe_name(name)}.csv"] = pr_csv(curve, text).encode()
        files["f1"][f"{m}/{safe_name(name)}.csv"] = f1_csv(curve, text).encode()
    files["confusion"][f"{m}.csv"] = confusion_csv(matrix, classes).encode()
    return files


def nearest_row(thresholds: list[float], served: float) -> int:
    """The index of the grid threshold nearest ``served`` (the lower one on a tie).

    >>> nearest_row([0.1, 0.2, 0.3], 0.25)
    1
    """
    return min(range(len(thresholds)), key=lambda i: (abs(thresholds[i] - served), thresholds[i]))


def set_plot_files(curves: dict[str, dict[str, Curve]], fp_anatomy: dict[str, dict[str, int]], *,
                   per_class: dict[str, dict[str, dict]],
                   served: dict[str, dict[str, float]]) -> dict[str, dict[str, bytes]]:
    """A detection set's comparison files on one split (the caller's: :data:`COMPARED_SPLIT`), every
    model of the set in one file: kind of :data:`SET_PLOT_KINDS` -> (path relative to the kind's set
    folder -> bytes). Inputs by model: its curves by class, its ``fp_anatomy``, its ``per_class``
    metrics block and its ``served`` thresholds by class.

    - ``pr_models/<class>.csv`` ``model,threshold,precision,recall,served`` (``served`` is 1 on the
      grid point nearest the model's served threshold of the class, else 0; never for ``all``,
      whose classes have their own thresholds) and ``f1_models/<class>.csv``
      ``model,threshold,f1,served_threshold`` (the served threshold on every row of the model, empty
      for ``all``): one line per model in one panel, template ``overlay``, for the classes every
      model has;
    - ``anatomy/fp.csv`` ``model,kind,count`` (template ``anatomy``: bars by kind, one per model);
    - ``per_class/f1.csv`` ``model,class,f1,support,qualified`` (template ``per_class``: bars by
      class, one per model; ``qualified`` yes/no by ``min_support``; F1 empty when undefined)."""
    models = list(curves)
    names = [n for n in curves[models[0]] if all(n in curves[m] for m in models)] if models else []
    files: dict[str, dict[str, bytes]] = {kind: {} for kind in SET_PLOT_KINDS}
    memo: dict[float | None, str] = {}
    for name in names:
        pr, f1 = [], []
        for m in models:
            curve = curves[m][name]
            t_served = served.get(m, {}).get(name) if name != "all" else None
            at = nearest_row(curve.grid.tolist(), t_served) if t_served is not None and len(curve.grid) else -1
            ts, ps, rs, fs = curve_text(curve, memo)
            pr += [(m, t, p, r, int(i == at)) for i, (t, p, r) in enumerate(zip(ts, ps, rs)) if p and r]
            served_text = _fmt(t_served)
            f1 += [(m, t, f, served_text) for t, f in zip(ts, fs) if f]
        files["pr_models"][f"{safe_name(name)}.csv"] = csv_text(
            ("model", "threshold", "precision", "recall", "served"), pr).encode()
        files["f1_models"][f"{safe_name(name)}.csv"] = csv_text(
            ("model", "threshold", "f1", "served_threshold"), f1).encode()
    fp_rows = [(m, k, n) for m, kinds in fp_anatomy.items() for k, n in kinds.items()]
    files["anatomy"]["fp.csv"] = csv_text(("model", "kind", "count"), fp_rows).encode()
    bars = [(m, c, _fmt(b["f1"]), b["support"], "yes" if b["qualified"] else "no")
            for m, block in per_class.items() for c, b in block.items()]
    files["per_class"]["f1.csv"] = csv_text(("model", "class", "f1", "support", "qualified"), bars).encode()
    return files


def _figure(width: float, height: float):
    plt = pyplot()
    return plt, plt.figure(figsize=(width, height), dpi=PNG_DPI)


# One style per model: colours of matplotlib's qualitative tab10, then again with another line style
# and marker, so that 10+ series stay apart in print and for the colour-blind.
TAB10 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
         "#17becf")                     # matplotlib's tab10, spelled out: no rcParams colour cycle changes it
LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def series_style(k: int) -> dict:
    """The k-th series' style: colour ``k mod 10`` of :data:`TAB10`, line style and marker changing every 10.

    >>> series_style(0), series_style(11)["linestyle"]
    ({'color': '#1f77b4', 'linestyle': '-', 'marker': 'o'}, '--')
    """
    return {"color": TAB10[k % 10], "linestyle": LINESTYLES[(k // 10) % len(LINESTYLES)],
            "marker": MARKERS[(k // 10 + k) % len(MARKERS)]}


def _panel_grid(n: int, *, columns: int = 4) -> tuple[int, int]:
    return max(1, -(-n // columns)), min(columns, max(n, 1))


def png_compare_curves(figs: Sequence[FigureInputs], *, set_name: str, kind: str, split: str) -> bytes:
    """Every model of a set in one figure on ``split`` (each model's ``split_curves``): one panel
    per class (``all`` first), one line per model in its :func:`series_style`, axes fixed on 0..1.
    ``kind='pr'``: precision against recall, the served operating point marked (the grid point
    nearest the class's served threshold); ``kind='f1'``: F1 against threshold, the served
    threshold a dashed vertical line. ``all`` has no served mark (each class has its own threshold)."""
    curves = {f.model: f.split_curves or {} for f in figs}
    names = [n for n in (next(iter(curves.values())) if curves else {}) if all(n in c for c in curves.values())]
    names = sorted(names, key=lambda n: n != "all")
    rows, cols = _panel_grid(len(names))
    plt, fig = _figure(3.2 * cols, 2.8 * rows + 0.9)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, names):
        for k, f in enumerate(figs):
            style = series_style(k)
            rows_ = curves[f.model][name].rows()
            if kind == "pr":
                pts = [(r, p, t) for t, p, r, _ in rows_ if p is not None and r is not None]
            else:
                pts = [(t, v, t) for t, _, _, v in rows_ if v is not None]
            if pts:
                x, y, t = zip(*pts)
                ax.plot(x, y, color=style["color"], linestyle=style["linestyle"], linewidth=1.4, label=f.model)
            served = f.served_by_class.get(name) if name != "all" else None
            if served is None:
                continue
            if kind == "f1":
                # interleaved dashes: models served at one threshold all show on the same line
                ax.axvline(served, color=style["color"], linewidth=1.2,
                           linestyle=(3 * k, (3, 3 * (len(figs) - 1) or 2)))
            elif pts:
                i = nearest_row(list(t), served)
                ax.plot([x[i]], [y[i]], marker=style["marker"], color=style["color"], markersize=7,
                        markeredgecolor="black", linestyle="none")
        ax.set_title(name, fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.grid(True, linewidth=0.3)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("recall" if kind == "pr" else "confidence threshold", fontsize=8)
        ax.set_ylabel("precision" if kind == "pr" else "F1", fontsize=8)
    what = ("precision-recall per class (marker: served operating point)" if kind == "pr"
            else "F1 versus threshold per class (dashed: served threshold)")
    fig.suptitle(f"{set_name}: {what}, {split} split", fontsize=12)
    handles = [plt.Line2D([], [], color=series_style(k)["color"], linestyle=series_style(k)["linestyle"],
                          marker=series_style(k)["marker"] if kind == "pr" else None, label=f.model)
               for k, f in enumerate(figs)]
    fig.legend(handles=handles, loc="upper right", ncol=min(len(handles), 4), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.75 / (2.8 * rows + 0.9)))
    return png_bytes(plt, fig)


F1Interval = tuple[float, float, float] | None      # (F1, lo, hi) of a class, None when not known


def png_compare_per_class(figs: Sequence[FigureInputs], intervals: dict[str, dict[str, F1Interval]], *,
                          set_name: str, split: str, confidence: float) -> bytes:
    """Per-class F1 of every model of a set on ``split`` (each model's ``per_class`` block), one row
    per class and one dot per model in its :func:`series_style`, with its interval from
    ``intervals[model][class]`` (e.g. the stats stage's clustered Wilson interval) when known.
    A class with support below ``min_support`` (unqualified) is drawn grey, dots, bars and label."""
    classes = list(figs[0].per_class) if figs else []
    n_models = max(len(figs), 1)
    plt, fig = _figure(9, 1.4 + 0.42 * max(len(classes), 1))
    ax = fig.add_subplot(1, 1, 1)
    grey = "#9a9a9a"
    labels = []
    for i, name in enumerate(classes):
        block0 = figs[0].per_class[name]
        qualified = all(f.per_class.get(name, {}).get("qualified", False) for f in figs)
        labels.append((f"{name} (n={block0['support']})" if qualified
                       else f"{name} (n={block0['support']}, unqualified)", qualified))
        if not qualified:
            ax.axhspan(i - 0.5, i + 0.5, color="#eeeeee", zorder=0)
        for k, f in enumerate(figs):
            style = series_style(k)
            colour = style["color"] if qualified else grey
            y = i + (k - (n_models - 1) / 2) * 0.6 / n_models
            iv = intervals.get(f.model, {}).get(name)
            value = f.per_class.get(name, {}).get("f1")
            if iv is not None:
                ax.plot([iv[1], iv[2]], [y, y], color=colour, linewidth=1.6, linestyle=style["linestyle"])
            if value is not None:
                ax.plot([value], [y], marker=style["marker"], color=colour, markersize=6, linestyle="none")
    ax.set_yticks(range(len(classes)), [t for t, _ in labels], fontsize=9)
    for tick, (_, qualified) in zip(ax.get_yticklabels(), labels):
        tick.set_color("black" if qualified else grey)
    ax.set_ylim(max(len(classes), 1) - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.grid(axis="x", linewidth=0.3)
    ax.set_xlabel(f"F1 at the served thresholds, with its {confidence:.0%} interval (clustered by frame)")
    min_support = figs[0].min_support if figs else 0
    ax.set_title(f"{set_name}: per-class F1, {split} split (grey: support < {min_support}, unqualified)", fontsize=11)
    handles = [plt.Line2D([], [], color=series_style(k)["color"], linestyle=series_style(k)["linestyle"],
                          marker=series_style(k)["marker"], label=f.model) for k, f in enumerate(figs)]
    handles.append(plt.Line2D([], [], color=grey, marker="o", label="unqualified"))
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    fig.tight_layout()
    return png_bytes(plt, fig)


def png_compare_confusion(figs: Sequence[FigureInputs], *, set_name: str, split: str) -> bytes:
    """The confusion matrices of every model of a set side by side on the same rows and columns
    (the first model's classes, then background), each cell coloured by its share of the row on
    one 0..1 scale shared by every panel, with its count written in it."""
    names = [*(figs[0].classes if figs else ()), BACKGROUND]
    plt, fig = _figure(6.2 * max(len(figs), 1) + 1.2, 6.6)
    fig.set_layout_engine("constrained")           # every panel keeps its own class labels clear
    axes = fig.subplots(1, max(len(figs), 1), squeeze=False)[0]
    image = None
    for ax, f in zip(axes, figs):
        matrix = f.matrix.astype(float)
        totals = matrix.sum(axis=1, keepdims=True)
        share = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
        image = ax.imshow(share, cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
        for i in range(len(names)):
            for j in range(len(names)):
                if f.matrix[i, j]:
                    ax.text(j, i, str(int(f.matrix[i, j])), ha="center", va="center", fontsize=7,
                            color="white" if share[i, j] > 0.5 else "black")
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=8)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.set_xlabel("predicted")
        ax.set_ylabel("actual")
        ax.set_title(f.model, fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.7, label="share of the row (actual class)")
    fig.suptitle(f"{set_name}: confusion at the served thresholds, {split} split (count in each cell)", fontsize=12)
    return png_bytes(plt, fig)


Job = tuple[Callable[..., bytes], tuple, dict]


def _call(job: Job) -> bytes:
    fn, args, kwargs = job
    return fn(*args, **kwargs)


def render(jobs: dict[str, Job], *, workers: int | None = None) -> dict[str, bytes]:
    """Run every figure job ``name -> (function, args, kwargs)``; the same bytes as calling each in turn.

    matplotlib is imported here, before :func:`candor_eval.common.parallel.fork_map` forks its
    workers (default: one per core), so no worker imports it again.
    """
    pyplot()
    return dict(zip(jobs, fork_map(_call, list(jobs.values()), workers=workers)))


def figure_jobs(set_name: str, figs: Sequence[FigureInputs], *, intervals: dict[str, dict[str, F1Interval]],
                confidence: float, split: str = COMPARED_SPLIT) -> dict[str, Job]:
    """A set's comparison PNG jobs for :func:`render`, keyed by file name: ``compare-pr.png``,
    ``compare-f1.png``, ``compare-per_class.png`` and ``compare-confusion.png``, all on ``split``."""
    return {
        "compare-pr.png": (png_compare_curves, (figs,), {"set_name": set_name, "kind": "pr", "split": split}),
        "compare-f1.png": (png_compare_curves, (figs,), {"set_name": set_name, "kind": "f1", "split": split}),
        "compare-per_class.png": (png_compare_per_class, (figs, intervals),
                                  {"set_name": set_name, "split": split, "confidence": confidence}),
        "compare-confusion.png": (png_compare_confusion, (figs,), {"set_name": set_name, "split": split}),
    }
