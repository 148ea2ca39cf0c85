"""The raw-detections file (``build/detections/<model>.jsonl``): written by the detect stage,
read by scoring, re-inference and the demo tools; this module is its one home. Its lines are
made by :func:`file_lines` from :class:`FrameBoxes`, read back by :func:`read_raw`; the same
values without a file are :func:`collect`'s.

JSON Lines, deterministic bytes:

- line 1, a header: ``format`` (``candor-detections/1``), ``model``, ``onnx_sha256``,
  ``classes``, ``input_size`` ``[H, W]``, ``layout``, ``preprocess`` (the card's, in full:
  scoring refuses detections made with another), ``floor``, ``precision`` (``box_px`` 0.001,
  ``score`` 0.00001);
- one line per frame, in frame order: ``frame``, ``width``, ``height``, ``boxes``: a list of
  ``[x1, y1, x2, y2, score, class_index]`` in original-image pixels; coordinates rounded to
  1e-3 px, scores to 1e-5, rows sorted by class, score descending, then coordinates; a box is
  kept when its *rounded* score is >= floor. Lines are the bytes of
  ``json.dumps(..., separators=(",", ":"))``.

Read back as checked input (a hand edit is refused, never trusted): the header's fields by
:func:`check_header`; each box row six JSON numbers (never true, false or a string), an integer
class index in range, a score in [floor, 1], ``x1 <= x2`` and ``y1 <= y2``; an error names the
file, line, frame, row and field.

Rounding does not make inference bit-stable across CPUs (see ``docs/detector.md``,
"Canonical inference outputs"): it makes the file's bytes a function of the rounded values.

Two ways to read the box rows, one result. Parsing a frame line with ``json`` makes a Python
object per number and per row (about 30 MB for a chunk of 131k boxes), and the cost of a chunk so
read grew the longer the process ran (0.15 s a chunk at the start of a 10M-box file, about 0.45 s
at its end), so the per-frame cost of scoring was not flat in the set's size. A line of exactly the
written shape (:data:`WRITTEN_LINE`: the keys in order, no whitespace, JSON numbers; the shape
:func:`frame_json` writes) is therefore read in bulk: its rows stay text, and a chunk's numbers are
parsed at once by numpy (:func:`_bulk_rows`; correctly rounded, like ``float()`` and ``json``).
The rule: a chunk is parsed in bulk when every one of its lines matches :data:`WRITTEN_LINE` and
its rows pass the row checks (:func:`_row_checks`); any other chunk (a line written otherwise,
valid or not, or a row that fails a check) is read line by line by ``json``, which gives the
arrays of a valid file and names the first error of a damaged one, as it always has.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec
import numpy as np

from candor_eval.common.errors import fail

if TYPE_CHECKING:  # onnxruntime is not imported by the readers of this file
    from candor_eval.detection.inference.onnx_model import LoadedModel

FORMAT = "candor-detections/1"
BOX_DECIMALS = 3
SCORE_DECIMALS = 5
FRAME_PREFIX = re.compile(r'^\{"frame":"((?:[^"\\]|\\.)*)"')


def rounded_candidates(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, *,
                       floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes ``(K, 4)``, scores ``(K,)`` rounded (float64) and classes ``(K,)`` (int64), filtered
    and sorted as documented (pure); :func:`candidate_rows` makes them the output's rows.

    ``+ 0.0`` turns ``-0.0`` into ``0.0`` so the text never depends on a sign bit.
    """
    b = np.round(np.asarray(boxes, dtype=np.float64).reshape(-1, 4), BOX_DECIMALS) + 0.0
    s = np.round(np.asarray(scores, dtype=np.float64), SCORE_DECIMALS) + 0.0
    c = np.asarray(classes, dtype=np.int64)
    keep = s >= floor
    b, s, c = b[keep], s[keep], c[keep]
    order = np.lexsort((b[:, 3], b[:, 2], b[:, 1], b[:, 0], -s, c))
    return b[order], s[order], c[order]


def candidate_rows(b: np.ndarray, s: np.ndarray, c: np.ndarray) -> list[list[float | int]]:
    """The columns of :func:`rounded_candidates` as rows ``[x1, y1, x2, y2, score, class]``."""
    return [[*row, k] for row, k in zip(np.column_stack([b, s]).tolist(), c.tolist())]


_ENCODER = msgspec.json.Encoder()


def json_line(obj: dict, *, floats: np.ndarray) -> str:
    """``json.dumps(obj, separators=(",", ":"))``, byte for byte, faster when it can be.

    ``floats`` are all the float values in ``obj``. msgspec writes the same shortest
    round-trip digits as Python's ``repr``, but its exponent form differs (``1e-5`` and
    ``1e16`` where Python writes ``1e-05`` and ``1e+16``) and it starts at other magnitudes
    (Python: below 1e-4, msgspec: below 1e-5). So msgspec is used only where both write
    plain decimals: every float is 0 or has ``1e-4 <= |x| < 1e16`` (which also excludes
    NaN and infinities), and every string is printable ASCII (``json.dumps`` escapes
    non-ASCII); otherwise ``json.dumps`` writes the line.
    """
    a = np.abs(np.asarray(floats, dtype=np.float64))
    plain = bool(np.all((a == 0) | ((a >= 1e-4) & (a < 1e16))))
    strings = all(v.isascii() and v.isprintable() for v in obj.values() if isinstance(v, str))
    if plain and strings:
        return _ENCODER.encode(obj).decode("ascii")
    return json.dumps(obj, separators=(",", ":"))


def frame_json(frame: str, width: int, height: int, b: np.ndarray, s: np.ndarray, c: np.ndarray) -> str:
    """One frame's output line from its rounded, sorted candidate columns (:func:`rounded_candidates`)."""
    return json_line({"frame": frame, "width": width, "height": height, "boxes": candidate_rows(b, s, c)},
                     floats=np.concatenate([b.ravel(), s]))


@dataclass(frozen=True)
class FrameBoxes:
    """One frame line's values: the frame id, its size in pixels and its candidates as
    :func:`rounded_candidates` returns them (``boxes`` (K, 4) float64 xyxy original px,
    ``scores`` (K,) float64, ``classes`` (K,) int64; rounded, filtered at the floor, sorted)."""

    frame: str
    width: int
    height: int
    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray

    def line(self) -> str:
        """The frame's line of the file (:func:`frame_json`)."""
        return frame_json(self.frame, self.width, self.height, self.boxes, self.scores, self.classes)


def header(model: LoadedModel, *, floor: float) -> dict:
    """The file's first line (as a dict) for ``model`` at ``floor``."""
    return {"format": FORMAT, "model": model.name, "onnx_sha256": model.sha256, "classes": list(model.classes),
            "input_size": [model.input_h, model.input_w], "layout": model.layout,
            "preprocess": model.card.preprocess.model_dump(), "floor": floor,
            "precision": {"box_px": 10.0 ** -BOX_DECIMALS, "score": 10.0 ** -SCORE_DECIMALS}}


@dataclass(frozen=True)
class RawDetections:
    """The detect stage's file: header and aligned arrays (frame index into ``frames``)."""

    header: dict
    frames: tuple[str, ...]
    sizes: dict[str, tuple[int, int]]
    frame: np.ndarray
    cls: np.ndarray
    boxes: np.ndarray
    score: np.ndarray


def file_lines(header: dict, frames: Iterable[FrameBoxes]) -> Iterator[str]:
    """The file's lines, without ``\\n``: the header, then one line per frame (lazy: streams
    ``frames``)."""
    yield json.dumps(header, separators=(",", ":"))
    for boxes in frames:
        yield boxes.line()


def collect(header: dict, frames: Iterable[FrameBoxes]) -> RawDetections:
    """The :class:`RawDetections` of a header and its frame lines, without the file: equal, array
    for array, to :func:`read_raw` of the file those lines make (JSON floats round-trip exactly).

    >>> one = FrameBoxes("a", 4, 3, np.array([[0.0, 0.0, 1.0, 1.0]]), np.array([0.5]), np.array([2]))
    >>> none = FrameBoxes("b", 4, 3, np.zeros((0, 4)), np.zeros(0), np.zeros(0, dtype=np.int64))
    >>> raw = collect({"format": FORMAT}, [one, none])
    >>> raw.frames, raw.sizes["b"], raw.frame.tolist(), raw.cls.tolist(), raw.score.tolist()
    (('a', 'b'), (4, 3), [0], [2], [0.5])
    """
    kept = list(frames)
    counts = [len(f.scores) for f in kept]
    return RawDetections(
        header=header, frames=tuple(f.frame for f in kept), sizes={f.frame: (f.width, f.height) for f in kept},
        frame=np.repeat(np.arange(len(kept), dtype=np.int64), counts),
        cls=np.concatenate([np.zeros(0, dtype=np.int64), *(f.classes for f in kept)]).astype(np.int64),
        boxes=np.concatenate([np.zeros((0, 4)), *(f.boxes for f in kept)]).astype(np.float64),
        score=np.concatenate([np.zeros(0), *(f.scores for f in kept)]).astype(np.float64))


CHUNK_BOXES = 1 << 17   # raw boxes parsed at once by :func:`iter_chunks` (whole frames; ~6 MB of text)
LINE_HEAD = re.compile(r'^\{"frame":"((?:[^"\\]|\\.)*)","width":([0-9]+),"height":([0-9]+),')
BAD_LINE = '{"frame", "width", "height", "boxes": [[x1, y1, x2, y2, score, class]]}'
# A frame line as :func:`frame_json` writes it, whole (the only lines read in bulk, see the module's docstring):
# the keys in order, no whitespace, a JSON string (as json's strict mode reads it), width and height of at most
# 18 digits, rows of six JSON numbers. Left to json, so that both paths give equal values: an integer ``-0``
# (json reads the integer 0, numpy -0.0) and an integer part of over 16 digits (json refuses an integer of over
# 4,300 digits, numpy reads it); the detect stage writes neither.
_STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+"'
_NUMBER = r'(?!-0(?![.eE]))-?(?:[1-9][0-9]{0,15}+|0)(?:\.[0-9]++)?+(?:[eE][+-]?[0-9]++)?+'


def _line_pattern(number: str) -> str:
    """The pattern of a frame line whose box rows are six numbers matching ``number`` each; its groups:
    width, height and the rows' text."""
    row = r"\[" + ",".join([number] * 6) + r"\]"
    return (r'\{"frame":' + _STRING + r',"width":(0|[1-9][0-9]{0,17}),"height":(0|[1-9][0-9]{0,17}),'
            r'"boxes":\[((?:' + row + r'(?:,' + row + r')*+)?)\]\}\n?')


WRITTEN_LINE = _line_pattern(_NUMBER)


@functools.cache
def written_line() -> re.Pattern[str]:
    """:data:`WRITTEN_LINE` compiled, on first use (a few ms that a process not reading the file does not pay)."""
    return re.compile(WRITTEN_LINE)


# :data:`WRITTEN_LINE` for the numbers the detect stage writes (no exponent: scores at or above the floor and
# coordinates to 1e-3 px are written without one) and without its integer ``-0`` guard: a third less work a
# line. A line it matches matches WRITTEN_LINE, with the same groups, unless its rows hold an integer -0,
# which (no exponent there) is the text ``-0,`` or ``-0]``: such a line, and any line it does not match, is
# left to WRITTEN_LINE (:func:`_written_match`).
PLAIN_LINE = _line_pattern(r'-?+(?:[1-9][0-9]{0,15}+|0)(?:\.[0-9]++)?+')


@functools.cache
def plain_line() -> re.Pattern[str]:
    """:data:`PLAIN_LINE` compiled, on first use."""
    return re.compile(PLAIN_LINE)


def _written_match(line: str) -> re.Match[str] | None:
    """``written_line().fullmatch(line)``, tried first by the cheaper :data:`PLAIN_LINE` (same groups)."""
    m = plain_line().fullmatch(line)
    if m is not None and "-0," not in (rows := m.group(3)) and "-0]" not in rows:
        return m
    return written_line().fullmatch(line)


def _open(path: Path) -> tuple[dict, IO[str]]:
    """The file's checked header, and the file open at its first frame line."""
    try:
        fh = open(path, encoding="utf-8")  # noqa: SIM115 - read only, handed to the caller, who closes it
    except FileNotFoundError:
        raise fail(str(path), "detections not found", hint="run inference first: dvc repro detect") from None
    try:
        header = json.loads(fh.readline())
    except (json.JSONDecodeError, UnicodeDecodeError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        fh.close()
        raise fail(f"{path}:1", "not a candor detections file", expected=f"a header with format {FORMAT}")
    try:
        check_header(path, header)
    except Exception:
        fh.close()
        raise
    return header, fh


def _frame_id(line: str) -> str | None:
    """The frame id a frame line starts with (``{"frame":"<id>"``, the id a JSON string), or None when
    the line does not start so or the id is not a valid JSON string (a bad escape, a control character)."""
    head = FRAME_PREFIX.match(line)
    if head is None:
        return None
    try:
        return json.loads(f'"{head.group(1)}"')
    except json.JSONDecodeError:
        return None


def _frame_lines(path: Path, fh: IO[str], *, keep_frames: set[str] | None) -> Iterator[tuple[str, int, str]]:
    """The frame lines of ``fh`` (:func:`_open`) as ``(frame id, line number, line)``, then closes it;
    lines of frames not in ``keep_frames`` are skipped after reading only the frame id of their fixed prefix."""
    with fh:
        try:
            for lineno, line in enumerate(fh, start=2):
                frame = _frame_id(line)
                if frame is None:
                    raise fail(f"{path}:{lineno}", "bad frame line", expected=BAD_LINE)
                if keep_frames is None or frame in keep_frames:
                    yield frame, lineno, line
        except UnicodeDecodeError as err:
            raise fail(str(path), f"not UTF-8 text ({err.reason} at byte {err.start} of a read block)") from None


def _parse_line(line: str, *, where: str) -> tuple[str, tuple[int, int], list]:
    """A frame line's id, (width, height) and box rows."""
    try:
        rec = json.loads(line)
        return rec["frame"], (int(rec["width"]), int(rec["height"])), list(rec["boxes"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise fail(where, "bad frame line", expected=BAD_LINE) from None


def read_index(path: Path, *, keep_frames: set[str] | None = None) -> RawDetections:
    """The header, frames and sizes of a detections file, without its boxes (the arrays are empty):
    what the ground truth and the scene are built from before the boxes are streamed
    (:func:`iter_chunks`). A frame listed twice is an input error naming its line."""
    header, fh = _open(path)
    sizes: dict[str, tuple[int, int]] = {}
    frames: list[str] = []
    for frame, lineno, line in _frame_lines(path, fh, keep_frames=keep_frames):
        where = f"{path}:{lineno}"
        head = LINE_HEAD.match(line)
        size = (int(head.group(2)), int(head.group(3))) if head else _parse_line(line, where=where)[1]
        if frame in sizes:
            raise fail(where, "frame listed twice", got=frame, hint="the detections are damaged: dvc repro detect")
        sizes[frame] = size
        frames.append(frame)
    empty = np.zeros(0, dtype=np.int64)
    return RawDetections(header=header, frames=tuple(frames), sizes=sizes, frame=empty, cls=empty,
                         boxes=np.zeros((0, 4)), score=np.zeros(0))


def _row_where(path: Path, frames: list[str], lines: list[int], counts: list[int], row: int, field: str) -> str:
    """Where box row ``row`` of a chunk is (``counts`` rows per frame, frame ``i`` on line ``lines[i]``):
    ``<file>:<line>: frame <id>, boxes[<k>] <field>``."""
    ends = np.cumsum(counts)
    i = int(np.searchsorted(ends, row, side="right"))
    k = row - (int(ends[i - 1]) if i else 0)
    return f"{path}:{lines[i]}: frame {frames[i]}, boxes[{k}]" + (f" {field}" if field else "")


def check_header(path: Path, header: dict) -> None:
    """The header's fields have their documented types: ``model`` and ``onnx_sha256`` strings,
    ``classes`` a list of strings, ``input_size`` ``[H, W]`` positive integers, ``floor`` a number
    in [0, 1]; else an input error naming the file, line 1 and the field."""
    def ok(field: str) -> bool:
        v = header.get(field)
        if field in ("model", "onnx_sha256"):
            return isinstance(v, str) and bool(v)
        if field == "classes":
            return isinstance(v, list) and all(isinstance(c, str) for c in v)
        if field == "input_size":
            return (isinstance(v, list) and len(v) == 2
                    and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v))
        return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
    expected = {"model": "a name", "onnx_sha256": "a hex digest", "classes": "a list of class names",
                "input_size": "[H, W] positive integers", "floor": "a number in [0, 1]"}
    bad = next((f for f in expected if not ok(f)), None)
    if bad is not None:
        raise fail(f"{path}:1: {bad}", "bad header field", expected=expected[bad], got=header.get(bad),
                   hint="the detections are damaged: dvc repro detect")


def _row_checks(arr: np.ndarray, header: dict) -> Iterator[tuple[np.ndarray, str, str, str]]:
    """The checks of box rows ``arr`` (n, 6), in order, each as ``(mask of the rows that fail it, field,
    what is wrong, what was expected)``: six finite numbers (field ``""``), an integer class index in
    range of the header's classes, a score in [floor, 1], ``x1 <= x2`` and ``y1 <= y2``. Lazy: a
    check's mask is computed only when the ones before it passed."""
    yield ~np.isfinite(arr).all(axis=1), "", "a box row holds NaN or infinity", "finite numbers"
    n_cls, floor = len(header["classes"]), float(header["floor"])
    yield arr[:, 5] != np.floor(arr[:, 5]), "class", "class index not an integer", "an integer"
    yield ((arr[:, 5] < 0) | (arr[:, 5] >= n_cls), "class", "class index out of range of the header's classes",
           f"0..{n_cls - 1}")
    yield ((arr[:, 4] < floor) | (arr[:, 4] > 1), "score", "score outside [floor, 1]",
           f"{floor} <= score <= 1 (the header's floor)")
    yield arr[:, 0] > arr[:, 2], "x1", "x1 > x2", "x1 <= x2"
    yield arr[:, 1] > arr[:, 3], "y1", "y1 > y2", "y1 <= y2"


def _first_failure(arr: np.ndarray, header: dict) -> tuple[int, str, str, str] | None:
    """The first failed check of :func:`_row_checks` as ``(first failing row, field, what, expected)``,
    or None when every row passes them all."""
    for mask, field, what, expected in _row_checks(arr, header):
        if mask.any():
            return int(np.argmax(mask)), field, what, expected
    return None


def _arrays(header: dict, frames: list[str], sizes: dict[str, tuple[int, int]], arr: np.ndarray,
            counts: list[int]) -> RawDetections:
    """A chunk's :class:`RawDetections` from its checked rows ``arr`` (n, 6), ``counts`` rows per frame."""
    return RawDetections(header=header, frames=tuple(frames), sizes=sizes,
                         frame=np.repeat(np.arange(len(frames), dtype=np.int64), counts),
                         cls=arr[:, 5].astype(np.int64), boxes=arr[:, :4], score=arr[:, 4])


def _float64(v: object) -> bool:
    """``v`` (a value ``json`` parsed) is a number a float64 holds: a float, or an int (not a bool) that
    rounds to a finite double (``float(v)`` does not overflow: below about 1.8e308 in magnitude)."""
    if isinstance(v, float):
        return True
    if not isinstance(v, int) or isinstance(v, bool):
        return False
    try:
        float(v)
    except OverflowError:
        return False
    return True


def _chunk(path: Path, header: dict, frames: list[str], sizes: dict[str, tuple[int, int]], rows: list[list],
           counts: list[int], lines: list[int]) -> RawDetections:
    """One chunk's arrays from its frames' box rows as ``json`` parsed them (``counts`` rows per frame,
    frame ``i`` on line ``lines[i]``), checked: six numbers per row, then :func:`_row_checks`; a bad
    row is an input error naming the file, line, frame, row and field."""
    def where(row: int, field: str) -> str:
        return _row_where(path, frames, lines, counts, row, field)

    bad = next((r for r, row in enumerate(rows)
                if not (isinstance(row, list) and len(row) == 6 and all(map(_float64, row)))), None)
    if bad is not None:      # checked value by value: numpy would read true as 1.0 and "0.5" as 0.5
        raise fail(where(bad, ""), "bad box row", expected="[x1, y1, x2, y2, score, class] numbers",
                   got=rows[bad])
    arr = np.array(rows, dtype=np.float64).reshape(-1, 6) if rows else np.zeros((0, 6))
    failure = _first_failure(arr, header)
    if failure is not None:
        bad, field, what, expected = failure
        if not field:
            raise fail(where(bad, ""), what, expected=expected, got=rows[bad])
        raise fail(where(bad, f"({field})"), what, expected=expected, got=rows[bad],
                   hint="the detections are damaged or hand-edited: dvc repro detect")
    return _arrays(header, frames, sizes, arr, counts)


def _written_rows(line: str) -> tuple[tuple[int, int], str, int] | None:
    """For a line that matches :data:`WRITTEN_LINE`: its (width, height), the text of its box rows
    (``[x1,y1,x2,y2,score,class],...``, empty for a frame without boxes) and their count; else None."""
    m = _written_match(line)
    if m is None:
        return None
    rows = m.group(3)
    return (int(m.group(1)), int(m.group(2))), rows, rows.count("[")


def _bulk_rows(texts: list[str], n: int) -> np.ndarray:
    """The (n, 6) float64 array of the box rows of written lines (:func:`_written_rows`' texts, ``n``
    rows in all), parsed at once: brackets become separators and numpy reads the numbers, each
    correctly rounded to the nearest double (the rounding of ``float()`` and ``json``)."""
    if n == 0:
        return np.zeros((0, 6))
    text = ",".join(t for t in texts if t).replace("[", "").replace("]", "")
    return np.fromstring(text, dtype=np.float64, sep=",").reshape(n, 6)


class _Pending:
    """A chunk being read, frame by frame: ids, sizes, line numbers and row counts, and per frame its
    box rows, as text (a line of the written shape, :func:`_written_rows`) or as ``json`` parsed them."""

    def __init__(self) -> None:
        self.frames: list[str] = []
        self.sizes: dict[str, tuple[int, int]] = {}
        self.lines: list[int] = []
        self.counts: list[int] = []
        self.rows: list[str | list] = []
        self.n = 0

    def add(self, frame: str, size: tuple[int, int], lineno: int, rows: str | list, count: int) -> None:
        """Append one frame line's values."""
        self.frames.append(frame)
        self.sizes[frame] = size
        self.lines.append(lineno)
        self.counts.append(count)
        self.rows.append(rows)
        self.n += count

    def read(self, path: Path, header: dict) -> RawDetections:
        """The chunk's arrays: in bulk when every line was of the written shape and every row passes
        :func:`_row_checks`, else (and then equal for a valid chunk, or the same error) by :func:`_chunk`
        over the rows as ``json`` parses them."""
        texts = [r for r in self.rows if isinstance(r, str)]
        if len(texts) == len(self.rows):
            arr = _bulk_rows(texts, self.n)
            if _first_failure(arr, header) is None:
                return _arrays(header, self.frames, self.sizes, arr, self.counts)
        rows = [row for r in self.rows for row in (json.loads(f"[{r}]") if isinstance(r, str) else r)]
        return _chunk(path, header, self.frames, self.sizes, rows, self.counts, self.lines)


def iter_chunks(path: Path, *, keep_frames: set[str] | None = None,
                max_boxes: int = CHUNK_BOXES) -> Iterator[RawDetections]:
    """The detections file in chunks of whole frames, in file order, about ``max_boxes`` boxes
    each (a frame with more is one chunk): each a :class:`RawDetections` of its own frames only
    (``frame`` indexes the chunk's ``frames``). Only one chunk's boxes are in memory at a time. A line
    of the written shape keeps its rows as text until its chunk is read (:meth:`_Pending.read`); any
    other line is parsed by ``json`` when it is reached, so a line ``json`` refuses is named there."""
    header, fh = _open(path)
    pending = _Pending()
    for frame, lineno, line in _frame_lines(path, fh, keep_frames=keep_frames):
        written = _written_rows(line)
        if written is not None:
            pending.add(frame, written[0], lineno, written[1], written[2])
        else:
            frame, size, boxes = _parse_line(line, where=f"{path}:{lineno}")
            pending.add(frame, size, lineno, boxes, len(boxes))
        if pending.n >= max_boxes:
            chunk, pending = pending.read(path, header), _Pending()     # the rows' text is freed before the yield
            yield chunk
    if pending.frames:
        yield pending.read(path, header)


def split_chunks(raw: RawDetections, *, max_boxes: int = CHUNK_BOXES) -> Iterator[RawDetections]:
    """Detections already in memory (frame indices ascending, as :func:`read_raw` and :func:`collect`
    make them) in the chunks :func:`iter_chunks` would read from their file."""
    per_frame = np.bincount(raw.frame, minlength=len(raw.frames))
    ends = np.cumsum(per_frame)
    f0 = 0
    while f0 < len(raw.frames):
        base = int(ends[f0 - 1]) if f0 else 0
        f1 = min(max(int(np.searchsorted(ends, base + max_boxes, side="left")) + 1, f0 + 1), len(raw.frames))
        d0, d1 = base, int(ends[f1 - 1])
        frames = raw.frames[f0:f1]
        yield RawDetections(header=raw.header, frames=frames, sizes={f: raw.sizes[f] for f in frames},
                            frame=raw.frame[d0:d1] - f0, cls=raw.cls[d0:d1], boxes=raw.boxes[d0:d1],
                            score=raw.score[d0:d1])
        f0 = f1


def read_raw(path: Path, *, keep_frames: set[str] | None = None) -> RawDetections:
    """Read ``build/detections/<model>.jsonl`` whole; frames not in ``keep_frames`` are skipped unread."""
    header: dict[str, Any] | None = None
    frames: list[str] = []
    sizes: dict[str, tuple[int, int]] = {}
    parts: list[tuple[int, RawDetections]] = []
    for chunk in iter_chunks(path, keep_frames=keep_frames):
        header = chunk.header
        parts.append((len(frames), chunk))
        frames.extend(chunk.frames)
        sizes.update(chunk.sizes)
    if header is None:       # no frame kept: the header alone
        header, fh = _open(path)
        fh.close()
    return RawDetections(header=header, frames=tuple(frames), sizes=sizes,
                         frame=np.concatenate([np.zeros(0, np.int64), *(c.frame + k for k, c in parts)]),
                         cls=np.concatenate([np.zeros(0, np.int64), *(c.cls for _, c in parts)]),
                         boxes=np.concatenate([np.zeros((0, 4)), *(c.boxes for _, c in parts)]),
                         score=np.concatenate([np.zeros(0), *(c.score for _, c in parts)]))
