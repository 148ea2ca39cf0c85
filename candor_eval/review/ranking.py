"""A sweep a person can read: the experiments of ``dvc exp show --json`` ranked by one headline metric.

Pure: no I/O. ``dvc exp show`` lists every param and metric column (dozens, hundreds of
characters wide, cut when piped); after a sweep the question is narrower: for the param
that was swept, which value gave the best value of one headline metric, and is that more than
luck. :func:`ranking` takes DVC's JSON (a list of baseline revisions, each with its experiments;
``data.params[<params file>].data`` and ``data.metrics["metrics/headline.json"].data`` nested as
in the files) and gives one :class:`Entry` per revision or experiment that has the sort key;
:func:`render` prints them in at most 120 columns: the name, the swept param, the sort key, then
as many of the candidate's other headline numbers as fit. Higher is better for the sort key
unless ``ascending`` (FP per frame, say); ties keep DVC's order. A metric that is absent prints
as ``-``. There is no test here: a paired comparison of two experiments is
``candor compare <exp-a> <exp-b>``, which the table's last line names.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from candor_eval.review.headline import dig

WIDTH = 120
HEADLINE = "metrics/headline.json"


@dataclass(frozen=True)
class Entry:
    """One revision or experiment: its ``name``, the swept param's value, the sort key's value and
    the other numbers of the same candidate block (by key)."""

    name: str
    param: Any
    key: Any
    others: dict[str, Any]


def _data(node: Mapping[str, Any], kind: str, file: str) -> Any:
    return dig(node, "data", kind, file, "data")


def _entries(doc: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """Every (name, node) of DVC's JSON: each baseline, then its experiments (their newest revision)."""
    out = []
    for base in doc if isinstance(doc, list) else []:
        if not isinstance(base, Mapping):
            continue
        out.append((str(base.get("name") or base.get("rev") or "?"), base))
        for exp in base.get("experiments") or []:
            revs = exp.get("revs") if isinstance(exp, Mapping) else None
            if revs and isinstance(revs[0], Mapping):
                out.append((str(revs[0].get("name") or revs[0].get("rev", "?")[:7]), revs[0]))
    return out


def ranking(doc: Any, *, param: str, sort_key: str, ascending: bool = False,
            params_file: str = "params.yaml") -> list[Entry]:
    """The entries of ``dvc exp show --json`` that have ``sort_key`` (a dotted key of the headline
    metrics, e.g. ``detection.<set>.<model>.f1``), best first; ``param`` a dotted key of the params
    file ``params_file`` (``thresholds.deer``), as DVC names the file."""
    key_path, block_path = sort_key.split("."), sort_key.split(".")[:-1]
    rows = []
    for name, node in _entries(doc):
        metrics = _data(node, "metrics", HEADLINE)
        value = dig(metrics, *key_path)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        block = dig(metrics, *block_path) or {}
        others = {k: v for k, v in block.items() if k != key_path[-1] and not isinstance(v, Mapping)}
        rows.append(Entry(name=name, param=dig(_data(node, "params", params_file), *param.split(".")),
                          key=value, others=others))
    return sorted(rows, key=lambda e: e.key if ascending else -e.key)


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def render(entries: Sequence[Entry], *, param: str, sort_key: str, width: int = WIDTH) -> str:
    """The ranking as a fixed-width table of at most ``width`` columns (module docstring)."""
    short = sort_key.split(".")[-1]
    cols = [("experiment", [e.name for e in entries]), (param, [_cell(e.param) for e in entries]),
            (f"{short} (sort)", [_cell(e.key) for e in entries])]
    others = list(dict.fromkeys(k for e in entries for k in e.others))
    def w(name: str, cells: list[str]) -> int:
        return max([len(name), *map(len, cells)])
    used = sum(w(n, c) + 2 for n, c in cols)
    for k in others:
        cells = [_cell(e.others.get(k)) for e in entries]
        if used + w(k, cells) + 2 > width:
            break
        cols.append((k, cells))
        used += w(k, cells) + 2
    widths = [w(n, c) for n, c in cols]
    lines = ["  ".join(n.ljust(x) for (n, _), x in zip(cols, widths)).rstrip()]
    lines.append("  ".join("-" * x for x in widths))
    for i in range(len(entries)):
        lines.append("  ".join(c[i].ljust(x) for (_, c), x in zip(cols, widths)).rstrip())
    lines.append(f"ranked by {sort_key}; a ranking is not a test: candor compare <A> <B> pairs two of them")
    return "\n".join(line[:width] for line in lines) + "\n"
