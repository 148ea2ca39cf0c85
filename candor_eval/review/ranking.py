"""A sweep a person can read: the experiments of ``dvc exp show --json`` ranked by one headline metric.

Pure: no I/O. ``dvc exp show`` lists every param and metric column (dozens, hundreds of
characters wide, cut when piped); after a sweep the question is narrower: for the param
that was swept, which value gave the best value of one headline metric, and is that more than
luck. :func:`ranking` takes DVC's JSON (a list of baseline revisions, each with its experiments;
``data.params[<params file>].data`` and ``data.metrics["metrics/headline.json"].data`` nested as
in the files) and gives one :class:`Entry` per revision or experiment that has the sort key;
:func:`render` prints them in at most 100 columns: the name, the swept param, the sort key, then
as many of the candidate's other headline numbers as fit.

An experiment that did not finish (DVC's ``executor.state`` ``failed``, ``queued`` or ``running``, or
an ``error`` on its revision) has no numbers of its own: DVC reports the metrics of the commit it
started from (the workspace's), so the ranking lists it after every finished one, marked with its
state (``FAILED``), its param value and ``-`` for every number. A detection sweep ranks on the
headline's ``dev`` figures only (:func:`tuning_problem`): thresholds are never tuned on the test
split. Higher is better for the sort key
unless ``ascending`` (FP per frame, say); ties keep DVC's order. A metric that is absent prints
as ``-``. The reader is total: a node of the wrong type anywhere DVC's shape has a list, a mapping or
a name (``experiments`` a number, ``rev`` a number) is an InputError naming its path, and so is a
params file no revision has (``--params`` naming a file DVC did not list). There is no test here: a
paired comparison of two experiments is ``candor compare <exp-a> <exp-b>``, which the table's last line names.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from candor_eval.common.errors import fail
from candor_eval.review.headline import dig

WIDTH = 100
HEADLINE = "metrics/headline.json"
UNFINISHED = ("failed", "queued", "running")      # DVC's executor states of an experiment without results


@dataclass(frozen=True)
class Entry:
    """One revision or experiment: its ``name``, the swept param's value, the sort key's value and
    the other numbers of the same candidate block (by key); ``state`` is None for a finished one, else
    DVC's state of an unfinished experiment (``failed``, ``queued``, ``running``: no numbers)."""

    name: str
    param: Any
    key: Any
    others: dict[str, Any]
    state: str | None = None


def _typed(value: Any, kinds: type | tuple[type, ...], where: str, expected: str) -> Any:
    """``value`` when it is ``None`` or of ``kinds``, else an InputError naming ``where``."""
    if value is not None and not isinstance(value, kinds):
        raise fail(where, "wrong type", expected=expected, got=type(value).__name__)
    return value


def _name(node: Mapping[str, Any], where: str) -> str | None:
    """The node's ``name``, else its ``rev`` (text or null each), else None."""
    name = _typed(node.get("name"), str, f"{where}.name", "text or null")
    rev = _typed(node.get("rev"), str, f"{where}.rev", "text or null")
    return name or rev


def _data(node: Mapping[str, Any], kind: str, file: str, where: str) -> Any:
    """``node.data.<kind>.<file>.data`` (None where absent), each level checked to be a mapping."""
    data = _typed(node.get("data"), Mapping, f"{where}.data", "a mapping or null")
    files = _typed((data or {}).get(kind), Mapping, f"{where}.data.{kind}", "a mapping or null")
    entry = _typed((files or {}).get(file), Mapping, f"{where}.data.{kind}.{file}", "a mapping")
    return _typed((entry or {}).get("data"), Mapping, f"{where}.data.{kind}.{file}.data", "a mapping or null")


def _state(exp: Mapping[str, Any], newest: Mapping[str, Any], where: str) -> str | None:
    """None for a finished experiment, else its state: DVC's ``executor.state`` of an unfinished one,
    ``failed`` for a revision with an ``error``."""
    executor = _typed(exp.get("executor"), Mapping, f"{where}.executor", "a mapping or null") or {}
    state = _typed(executor.get("state"), str, f"{where}.executor.state", "text or null")
    if state in UNFINISHED:
        return state
    return "failed" if newest.get("error") else None


def _entries(doc: Any, where: str) -> list[tuple[str, Mapping[str, Any], str, str | None]]:
    """Every (name, node, path, state) of DVC's JSON: each baseline, then its experiments (their newest
    revision, :func:`_state`); a node of the wrong type is an InputError naming its path in ``where``."""
    if not isinstance(doc, list):
        raise fail(where, "wrong type", expected="a list of revisions", got=type(doc).__name__)
    out = []
    for i, base in enumerate(doc):
        at = f"{where}[{i}]"
        if not isinstance(base, Mapping):
            raise fail(at, "wrong type", expected="a mapping (one revision)", got=type(base).__name__)
        out.append((_name(base, at) or "?", base, at, "failed" if base.get("error") else None))
        for j, exp in enumerate(_typed(base.get("experiments"), list, f"{at}.experiments", "a list or null") or []):
            at_exp = f"{at}.experiments[{j}]"
            if not isinstance(exp, Mapping):
                raise fail(at_exp, "wrong type", expected="a mapping (one experiment)", got=type(exp).__name__)
            revs = _typed(exp.get("revs"), list, f"{at_exp}.revs", "a list or null")
            if revs:
                if not isinstance(revs[0], Mapping):
                    raise fail(f"{at_exp}.revs[0]", "wrong type", expected="a mapping", got=type(revs[0]).__name__)
                newest = revs[0]
                name = _typed(newest.get("name"), str, f"{at_exp}.revs[0].name", "text or null")
                rev = _typed(newest.get("rev"), str, f"{at_exp}.revs[0].rev", "text or null")
                out.append((name or (rev or "?")[:7], newest, f"{at_exp}.revs[0]", _state(exp, newest, at_exp)))
    return out


def tuning_problem(sort_key: str) -> str | None:
    """Why a detection sort key may not rank a sweep (``None``: it may). A sweep tunes a served
    parameter, and thresholds are tuned on the ``dev`` split only, never on the final-test sessions,
    which give the verdict alone: a detection key must be one of the headline's ``dev`` figures,
    ``detection.<set>.<model>.dev.<metric>``. Other tracks' keys are not split.

    >>> tuning_problem("detection.detector.demo-v2.dev.f1") is None, tuning_problem("lots.prompt-a.hit_rate") is None
    (True, True)
    >>> tuning_problem("detection.detector.demo-v2.f1")
    'detection.detector.demo-v2.f1 is a test-split figure: rank on detection.detector.demo-v2.dev.f1'
    """
    parts = sort_key.split(".")
    if parts[0] != "detection" or (len(parts) == 5 and parts[3] == "dev"):
        return None
    dev = ".".join([*parts[:3], "dev", parts[-1]]) if len(parts) >= 4 else "detection.<set>.<model>.dev.<metric>"
    return f"{sort_key} is a test-split figure: rank on {dev}"


def ranking(doc: Any, *, param: str, sort_key: str, ascending: bool = False,
            params_file: str = "params.yaml", where: str = "dvc exp show --json") -> list[Entry]:
    """The entries of ``dvc exp show --json`` that have ``sort_key`` (a dotted key of the headline
    metrics, e.g. ``detection.<set>.<model>.f1``), best first; ``param`` a dotted key of the params
    file ``params_file`` (``thresholds.deer``), as DVC names the file. ``where`` names the JSON in
    errors (module docstring: a wrong type, or a ``params_file`` no revision lists)."""
    key_path, block_path = sort_key.split("."), sort_key.split(".")[:-1]
    rows = []
    entries = _entries(doc, where)
    listed: set[str] = set()
    unfinished = []
    for name, node, at, state in entries:
        metrics = _data(node, "metrics", HEADLINE, at)
        params = _data(node, "params", params_file, at)
        listed |= set(dig(node, "data", "params") or {})
        if state is not None:
            unfinished.append(Entry(name=name, param=dig(params, *param.split(".")), key=None, others={}, state=state))
            continue
        value = dig(metrics, *key_path)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        block = dig(metrics, *block_path)
        others = {k: v for k, v in block.items() if k != key_path[-1] and not isinstance(v, Mapping)} \
            if isinstance(block, Mapping) else {}
        rows.append(Entry(name=name, param=dig(params, *param.split(".")), key=value, others=others))
    if entries and listed and params_file not in listed:
        raise fail(where, f"no revision lists the params file {params_file!r}",
                   expected="one of: " + ", ".join(sorted(map(str, listed))), hint="--params names it as DVC does")
    return sorted(rows, key=lambda e: e.key if ascending else -e.key) + unfinished


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
            (f"{short} (sort)", [_cell(e.key) if e.state is None else e.state.upper() for e in entries])]
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
    if failed := [e.name for e in entries if e.state == "failed"]:
        lines.append(f"FAILED: {', '.join(failed)}: no results of their own (dvc queue logs <name>)")
    on = " (dev split: tuned on dev, never on test)" if sort_key.split(".")[3:4] == ["dev"] else ""
    footer = [f"ranked by {sort_key}{on}", "a ranking is not a test: candor compare <A> <B> pairs two of them"]
    lines += ["; ".join(footer)] if len("; ".join(footer)) <= width else footer
    return "\n".join(line[:width] for line in lines) + "\n"
