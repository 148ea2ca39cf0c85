"""What kind of error changed: descriptive views of the detection track's error anatomy.

The anatomy itself (FP kinds, aimed and missed FNs, TP box quality; definitions in
:mod:`candor_eval.detection.scoring.anatomy` and :mod:`candor_eval.detection.scoring.box_quality`) is
written by the scorer into each model's metrics file and, per frame, into the optional columns
of ``detection-frames.csv`` (:data:`candor_eval.stats.outcomes.FRAME_ERROR_COLUMNS`). This module only
shows them side by side: totals of A and B and their difference B - A, with no test (the gate and
the headline stay on the served operating point; a paired test per kind reads the per-frame
columns). Unit: detection for the FP kinds, label for the FN kinds, true positive for the box
quality, all on the frames of one split.

- :func:`report_lines`: for the report, from the metrics files: each candidate of a detection set
  against its reference (the set's first model).
- :func:`frame_totals` and :func:`render_totals`: for ``compare``, from the outcome tables of two
  revisions: each set and model on both sides.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from candor_eval.stats.outcomes import FRAME_ERROR_COLUMNS, int_cell

FP_ROWS = ("localisation", "class_confusion", "duplicate", "background", "both")
QUALITY_ROWS = ("iou_median", "iou_p10", "edge_error_px")


def _get(doc: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(doc, Mapping) or key not in doc:
            return None
        doc = doc[key]
    return doc


def _diff(a: Any, b: Any) -> str:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return "n/a"
    d = b - a
    return f"{d:+d}" if isinstance(d, int) else f"{d:+.4f}"


def _cell(v: Any) -> str:
    if v is None:
        return "n/a"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def model_rows(doc: Any, *, split: str) -> list[tuple[str, Any]]:
    """``(row name, value)`` of one model's metrics document on ``split``: FP and its kinds, FN and
    its split, TP and its box quality, then the threshold-free AP (``None`` where absent)."""
    micro = _get(doc, split, "micro")
    rows: list[tuple[str, Any]] = [("fp", _get(micro, "fp"))]
    rows += [(f"fp {k}", _get(micro, "fp_anatomy", k)) for k in FP_ROWS]
    rows += [("fn", _get(micro, "fn")), ("fn aimed", _get(micro, "fn_anatomy", "aimed")),
             ("fn missed", _get(micro, "fn_anatomy", "missed")), ("tp", _get(micro, "tp"))]
    rows += [(f"tp {k}", _get(micro, "tp_quality", k)) for k in QUALITY_ROWS]
    rows += [(k, _get(doc, "ap", split, k)) for k in ("map50", "map50_95")]
    return rows


def report_lines(docs: Mapping[str, tuple[str, Any]], sets: Mapping[str, Sequence[str]], *,
                 split: str = "test") -> dict[str, list[str]]:
    """Per detection set with at least two models (``sets``: name -> models, reference first), the
    Markdown lines of the table "what kind of error changed": one row per kind, the reference,
    each candidate and its difference. ``docs``: metrics documents by file key
    (``detection.<set>.<model>``, :func:`candor_eval.review.collect.read_metrics`)."""
    out: dict[str, list[str]] = {}
    for name, models in sets.items():
        if len(models) < 2:
            continue
        ref, cands = models[0], list(models[1:])
        values = {m: model_rows(docs.get(f"detection.{name}.{m}", ("", None))[1], split=split) for m in models}
        head = f"| {split} | {ref} (A) | " + " | ".join(f"{c} (B) | B - A" for c in cands) + " |"
        lines = [f"**What kind of error changed** (set `{name}`, split `{split}`, descriptive: totals, no test; "
                 "FP kinds and aimed/missed FNs at the served operating point, TP box quality (IoU, edge error "
                 "in model-input px), and COCO AP as a threshold-free companion: the gate and the headline stay "
                 "on the served operating point; docs/detector.md, \"What kind of error\")", "",
                 head, "|---|---:|" + "---:|---:|" * len(cands)]
        for i, (row, a) in enumerate(values[ref]):
            cells = [f"{_cell(values[c][i][1])} | {_diff(a, values[c][i][1])}" for c in cands]
            lines.append(f"| {row} | {_cell(a)} | " + " | ".join(cells) + " |")
        out[name] = lines + [""]
    return out


def frame_totals(tables: Mapping[str, list[dict[str, object]]], *, split: str = "test"
                 ) -> dict[tuple[str, str], dict[str, int]]:
    """``(set, model)`` -> the totals of ``fp``, ``fn`` and the error columns over the frames of
    ``split``, from parsed outcome tables (path -> rows, :func:`candor_eval.stats.outcomes.parse_tables`).
    A table without the error columns (written before they existed) gives only ``fp`` and ``fn``."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for path, rows in sorted(tables.items()):
        if not path.endswith("/detection-frames.csv"):
            continue
        dset = path.rsplit("/", 1)[0]
        for r in rows:
            if r["split"] != split:
                continue
            tot = out.setdefault((dset, str(r["model"])), {})
            for col in ("fp", "fn", *FRAME_ERROR_COLUMNS):
                if col in r:
                    tot[col] = tot.get(col, 0) + int_cell(r, col)
    return out


def render_totals(a: Mapping[tuple[str, str], Mapping[str, int]], b: Mapping[tuple[str, str], Mapping[str, int]],
                  *, split: str = "test") -> str:
    """A Markdown table (also plain-text readable) of :func:`frame_totals` of revisions A and B:
    one row per set, model and column, A, B and B - A (``n/a`` where a side lacks it)."""
    lines = [f"What kind of error changed (split {split}; totals over frames, descriptive, no test):", "",
             "| set | model | count | A | B | B - A |", "|---|---|---|---:|---:|---:|"]
    for key in sorted(set(a) | set(b)):
        ta, tb = a.get(key, {}), b.get(key, {})
        for col in ("fp", "fn", *FRAME_ERROR_COLUMNS):
            if col in ta or col in tb:
                va, vb = ta.get(col), tb.get(col)
                lines.append(f"| {key[0]} | {key[1]} | {col} | {_cell(va)} | {_cell(vb)} | {_diff(va, vb)} |")
    return "\n".join(lines) + "\n"
