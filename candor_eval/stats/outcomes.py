"""The outcome-table contract (docs/CONVENTIONS.md): per-case tables every paired test reads.

Each table is a CSV under ``metrics/outcomes/`` (the lots tracks' at the root, each detection
set's in its own folder ``<set>/``: :func:`table_paths`) with the columns of its :class:`TableSpec`
(extra columns are allowed and ignored), one row per case (``key``), values typed by
``types``: ``int`` a non-negative integer (ASCII digits, below 2**53), ``bool`` ``1``/``0``, ``bool?`` ``1``/``0``/empty
(not applicable), ``outcome`` ``hit``/``abstain``/``wrong``; anything else is text.
:func:`parse_table` is the one validating reader (stats, gate and compare use it); every
problem it finds names the file, the row (the header is row 1) and the column.
:func:`outcome_text` is the one writer (every scorer uses it): the spec's columns, in order,
then the rows as given (each scorer sorts its rows by case).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

from candor_eval.common.counts import MAX_COUNT
from candor_eval.common.errors import InputError, Problem
from candor_eval.common.tables import ascii_int, csv_text, parse_rows, write_csv
from candor_eval.common.unique import repeat_of


@dataclass(frozen=True)
class TableSpec:
    """One outcome table of the contract in docs/CONVENTIONS.md."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]          # columns that identify a row (duplicates are an error)
    types: Mapping[str, str]      # column -> int | bool | bool? | outcome (others: str)
    track: str                    # identification | fields | valuation | detection
    # written after ``columns``; read and typed when the header has them (a table written before
    # they existed lacks them: its rows have no such key)
    optional: tuple[str, ...] = ()

    @property
    def written(self) -> tuple[str, ...]:
        """The columns the writer writes, in order."""
        return self.columns + self.optional


# what kind of error, per frame (docs/detector.md, "What kind of error"): the FPs by kind (they add
# up to fp), the FNs aimed at or missed (they add up to fn), the TPs at IoU >= 0.75
FRAME_ERROR_COLUMNS = ("fp_localisation", "fp_class_confusion", "fp_duplicate", "fp_background", "fp_both",
                       "fn_aimed", "fn_missed", "tp_strict")

TABLES: dict[str, TableSpec] = {s.name: s for s in (
    TableSpec("identification.csv", ("lot", "tier", "candidate", "run", "outcome", "count_exact"),
              ("lot", "candidate", "run"), {"run": "int", "outcome": "outcome", "count_exact": "bool?"},
              "identification"),
    TableSpec("fields.csv", ("case", "candidate", "position", "field", "hits", "total"),
              ("case", "candidate", "position"), {"position": "int", "hits": "int", "total": "int"}, "fields"),
    TableSpec("detection-frames.csv", ("frame", "split", "session", "zoom", "model", "tp", "fp", "fn"),
              ("frame", "model"), {c: "int" for c in ("tp", "fp", "fn", *FRAME_ERROR_COLUMNS)}, "detection",
              optional=FRAME_ERROR_COLUMNS),
    TableSpec("detection-labels.csv", ("frame", "split", "label", "class", "model", "found"),
              ("frame", "label", "model"), {"found": "bool"}, "detection"),
    TableSpec("valuation.csv", ("lot", "candidate", "estimate", "ratio", "in_band", "hedged",
                                "comps_precision", "comps_recall"),
              ("lot", "candidate"), {"in_band": "bool?"}, "valuation"),
)}

OUTCOMES = ("hit", "abstain", "wrong")
LOTS_TRACKS = ("identification", "fields", "valuation")      # the lots track's tables; the others are detection's


def table_paths(detection_sets: Iterable[str], *, lots: bool = True) -> list[str]:
    """Every outcome table's path relative to the outcomes root: the lots tracks' tables at the
    root (unless ``lots`` is false: a project without the lots track), the detection tables once
    per detection set, in the set's folder.

    >>> table_paths(["demo"])
    ['identification.csv', 'fields.csv', 'valuation.csv', 'demo/detection-frames.csv', 'demo/detection-labels.csv']
    >>> table_paths(["demo"], lots=False)
    ['demo/detection-frames.csv', 'demo/detection-labels.csv']
    """
    own = [n for n, spec in TABLES.items() if spec.track in LOTS_TRACKS] if lots else []
    return own + [f"{d}/{n}" for d in detection_sets for n, spec in TABLES.items() if spec.track == "detection"]


def spec_of(path: str) -> TableSpec:
    """The spec of the table at ``path`` (relative to the outcomes root): by its file name."""
    return TABLES[path.rsplit("/", 1)[-1]]


def _cells(name: str, rows: Iterable[Mapping[str, object] | tuple]) -> Iterator[tuple]:
    """The rows of outcome table ``name`` as tuples in column order, each checked against its columns."""
    spec = TABLES[name]
    n = len(spec.written)
    for row in rows:
        if type(row) is tuple and len(row) == n:        # the common case first: no Mapping check (an ABC's)
            yield row
            continue
        if isinstance(row, Mapping):
            if tuple(row) != spec.written:
                raise ValueError(f"{name}: row columns {tuple(row)} are not {spec.written}")
            row = tuple(row.values())
        elif len(row) != len(spec.written):
            raise ValueError(f"{name}: row {row!r} does not have the {len(spec.written)} columns {spec.written}")
        yield tuple(row)


def outcome_text(name: str, rows: Sequence[Mapping[str, object]] | Sequence[tuple]) -> str:
    """CSV text of outcome table ``name`` (a key of :data:`TABLES`): its columns, then ``rows``
    (mappings with exactly those keys, or tuples in column order), in the order given."""
    return csv_text(TABLES[name].written, _cells(name, rows))


def write_outcome(path: str | os.PathLike[str], name: str, rows: Iterable[Mapping[str, object] | tuple]) -> None:
    """Write :func:`outcome_text` to ``path`` atomically, row by row (``rows`` may be a generator)."""
    write_csv(path, TABLES[name].written, _cells(name, rows))


def _convert(kind: str, raw: str) -> object:
    if kind == "int":
        v = ascii_int(raw)
        if v is None or v >= MAX_COUNT:
            raise ValueError
        return v
    if kind in ("bool", "bool?"):
        if raw == "" and kind == "bool?":
            return None
        if raw not in ("0", "1"):
            raise ValueError
        return raw == "1"
    if kind == "outcome":
        if raw not in OUTCOMES:
            raise ValueError
        return raw
    return raw


_EXPECTED = {"int": "a non-negative integer", "bool": "1 or 0", "bool?": "1, 0 or empty",
             "outcome": "hit, abstain or wrong"}


def parse_table(spec: TableSpec, text: str, *, where: str) -> list[dict[str, object]]:
    """Parse and validate one outcome table's text (read by :func:`candor_eval.common.tables.parse_rows`).

    Extra columns are allowed (and ignored; the spec's ``optional`` ones are read when present); missing columns, rows
    with too many or too few
    fields, bad values and duplicate cases are errors, each naming ``where``, the row (the
    header is row 1) and the column (``<where>:row <n>.<column>``, as every CSV reader names them).
    """
    table = parse_rows(text, where=where, columns=spec.columns)
    columns = spec.columns + tuple(c for c in spec.optional if c in table.header)
    rows = _valid_rows(spec, columns, [raw for _, raw in table.rows])
    return rows if rows is not None else _checked_rows(spec, columns, table.rows, where=where)


class _Values(dict[str, object]):
    """One column's values by their text, each converted once (:func:`_convert`; a bad one raises
    ValueError, as does an empty case key)."""

    def __init__(self, kind: str, *, key: bool) -> None:
        super().__init__()
        self.kind, self.key = kind, key

    def __missing__(self, raw: str) -> object:
        if self.key and self.kind == "str" and raw == "":
            raise ValueError
        value = self[raw] = _convert(self.kind, raw)
        return value


def _valid_rows(spec: TableSpec, columns: tuple[str, ...],
                raws: list[dict[str, str]]) -> list[dict[str, object]] | None:
    """The typed rows of a table without a problem, column by column (each distinct text converted
    once); ``None`` when it has any (:func:`_checked_rows` then names each)."""
    values: dict[str, list[object]] = {}
    try:
        for col in columns:
            convert = _Values(spec.types.get(col, "str"), key=col in spec.key)
            values[col] = list(map(convert.__getitem__, map(itemgetter(col), raws)))
    except ValueError:
        return None
    keys = set(zip(*(map(str, values[c]) for c in spec.key)))
    if len(keys) != len(raws):
        return None
    rows = [dict(zip(columns, row)) for row in zip(*(values[c] for c in columns))]
    return None if spec.name == "fields.csv" and any(map(_hits_over_total, rows)) else rows


def _hits_over_total(row: Mapping[str, object]) -> bool:
    """A ``fields.csv`` row whose integer ``hits`` exceed its integer ``total`` (a problem)."""
    hits, total = row.get("hits"), row.get("total")
    return isinstance(hits, int) and isinstance(total, int) and hits > total


def _checked_rows(spec: TableSpec, columns: tuple[str, ...], table_rows: Iterable[tuple[int, dict[str, str]]], *,
                  where: str) -> list[dict[str, object]]:
    """The typed rows, row by row, every problem named (an InputError when there is any)."""
    problems: list[Problem] = []
    rows: list[dict[str, object]] = []
    seen: dict[tuple[str, ...], int] = {}
    for lineno, raw in table_rows:
        row: dict[str, object] = {}
        for col in columns:
            kind = spec.types.get(col, "str")
            try:
                row[col] = _convert(kind, raw[col])
            except ValueError:
                problems.append(Problem(f"{where}:row {lineno}.{col}", "bad value",
                                        expected=_EXPECTED[kind], got=repr(raw[col])))
            if kind == "str" and raw[col] == "" and col in spec.key:
                problems.append(Problem(f"{where}:row {lineno}.{col}", "empty case key"))
        if spec.name == "fields.csv" and _hits_over_total(row):
            problems.append(Problem(f"{where}:row {lineno}.hits", "hits exceed total",
                                    expected=f"<= {row['total']}", got=str(row["hits"])))
        key = tuple(str(row.get(c)) for c in spec.key)
        if (repeat := repeat_of(seen, key, where=f"{where}:row {lineno}", noun="case " + "/".join(key))) is not None:
            problems.append(repeat)
        seen.setdefault(key, lineno)
        rows.append(row)
    if problems:
        raise InputError(problems)
    return rows


def int_cell(row: Mapping[str, object], col: str) -> int:
    """The value of integer column ``col`` of a row read by :func:`parse_table` (the table spec typed it)."""
    value = row[col]
    if not isinstance(value, int):
        raise TypeError(f"column {col!r} holds {value!r}, not an integer: rows come from parse_table")
    return value


def parse_tables(texts: Mapping[str, str | None], *, where: Callable[[str], str]) -> dict[str, list[dict[str, object]]]:
    """Parse the tables whose text is given (table path -> text, ``None`` when absent); absent
    tables are left out. Every problem of every table is raised at once (one InputError), each
    located by ``where(name)``."""
    tables: dict[str, list[dict[str, object]]] = {}
    problems: list[Problem] = []
    for name, text in texts.items():
        if text is None:
            continue
        try:
            tables[name] = parse_table(spec_of(name), text, where=where(name))
        except InputError as err:
            problems.extend(err.problems)
    if problems:
        raise InputError(problems, hint="the outcome-table contract is in docs/CONVENTIONS.md")
    return tables
