"""CSV tables: one reader and one writer for every CSV the project reads or writes; and the
checked reading of any text or JSON file (:func:`read_text`, :func:`read_json`, :func:`parse_json`).

Text (:func:`read_text`): UTF-8, a leading UTF-8 byte-order mark dropped; another encoding is an
error naming the file and the first bad byte's offset; a folder, a missing or unreadable file
is an error naming it. JSON (:func:`parse_json`): the standard parse, where a syntax error,
nesting too deep for the parser, or a lone surrogate escape (``"\\ud800"``: text that cannot be
written back as UTF-8) is an error naming the file. Whole numbers in text fields are read by
:func:`ascii_int` (ASCII digits only: ``int()`` also takes ``"١٢"``, ``"1_0"`` and ``" 7 "``).

Reading (:func:`read_rows`): UTF-8 text (a UTF-8 byte-order mark is dropped, so it never
renames the first column; any other encoding is an error naming the file), a header row,
then data rows. ``columns`` must all be in the header (``exact=True``: the header must be
exactly ``columns``, in order); extra columns are kept unless ``exact``. A row with more
fields than the header, or fewer, is an error naming the file and row. Row numbers count
the header as row 1, as a spreadsheet shows them. Values are the raw strings; each reader
converts and validates its own fields.

Writing (:func:`csv_text`, :func:`write_csv`): ``csv.writer`` with ``\\n`` line endings and
minimal quoting (a field is quoted only when it holds a comma, a quote or a line break), so
equal rows give equal bytes on every machine.

Formula injection (OWASP, "CSV Injection"): a spreadsheet runs a cell that begins with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return as a formula. Every written cell that begins so
and is not a plain decimal number (``-0.5`` and ``+3`` stay numbers) is *neutralised*: written
with a leading ``'``, the spreadsheet's text marker (:func:`neutralise`). A cell that already
begins with ``'`` followed by one of those characters or another ``'`` gets one more ``'``, so
the rule is reversible: every reader here drops that one ``'`` (:func:`restore`), and a cell
reads back exactly as it was written.

Example:

>>> csv_text(["a", "b"], [(1, "x,y")])
'a,b\\n1,"x,y"\\n'
>>> parse_rows('a,b\\n1,2\\n', where="t.csv", columns=("a",)).rows
((2, {'a': '1', 'b': '2'}),)
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from pathlib import Path
from typing import Any

from candor_eval.common.atomic import atomic_open
from candor_eval.common.errors import InputError, Problem, fail

BOM = "\ufeff"
DECIMAL = re.compile(r"[0-9]+")
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
FORMULA_START = frozenset("=+-@\t\r")
CELL_START = "=+-@\t'"            # a cell beginning with one of these may be neutralised (\r: see _plain)
BATCH = 1024                      # rows written at once by _write_rows
# cell types csv.writer writes as str() does (a str as it is, an int and a bool by str(), a float by repr(),
# which is its str()): a batch of only these needs no conversion (_write_rows)
AS_STR = frozenset({str, int, bool, float})
ROWS = frozenset({tuple, list})   # rows that can be read twice (an iterator row is read once, when converted)
NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def neutralise(cell: str) -> str:
    """``cell`` as written to a CSV: a leading ``'`` when a spreadsheet would run it as a formula
    (see the module docstring), or when it already starts with the marker; else unchanged.

    >>> neutralise("=1+1"), neutralise("-0.5"), neutralise("@SUM(A1)"), neutralise("'=x"), neutralise("ok")
    ("'=1+1", '-0.5', "'@SUM(A1)", "''=x", 'ok')
    """
    if not cell:
        return cell
    if cell[0] in FORMULA_START and not NUMBER.fullmatch(cell):
        return "'" + cell
    if cell[0] == "'" and cell[1:2] and (cell[1] in FORMULA_START or cell[1] == "'"):
        return "'" + cell
    return cell


def restore(cell: str) -> str:
    """The inverse of :func:`neutralise`: ``restore(neutralise(s)) == s`` for every string ``s``.

    >>> restore("'=1+1"), restore("''=x"), restore("'90s"), restore("-0.5")
    ('=1+1', "'=x", "'90s", '-0.5')
    """
    if cell[:1] == "'" and cell[1:2] and (cell[1] in FORMULA_START or cell[1] == "'"):
        return cell[1:]
    return cell


def _write_rows(fh: Any, header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """``header`` then ``rows`` (cells by ``str``, :func:`neutralise`-d) to ``fh`` as CSV. A row
    with a carriage return in a cell is written by a writer whose line terminator holds ``\\r``,
    so that cell is quoted (``csv`` quotes only the terminator's characters), then ends in ``\\n``.

    Rows go in batches of :data:`BATCH`: a batch is written at once when its text shows no cell that
    :func:`neutralise` would change and no ``\\r`` (:func:`_plain`, the common case), else row by row
    (:func:`_write_row`); the bytes are the same either way, the first costs a fraction of the time.
    A batch of tuples and lists whose cells are all of the :data:`AS_STR` types goes to ``csv.writer`` as
    it is (it writes those as ``str`` does); any other batch is turned into text cell by cell first
    (``csv.writer`` writes ``None`` as an empty cell and a float subclass such as numpy's by ``repr``)."""
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(header)
    buf = io.StringIO()
    batch_writer = csv.writer(buf, lineterminator="\n")
    it = iter(rows)
    while batch := list(islice(it, BATCH)):
        if not (ROWS.issuperset(map(type, batch)) and AS_STR.issuperset(map(type, chain.from_iterable(batch)))):
            batch = [[v if isinstance(v, str) else str(v) for v in row] for row in batch]
        batch_writer.writerows(batch)
        text = buf.getvalue()
        buf.seek(0)
        buf.truncate()
        if _plain(text):
            fh.write(text)
        else:
            for row in batch:
                _write_row(fh, w, [v if isinstance(v, str) else str(v) for v in row])


def _write_row(fh: Any, w: Any, cells: list[str]) -> None:
    """One row of text ``cells`` to ``fh`` (by the writer ``w``), each :func:`neutralise`-d; a row with
    a ``\\r`` in a cell as :func:`_write_rows` says."""
    cells = [neutralise(c) for c in cells]
    if any("\r" in c for c in cells):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\r\n").writerow(cells)
        fh.write(buf.getvalue()[:-2] + "\n")
    else:
        w.writerow(cells)


def _plain(text: str) -> bool:
    """True when CSV ``text`` (as ``csv.writer`` writes it, ``\\n`` line ends) holds no ``\\r`` and no cell
    that begins with a character :func:`neutralise` looks at (:data:`FORMULA_START` or ``'``): a cell
    begins the text or a line, or follows a comma, maybe after its opening quote. False may be wrong
    (e.g. a quoted cell holding ``,-``), True never is. Only substring searches: no per-cell work.

    >>> _plain("a,b\\n1,x\\n"), _plain("a,-1\\n"), _plain('a,"x\\n=y"\\n'), _plain("'a\\n")
    (True, False, False, False)
    """
    if "\r" in text:
        return False
    for c in CELL_START:
        if c in text and (text.startswith(c) or text.startswith('"' + c) or f",{c}" in text or f"\n{c}" in text
                          or f',"{c}' in text or f'\n"{c}' in text):
            return False
    return True


@dataclass(frozen=True)
class Table:
    """A read CSV: its ``header`` and ``rows`` as ``(row number, {column: value})``."""

    where: str
    header: tuple[str, ...]
    rows: tuple[tuple[int, dict[str, str]], ...]


def read_text(path: str | os.PathLike[str], *, expected: str = "a UTF-8 text file",
              max_bytes: int | None = None) -> str:
    """A file's text as UTF-8 (BOM dropped); a missing file, a folder, an unreadable file or another
    encoding is an InputError naming the file (and the byte offset of the first bad byte); with
    ``max_bytes``, as :func:`read_bytes`."""
    return decode_text(read_bytes(path, expected=expected, max_bytes=max_bytes), where=str(path), expected=expected)


def read_bytes(path: str | os.PathLike[str], *, expected: str = "a file", max_bytes: int | None = None) -> bytes:
    """A file's bytes; a missing file, a folder or an unreadable file is an InputError naming it.

    With ``max_bytes`` the file must also be a regular file (a symlink is followed: one to
    ``/dev/zero``, a FIFO or a device is refused, never read) of at most ``max_bytes`` bytes, and no
    more than that is ever read (a file that grows while read is refused too)."""
    p = Path(path)
    try:
        if max_bytes is not None:
            return _read_capped(p, max_bytes, expected=expected)
        return p.read_bytes()
    except FileNotFoundError:
        raise fail(str(p), "file not found", expected=expected) from None
    except IsADirectoryError:
        raise fail(str(p), "is a folder", expected=expected) from None
    except OSError as err:
        raise fail(str(p), f"not readable ({err.strerror or type(err).__name__})", expected=expected) from None


def _read_capped(p: Path, max_bytes: int, *, expected: str) -> bytes:
    """:func:`read_bytes` with a cap (its docstring); OSErrors go to the caller."""
    import stat

    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))     # a FIFO would block an ordinary open
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(str(p))
        if not stat.S_ISREG(mode):
            raise fail(str(p), "not a regular file (a device, a FIFO or a socket, or a symlink to one)",
                       expected=expected)
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise fail(str(p), f"larger than {max_bytes} bytes", expected=expected)
    return raw


def decode_text(raw: bytes, *, where: str, expected: str = "UTF-8 text") -> str:
    """``raw`` as UTF-8 (BOM dropped); another encoding is an InputError naming ``where`` and the byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise fail(where, f"not UTF-8 text (byte {err.start}: {raw[err.start:err.start + 1]!r})",
                   expected=expected, hint="save the file as UTF-8") from None
    return text[1:] if text.startswith(BOM) else text


def ascii_int(text: str) -> int | None:
    """The value of ``text`` when it is ASCII decimal digits only, else None.

    >>> ascii_int("42"), ascii_int("\u0664\u0662"), ascii_int("+4"), ascii_int("4_2"), ascii_int("")
    (42, None, None, None, None)
    """
    return int(text) if isinstance(text, str) and DECIMAL.fullmatch(text) else None


def surrogate_free(doc: Any) -> bool:
    """No string in ``doc`` (keys included) holds a lone surrogate (walked without recursion)."""
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return True


def parse_json(text: str, *, where: str, expected: str = "JSON", hint: str | None = None) -> Any:
    """``json.loads(text)``; invalid JSON, nesting too deep or a lone surrogate is an InputError naming ``where``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise fail(where, f"not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})",
                   expected=expected, hint=hint) from None
    except RecursionError:
        raise fail(where, "not valid JSON (nested too deeply)", expected=expected, hint=hint) from None
    if SURROGATE_ESCAPE.search(text) and not surrogate_free(doc):
        raise fail(where, "not valid JSON (a lone surrogate escape \\ud800-\\udfff is no character)",
                   expected=expected, hint=hint)
    return doc


def read_json(path: str | os.PathLike[str], *, expected: str = "a JSON file", hint: str | None = None) -> Any:
    """A JSON file's content (read by :func:`read_text`, parsed by :func:`parse_json`)."""
    return parse_json(read_text(path, expected=expected), where=str(path), expected=expected, hint=hint)


def parse_rows(text: str, *, where: str, columns: Sequence[str] = (), exact: bool = False) -> Table:
    """Parse CSV ``text`` (see the module docstring); ``where`` names the file in errors."""
    text = text[1:] if text.startswith(BOM) else text
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = tuple(next(reader, ()))
        body = list(enumerate(reader, start=2))
    except csv.Error as err:               # e.g. a field longer than csv.field_size_limit()
        raise fail(f"{where}:row {reader.line_num}", f"not readable as CSV ({err})") from None
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise fail(f"{where}:row 1", "repeated column name(s) " + ", ".join(repeated),
                   expected="each column named once")
    if exact and header != tuple(columns):
        raise fail(f"{where}:row 1", "wrong header", expected=",".join(columns),
                   got=",".join(header) or "an empty file")
    missing = [c for c in columns if c not in header]
    if missing:
        raise fail(f"{where}:row 1", "missing column(s) " + ", ".join(missing),
                   expected="a header with " + ",".join(columns), got=",".join(header) or "an empty file")
    problems: list[Problem] = []
    rows = []
    for rowno, fields in body:
        if not fields:
            continue
        if len(fields) != len(header):
            what = "more fields than columns" if len(fields) > len(header) else "fewer fields than columns"
            problems.append(Problem(f"{where}:row {rowno}", what, expected=f"{len(header)} fields",
                                    got=str(len(fields))))
            continue
        rows.append((rowno, dict(zip(header, map(restore, fields)))))
    if problems:
        raise InputError(problems)
    return Table(where=where, header=header, rows=tuple(rows))


def read_rows(path: str | os.PathLike[str], *, columns: Sequence[str] = (), exact: bool = False,
              max_bytes: int | None = None) -> Table:
    """Read and parse a CSV file (see the module docstring); with ``max_bytes``, capped as :func:`read_bytes`."""
    expected = "a CSV file" if max_bytes is None else f"a CSV file of at most {max_bytes} bytes"
    return parse_rows(read_text(path, expected=expected, max_bytes=max_bytes), where=str(path), columns=columns,
                      exact=exact)


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text of ``header`` then ``rows`` (values by ``str``, :func:`neutralise`-d; minimal quoting;
    ``\\n`` line ends)."""
    buf = io.StringIO()
    _write_rows(buf, header, rows)
    return buf.getvalue()


def write_csv(path: str | os.PathLike[str], header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Write :func:`csv_text` to ``path`` atomically, row by row (``rows`` may be a generator)."""
    with atomic_open(path) as fh:
        _write_rows(fh, header, rows)
