"""Plot data (for ``dvc plots``) and matching PNGs (matplotlib, Agg) of one model's scores.

Everything here is a view of :mod:`candor_eval.detection.scoring.metrics` results; nothing is
recomputed. Files, for a model ``M`` of detection set ``S`` under the plots folder
(``plots/detection``), one folder per kind (:data:`PLOT_KINDS`, each a ``dvc plots`` definition in
``dvc.yaml``) and set:

- ``pr/S/M/<class>.csv`` ``threshold,precision,recall`` (DVC template ``linear``,
  x recall, y precision), one file per class plus ``all`` (micro);
- ``f1/S/M/<class>.csv`` ``threshold,f1,precision,recall`` (``linear``, x threshold, y f1);
- ``confusion/S/M.csv`` ``actual,predicted``, one row per counted box (``confusion``
  template; ``background`` is the no-box row/column);
- ``per_class/S/M.csv`` ``class,f1,support`` (``bar_horizontal``, x f1, y class);
- the set's models compared (:func:`set_plot_files`): ``pr_models/S/<class>.csv``,
  ``f1_models/S/<class>.csv`` (one line per model in one panel, template
  ``plots/templates/overlay.json``) and ``anatomy/S/fp.csv`` (the FP kinds per model, template
  ``plots/templates/anatomy.json``);
- PNGs ``M-pr.png``, ``M-f1.png``, ``M-confusion.png``, ``M-per_class.png`` (rendered by
  :mod:`stages.figures` into ``plots/figures/``, not by the pipeline: PNG bytes depend on the
  matplotlib build, so they are outside the byte-identical contract).

Points with an undefined rate (e.g. precision with no detection left) are
omitted from a curve. PNGs are byte-deterministic for one matplotlib build (:mod:`candor_eval.common.png`).
Figures are independent, so :func:`render` draws them on every core
(:func:`candor_eval.common.parallel.fork_map`); each figure's bytes do not depend on where it
was drawn.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from candor_eval.common.parallel import fork_map
from candor_eval.common.png import PNG_DPI, png_bytes, pyplot
from candor_eval.common.tables import csv_text
from candor_eval.detection.scoring.class_names import safe_name
from candor_eval.detection.scoring.records import Curve

BACKGROUND = "background"
PLOT_KINDS = ("pr", "f1", "confusion", "per_class")
SET_PLOT_KINDS = ("pr_models", "f1_models", "anatomy")     # every model of a set in one file


@dataclass(frozen=True)
class FigureInputs:
    """What one model's four PNGs show: its curves per class (``all`` = micro), confusion
    ``matrix`` (rows true, columns predicted, last index background) over ``classes``, the
    ``per_class`` metrics block, the served thresholds in use by class name (``served_by_class``)
    and ``min_support``."""

    model: str
    curves: dict[str, Curve]
    matrix: np.ndarray
    classes: tuple[str, ...]
    per_class: dict[str, dict]
    served_by_class: dict[str, float]
    min_support: int


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.6f}".rstrip("0").rstrip(".") if v != 0 else "0"


def pr_csv(curve: Curve) -> str:
    """``threshold,precision,recall``: the curve's points where both rates are defined."""
    return csv_text(("threshold", "precision", "recall"),
                    [(_fmt(t), _fmt(p), _fmt(r)) for t, p, r, _ in curve.rows() if p is not None and r is not None])


def f1_csv(curve: Curve) -> str:
    """``threshold,f1,precision,recall``: the curve's points where F1 is defined."""
    return csv_text(("threshold", "f1", "precision", "recall"),
                    [(_fmt(t), _fmt(f), _fmt(p), _fmt(r)) for t, p, r, f in curve.rows() if f is not None])


def confusion_csv(matrix: np.ndarray, classes: tuple[str, ...] | list[str]) -> str:
    """``actual,predicted``: one row per counted box (``matrix[i, j]`` rows of names ``i``, ``j``)."""
    names = [*classes, BACKGROUND]
    return csv_text(("actual", "predicted"),
                    [(a, p) for i, a in enumerate(names) for j, p in enumerate(names)
                     for _ in range(int(matrix[i, j]))])


def per_class_csv(per_class: dict[str, dict]) -> str:
    """``class,f1,support`` per class (F1 empty when undefined)."""
    return csv_text(("class", "f1", "support"),
                    [(name, _fmt(m["f1"]), m["support"]) for name, m in per_class.items()])


def plot_files(model: str, *, curves: dict[str, Curve], matrix: np.ndarray, classes: tuple[str, ...],
               per_class: dict[str, dict]) -> dict[str, dict[str, bytes]]:
    """One model's plot data files: kind -> (path relative to the kind's set folder -> bytes), as
    listed above."""
    m = safe_name(model)
    files: dict[str, dict[str, bytes]] = {kind: {} for kind in PLOT_KINDS}
    for name, curve in curves.items():
        files["pr"][f"{m}/{safe_name(name)}.csv"] = pr_csv(curve).encode()
        files["f1"][f"{m}/{safe_name(name)}.csv"] = f1_csv(curve).encode()
    files["confusion"][f"{m}.csv"] = confusion_csv(matrix, classes).encode()
    files["per_class"][f"{m}.csv"] = per_class_csv(per_class).encode()
    return files


def set_plot_files(curves: dict[str, dict[str, Curve]],
                   fp_anatomy: dict[str, dict[str, int]]) -> dict[str, dict[str, bytes]]:
    """A detection set's comparison files, every model of the set in one file (model -> its curves
    by class; model -> its ``fp_anatomy`` on all frames): kind of :data:`SET_PLOT_KINDS` -> (path
    relative to the kind's set folder -> bytes). ``pr_models/<class>.csv``
    ``model,threshold,precision,recall`` and ``f1_models/<class>.csv`` ``model,threshold,f1`` (one
    line per model in one panel, the ``overlay`` template), for the classes every model has;
    ``anatomy/fp.csv`` ``model,kind,count`` (the ``anatomy`` template: bars by kind, one per model)."""
    models = list(curves)
    names = [n for n in curves[models[0]] if all(n in curves[m] for m in models)] if models else []
    files: dict[str, dict[str, bytes]] = {kind: {} for kind in SET_PLOT_KINDS}
    for name in names:
        pr, f1 = [], []
        for m in models:
            for t, p, r, f in curves[m][name].rows():
                if p is not None and r is not None:
                    pr.append((m, _fmt(t), _fmt(p), _fmt(r)))
                if f is not None:
                    f1.append((m, _fmt(t), _fmt(f)))
        files["pr_models"][f"{safe_name(name)}.csv"] = csv_text(("model", "threshold", "precision", "recall"),
                                                                pr).encode()
        files["f1_models"][f"{safe_name(name)}.csv"] = csv_text(("model", "threshold", "f1"), f1).encode()
    fp_rows = [(m, k, n) for m, kinds in fp_anatomy.items() for k, n in kinds.items()]
    files["anatomy"]["fp.csv"] = csv_text(("model", "kind", "count"), fp_rows).encode()
    return files


def _figure(width: float, height: float):
    plt = pyplot()
    return plt, plt.figure(figsize=(width, height), dpi=PNG_DPI)


def png_curves(curves: dict[str, Curve], *, model: str, kind: str, served_by_class: dict[str, float]) -> bytes:
    """PR (``kind='pr'``) or F1-versus-threshold (``kind='f1'``) curves of every class, one PNG."""
    plt, fig = _figure(8, 6)
    ax = fig.add_subplot(1, 1, 1)
    n_colours = 10 if len(curves) <= 11 else 20
    cmap = plt.get_cmap(f"tab{n_colours}")
    for k, (name, cv) in enumerate(curves.items()):
        rows = cv.rows()
        style = ({"color": "black", "linewidth": 2.2} if name == "all"
                 else {"color": cmap(k % n_colours), "linewidth": 1.2})
        if kind == "pr":
            pts = [(r, p) for _, p, r, _ in rows if p is not None and r is not None]
        else:
            pts = [(t, f) for t, _, _, f in rows if f is not None]
        if not pts:
            continue
        x, y = zip(*pts)
        ax.plot(x, y, label=name, **style)
        if kind == "f1" and name in served_by_class:
            t = served_by_class[name]
            near = min(range(len(x)), key=lambda i: abs(x[i] - t))
            ax.plot([x[near]], [y[near]], marker="o", color=style["color"], markersize=4)
    if kind == "pr":
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_title(f"{model}: precision-recall per class (all frames)")
    else:
        ax.set_xlabel("confidence threshold")
        ax.set_ylabel("F1")
        ax.set_title(f"{model}: F1 versus threshold (dots: thresholds in use)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(True, linewidth=0.3)
    ax.legend(fontsize=7, loc="upper right", ncol=2)
    fig.tight_layout()
    return png_bytes(plt, fig)


def png_confusion(matrix: np.ndarray, classes: tuple[str, ...] | list[str], *, model: str) -> bytes:
    names = [*classes, BACKGROUND]
    plt, fig = _figure(8, 7)
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(np.log1p(matrix), cmap="Blues", interpolation="nearest")
    for i in range(len(names)):
        for j in range(len(names)):
            if matrix[i, j]:
                ax.text(j, i, str(int(matrix[i, j])), ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_xlabel("predicted")
    ax.set_ylabel("actual")
    ax.set_title(f"{model}: confusion at the operating point (all frames)")
    fig.tight_layout()
    return png_bytes(plt, fig)


def png_per_class(per_class: dict[str, dict], *, model: str, min_support: int) -> bytes:
    names = list(per_class)
    f1 = [per_class[n]["f1"] or 0.0 for n in names]
    plt, fig = _figure(8, max(3.0, 0.35 * len(names) + 1.2))
    ax = fig.add_subplot(1, 1, 1)
    colours = ["tab:blue" if per_class[n]["qualified"] else "tab:gray" for n in names]
    y = np.arange(len(names))
    ax.barh(y, f1, color=colours)
    for i, n in enumerate(names):
        ax.text(min(f1[i], 0.98) + 0.01, i, f"n={per_class[n]['support']}", va="center", fontsize=7)
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.12)
    ax.set_xlabel("F1 at the operating point")
    ax.set_title(f"{model}: per-class F1 with support (grey: support < {min_support}, unqualified)")
    fig.tight_layout()
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


def figure_jobs(fig: FigureInputs) -> dict[str, Job]:
    """One model's four PNG jobs for :func:`render`, keyed by file name (``M-<kind>.png``)."""
    m, served = safe_name(fig.model), fig.served_by_class
    return {
        f"{m}-pr.png": (png_curves, (fig.curves,), {"model": fig.model, "kind": "pr", "served_by_class": served}),
        f"{m}-f1.png": (png_curves, (fig.curves,), {"model": fig.model, "kind": "f1", "served_by_class": served}),
        f"{m}-confusion.png": (png_confusion, (fig.matrix, fig.classes), {"model": fig.model}),
        f"{m}-per_class.png": (png_per_class, (fig.per_class,), {"model": fig.model, "min_support": fig.min_support}),
    }
