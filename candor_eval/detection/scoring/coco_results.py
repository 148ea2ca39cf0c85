"""COCO results JSON: the reader (one typed decoding path) and the writer.

A results file is a list of ``{image_id, category_id, bbox [x, y, w, h], score}`` (other
keys are ignored); ids are JSON integers (not booleans, not floats) that exist in the
ground truth (the maps of :func:`candor_eval.detection.scoring.coco.read_coco`); ``score`` a
finite number; ``bbox`` four finite numbers with ``w, h >= 0``.

Reading: :func:`read_coco_results` decodes the file with a typed decoder (msgspec,
strict types) in pieces (:func:`array_pieces`) and checks the values on the columns. A
file it refuses is walked entry by entry (:func:`results_problems`) to name the bad
entries (file, index, field, expected, got); nothing is ever read by the walk. The file is read
as the ground truth is (:func:`candor_eval.detection.scoring.coco.read_coco_bytes`: a regular file of at
most 1 GiB, a symlink to ``/dev/zero`` refused unread).
"""
from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from candor_eval.common.errors import Problem, fail
from candor_eval.detection.scoring.coco import (
    bbox_problem,
    gc_paused,
    is_int,
    is_number,
    parse_coco_json,
    read_coco_bytes,
    refused,
)
from candor_eval.detection.scoring.columns import DetectionTable, lookup, xywh_to_xyxy

RESULTS_PIECE = 1 << 20  # bytes of results JSON decoded at once (about 12,000 entries)
MAX_PROBLEMS = 50        # the walk stops after this many bad entries


class _Result(msgspec.Struct, gc=False):
    """One COCO result as the typed decoder reads it (other keys are ignored)."""

    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    score: float


_RESULTS = msgspec.json.Decoder(list[_Result])


def read_coco_results(path: Path, *, image_map: dict[int, int], category_map: dict[int, int],
                      classes: tuple[str, ...]) -> DetectionTable:
    """Read a COCO results list against the maps returned by :func:`candor_eval.detection.scoring.coco.read_coco`.

    The file is decoded in pieces of about ``RESULTS_PIECE`` bytes, each turned into columns
    before the next is decoded, so the Python objects of only one piece exist at a time.
    A piece cut inside a string (a valid file with ``},{`` in a string value) fails to
    decode; the file is then decoded whole.
    """
    raw = read_coco_bytes(path)
    where = str(path)
    with gc_paused():
        try:
            try:
                columns = [_result_columns(_RESULTS.decode(piece)) for piece in array_pieces(raw, size=RESULTS_PIECE)]
            except msgspec.MsgspecError:
                columns = [_result_columns(_RESULTS.decode(raw))]
        except (msgspec.MsgspecError, OverflowError) as err:   # overflow: an id beyond 64 bits
            raise refused(results_problems(raw, where=where, image_map=image_map, category_map=category_map),
                          where=where, err=err) from None
    del raw  # the walk below re-reads the file: only a refused file needs its text again
    img, cat, score, box = (np.concatenate(c) for c in zip(*columns))
    box = box.reshape(-1, 4)
    frame = lookup(img, image_map)
    cls = lookup(cat, category_map)
    if frame is None or cls is None or not (np.isfinite(box).all() and np.isfinite(score).all()
                                            and (box[:, 2:] >= 0).all()):
        raise refused(results_problems(read_coco_bytes(path), where=where, image_map=image_map,
                                       category_map=category_map), where=where, err=None)
    return DetectionTable(classes=tuple(classes), frame=frame, cls=cls, boxes=xywh_to_xyxy(box), score=score)


def _result_columns(rows: list[_Result]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Image ids, category ids, scores and the flat ``x, y, w, h`` values of decoded results."""
    n = len(rows)
    return (np.fromiter(map(attrgetter("image_id"), rows), np.int64, n),
            np.fromiter(map(attrgetter("category_id"), rows), np.int64, n),
            np.fromiter(map(attrgetter("score"), rows), np.float64, n),
            np.fromiter(chain.from_iterable(map(attrgetter("bbox"), rows)), np.float64, 4 * n))


def array_pieces(raw: bytes, *, size: int) -> Iterator[bytes]:
    """Cut the text of a JSON array of objects into JSON arrays of consecutive entries.

    Cuts fall at the first ``},{`` after every ``size`` bytes: piece ``k`` is ``[``,
    the entries up to and including that ``}``, then ``]`` (the first piece keeps the
    file's own opening, the last its own end). A cut is only right between two
    entries of the top-level array; anywhere else (inside a string or a nested value)
    the piece ends inside that string or value, so a strict parser refuses it. Hence:
    when every piece parses as a list, the pieces' entries, in order, are the whole
    list's (the converse does not hold: a valid file with ``},{`` inside a string
    makes a piece fail, and the reader then decodes the file whole).

    >>> list(array_pieces(b'[{"a":1},{"a":2},{"a":3}]', size=3))
    [b'[{"a":1}]', b'[{"a":2}]', b'[{"a":3}]']
    """
    start, n = 0, len(raw)
    while True:
        cut = raw.find(b"},{", start + size) if start + size < n else -1
        head = b"" if start == 0 else b"["
        if cut < 0:
            yield head + raw[start:]
            return
        yield head + raw[start:cut + 1] + b"]"
        start = cut + 2


def results_problems(raw: bytes, *, where: str, image_map: dict[int, int],
                     category_map: dict[int, int]) -> list[Problem]:
    """The bad entries of a results file (up to ``MAX_PROBLEMS``), each named ``<file>[<index>].<field>``.

    The same rules as the typed decoder and the column checks of :func:`read_coco_results`;
    used only on a file they refused. A file that is not JSON, or not a list, raises at once.
    """
    doc = parse_coco_json(raw, where=where)
    if not isinstance(doc, list):
        raise fail(where, "not a COCO results file", expected="a JSON list of {image_id, category_id, bbox, score}",
                   got=type(doc).__name__)
    problems: list[Problem] = []
    for i, d in enumerate(doc):
        at = f"{where}[{i}]"
        if not isinstance(d, dict):
            problems.append(Problem(at, "not an object", got=repr(d)[:200]))
        elif not is_int(d.get("image_id")) or d["image_id"] not in image_map:
            problems.append(Problem(f"{at}.image_id", "image id not in the ground truth", expected="an integer id",
                                    got=repr(d.get("image_id"))))
        elif not is_int(d.get("category_id")) or d["category_id"] not in category_map:
            problems.append(Problem(f"{at}.category_id", "category id not in the ground truth",
                                    got=repr(d.get("category_id"))))
        elif not is_number(d.get("score")):
            problems.append(Problem(f"{at}.score", "bad score", expected="a finite number", got=repr(d.get("score"))))
        elif (bad := bbox_problem(at, d.get("bbox"))) is not None:
            problems.append(bad)
        if len(problems) > MAX_PROBLEMS:
            break
    return problems


def coco_results(det: DetectionTable, *, frame_ids: list[int] | np.ndarray,
                 category_ids: list[int] | np.ndarray, decimals: int = 3) -> list[dict[str, Any]]:
    """Detections as a COCO results list (``bbox`` ``[x, y, w, h]``), in the table's order.

    ``frame_ids[f]`` is the COCO image id of frame index ``f``; ``category_ids[c]``
    the category id of class index ``c``; boxes rounded to ``decimals``, scores to 5.
    """
    b = det.boxes
    xywh = np.round(np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1), decimals) + 0.0
    sc = np.round(det.score, 5) + 0.0
    images, categories = [int(i) for i in frame_ids], [int(c) for c in category_ids]
    return [{"image_id": images[f], "category_id": categories[c], "bbox": box, "score": score}
            for f, c, box, score in zip(det.frame.tolist(), det.cls.tolist(), xywh.tolist(), sc.tolist())]
