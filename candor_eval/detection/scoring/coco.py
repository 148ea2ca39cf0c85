"""COCO ground truth: one typed decoding path, and a checking walk that names every bad entry.

A file holds ``images`` (``id``, ``file_name``, ``width``, ``height``), ``categories``
(``id``, ``name``) and ``annotations`` (``image_id``, ``category_id``, ``bbox``
``[x, y, w, h]`` inside its image (tolerance ``EDGE_TOLERANCE`` of the image's size),
optional ``iscrowd``); other keys are ignored. Ids, sizes and ``iscrowd`` are JSON
integers (not booleans, not floats): a width and height >= 1, ``iscrowd`` 0 or 1; a box is four
finite numbers with ``w, h >= 0``.
A frame's id is its ``file_name`` stem; frame ids are unique, and so are image, category and
annotation ids (``id`` of an annotation is optional) and category names. The file is UTF-8 (a BOM
is dropped) and a regular file of at most :data:`COCO_MAX_BYTES` (1 GiB; COCO's own train2017
annotations are 448 MB): a larger file, a device (a symlink to ``/dev/zero``) or a FIFO is an error
naming it, never read. The annotations of an
image, in the order listed, give its labels' indices. ``iscrowd`` 1 marks a crowd
region (see :mod:`candor_eval.detection.scoring.matching`: never FN, absorbs detections); a
non-standard ``ignore`` key has no effect, as in pycocotools.

Reading: :func:`read_coco` decodes the file once with a typed decoder (msgspec, strict
types) and checks the values on the columns. A file it refuses is walked entry by entry
(:func:`ground_truth_problems`) to name every bad entry (file, index, field, expected,
got); nothing is ever read by the walk.
"""
from __future__ import annotations

import gc
import math
import sys
from collections.abc import Hashable, Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from operator import attrgetter
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec
import numpy as np

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import BOM, decode_text, parse_json, read_bytes
from candor_eval.common.unique import repeated
from candor_eval.detection.scoring.columns import EDGE_TOLERANCE, GroundTruth, inside_image, lookup, xywh_to_xyxy

Maps = tuple[GroundTruth, dict[int, int], dict[int, int]]
COCO_MAX_BYTES = 2 ** 30


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a large acyclic tree.

    A parsed JSON document holds no reference cycles, but allocating hundreds of
    thousands of objects triggers a collection pass every few hundred containers; each
    pass walks the whole young generation. Reference counting still frees everything.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_coco_bytes(path: Path) -> bytes:
    """The file's bytes (a UTF-8 BOM dropped); a missing file, a folder, an unreadable file, or one that is not a
    regular file of at most :data:`COCO_MAX_BYTES`, is an input error naming it."""
    raw = read_bytes(path, expected=f"a COCO JSON file of at most {COCO_MAX_BYTES} bytes", max_bytes=COCO_MAX_BYTES)
    bom = BOM.encode("utf-8")
    return raw[len(bom):] if raw.startswith(bom) else raw


def parse_coco_json(raw: bytes, *, where: str) -> Any:
    """The standard library's parse of ``raw`` (for the checking walks: line numbers in syntax
    errors, and ``NaN`` parsed so that the walk can name the entry holding it), checked by
    :func:`candor_eval.common.tables.parse_json` (encoding, nesting depth, lone surrogates)."""
    return parse_json(decode_text(raw, where=where, expected="a COCO JSON file"), where=where)


def repeat_problems(values: Iterable[Hashable], *, where: str, what: str) -> list[Problem]:
    """One Problem naming the values that occur more than once (:func:`candor_eval.common.unique.repeated`;
    none: no Problem)."""
    dup = repeated(values)
    return [Problem(where, f"{what} listed more than once", expected="each once", got=repr(dup[:10]))] if dup else []


def refused(problems: list[Problem], *, where: str, err: Exception | None) -> InputError:
    """The error for a file the typed decoder refused: the walk's problems, or (when the walk
    found none, e.g. an integer beyond 64 bits) the decoder's own message, which names the path."""
    if problems:
        return InputError(problems)
    return InputError(Problem(where, "not readable by the typed decoder", got=str(err) if err else None))


def is_int(value: Any) -> bool:
    """A JSON integer (a bool is not one)."""
    return type(value) is int


def is_number(value: Any) -> bool:
    """A finite JSON number that fits a float64 (a bool is not one).

    >>> is_number(2), is_number(0.5), is_number(True), is_number(float("nan")), is_number(10 ** 400)
    (True, True, False, False, False)
    """
    return (type(value) is float and math.isfinite(value)) or (type(value) is int and abs(value) <= sys.float_info.max)


def bbox_problem(where: str, bbox: Any) -> Problem | None:
    """None when ``bbox`` is ``[x, y, w, h]``: four finite JSON numbers, ``w, h >= 0``."""
    ok = (isinstance(bbox, list) and len(bbox) == 4
          and all(is_number(v) for v in bbox)
          and bbox[2] >= 0 and bbox[3] >= 0)
    if ok:
        return None
    return Problem(f"{where}.bbox", "bad box", expected="[x, y, w, h] finite numbers, w, h >= 0", got=repr(bbox))


def stem(file_name: str) -> str:
    """``PurePosixPath(file_name).stem``, without building a path for a plain file name.

    >>> stem("a.b.png"), stem("dir/x.jpg"), stem(".hidden")
    ('a.b', 'x', '.hidden')
    """
    if "/" in file_name or file_name in ("", ".", ".."):
        return PurePosixPath(file_name).stem
    i = file_name.rfind(".")
    return file_name[:i] if 0 < i < len(file_name) - 1 else file_name


def class_map(categories: list[tuple[int, str]], classes, *,
              where: str) -> tuple[tuple[str, ...], dict[int, int], list[Problem]]:
    """Classes (given, or the category names by ascending id) and category id -> class index,
    from (id, name) per category (a repeated id or name is a problem)."""
    dup = repeat_problems((c for c, _ in categories), where=f"{where}:categories", what="category id(s)") + \
        repeat_problems((n for _, n in categories), where=f"{where}:categories", what="category name(s)")
    if dup:
        return tuple(classes or ()), {}, dup
    cats = dict(categories)
    if classes is None:
        classes = tuple(cats[k] for k in sorted(cats))
    cls_index = {n: i for i, n in enumerate(classes)}
    cat_map = {}
    problems = []
    for cid, name in cats.items():
        if name not in cls_index:
            problems.append(Problem(f"{where}:categories id {cid}", "unknown class name",
                                    expected=", ".join(classes), got=repr(name)))
        else:
            cat_map[cid] = cls_index[name]
    return tuple(classes), cat_map, problems


def frame_map(images: list[tuple[str, int, int, int]], *,
              where: str) -> tuple[list[str], dict[int, int], np.ndarray, list[Problem]]:
    """From (frame id, image id, width, height) per image: frames sorted, image id -> frame index, sizes."""
    images = sorted(images)
    frames = [f for f, *_ in images]
    problems = []
    dup = repeated(frames)
    if dup:
        problems.append(Problem(f"{where}:images", "duplicate frame ids (file_name stems)", got=repr(dup[:10])))
    problems += repeat_problems((iid for _, iid, _, _ in images), where=f"{where}:images", what="image id(s)")
    img_map = {iid: fi for fi, (_, iid, _, _) in enumerate(images)}
    sizes = np.asarray([(w, h) for _, _, w, h in images], dtype=np.int64).reshape(-1, 2)
    return frames, img_map, sizes, problems


class _Image(msgspec.Struct, gc=False):
    id: int
    file_name: str
    width: int
    height: int


class _Category(msgspec.Struct, gc=False):
    id: int
    name: str


class _Annotation(msgspec.Struct, gc=False):
    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    iscrowd: int = 0
    id: int | None = None


class _CocoGroundTruth(msgspec.Struct, gc=False):
    """A COCO ground-truth file as the typed decoder reads it (other keys are ignored)."""

    images: list[_Image]
    annotations: list[_Annotation]
    categories: list[_Category]


_GROUND_TRUTH = msgspec.json.Decoder(_CocoGroundTruth)


def read_coco(path: Path, *, classes: tuple[str, ...] | list[str] | None = None) -> Maps:
    """Read COCO ground truth. Returns it with maps image id -> frame index and category id -> class index.

    ``classes`` fixes the class order (category names must be among them); by
    default classes are the category names in ascending category id. Any bad entry is an
    :class:`InputError` naming every bad entry (see the module docstring).
    """
    raw = read_coco_bytes(path)
    where = str(path)
    with gc_paused():
        try:
            doc = _GROUND_TRUTH.decode(raw)
        except msgspec.MsgspecError as err:
            raise refused(ground_truth_problems(raw, where=where, classes=classes), where=where, err=err) from None
        del raw  # the walk below re-reads the file: only a refused file needs its text again
        gt = _columns(doc, where=where, classes=classes)
    if gt is None:
        raise refused(ground_truth_problems(read_coco_bytes(path), where=where, classes=classes), where=where, err=None)
    return gt


def _columns(doc: _CocoGroundTruth, *, where: str, classes) -> Maps | None:
    """The ground truth of a typed document when every value is valid (known ids, boxes finite,
    ``w, h >= 0`` and inside their image, unique frames, known class names); else None."""
    classes, cat_map, problems = class_map([(c.id, c.name) for c in doc.categories], classes, where=where)
    problems += repeat_problems((a.id for a in doc.annotations if a.id is not None), where=f"{where}:annotations",
                         what="annotation id(s)")
    frames, img_map, sizes, frame_problems = frame_map(
        [(stem(im.file_name), im.id, im.width, im.height) for im in doc.images], where=where)
    if problems or frame_problems:
        return None
    anns = doc.annotations
    n = len(anns)
    try:   # an integer beyond 64 bits is no id of the file
        img = np.fromiter(map(attrgetter("image_id"), anns), np.int64, n)
        cat = np.fromiter(map(attrgetter("category_id"), anns), np.int64, n)
        crowd = np.fromiter(map(attrgetter("iscrowd"), anns), np.int64, n)
    except OverflowError:
        return None
    box = np.fromiter(chain.from_iterable(map(attrgetter("bbox"), anns)), np.float64, 4 * n).reshape(n, 4)
    if not (np.isfinite(box).all() and (box[:, 2:] >= 0).all()) or not np.isin(crowd, (0, 1)).all() \
            or (sizes <= 0).any():
        return None
    frame = lookup(img, img_map)
    cls = lookup(cat, cat_map)
    if frame is None or cls is None or not inside_image(box, sizes[frame]).all():
        return None
    # index within the frame = rank among the frame's annotations in listed order
    order = np.argsort(frame, kind="stable")
    sf = frame[order]
    starts = np.flatnonzero(np.r_[True, sf[1:] != sf[:-1]]) if n else np.zeros(0, np.int64)
    index = np.empty(n, dtype=np.int64)
    index[order] = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    gt = GroundTruth(classes=classes, frames=tuple(frames), sizes=sizes, label_frame=frame, label_index=index,
                     label_class=cls, label_boxes=xywh_to_xyxy(box), label_crowd=crowd != 0)
    return gt, img_map, cat_map


def ground_truth_problems(raw: bytes, *, where: str, classes=None) -> list[Problem]:
    """Every bad entry of a ground-truth file, each named ``<file>:<list>[<index>].<field>``.

    The same rules as the typed decoder and :func:`_columns`; used only on a file they refused.
    A file that is not JSON, or not an object with the three lists, raises at once.
    """
    doc = parse_coco_json(raw, where=where)
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), list)
                                            for k in ("images", "annotations", "categories")):
        raise fail(where, "not a COCO ground-truth file",
                   expected="an object with images, annotations, categories lists")
    problems: list[Problem] = []
    cats = []
    for i, c in enumerate(doc["categories"]):
        if not isinstance(c, dict) or not is_int(c.get("id")) or not isinstance(c.get("name"), str):
            problems.append(Problem(f"{where}:categories[{i}]", "bad category", expected="{id: int, name: str}",
                                    got=repr(c)[:200]))
            continue
        cats.append((c["id"], c["name"]))
    classes, cat_map, class_problems = class_map(cats, classes, where=where)
    problems.extend(class_problems)
    images: list[tuple[str, int, int, int]] = []
    for i, im in enumerate(doc["images"]):
        ok = isinstance(im, dict) and is_int(im.get("id")) and isinstance(im.get("file_name"), str) \
            and is_int(im.get("width")) and is_int(im.get("height"))
        if not ok:
            problems.append(Problem(f"{where}:images[{i}]", "bad image",
                                    expected="{id, file_name, width, height} with integer id and size",
                                    got=repr(im)[:200]))
            continue
        bad_size = next((k for k in ("width", "height") if im[k] <= 0), None)
        if bad_size is not None:
            problems.append(Problem(f"{where}:images[{i}].{bad_size}", "not a positive size",
                                    expected="a width and height >= 1 px", got=repr(im[bad_size])))
            continue
        images.append((stem(im["file_name"]), im["id"], im["width"], im["height"]))
    _, img_map, sizes, frame_problems = frame_map(images, where=where)
    problems.extend(frame_problems)
    ann_ids = [a["id"] for a in doc["annotations"] if isinstance(a, dict) and a.get("id") is not None]
    problems += [Problem(f"{where}:annotations", "an annotation id is not an integer", got=repr(v)[:200])
                 for v in ann_ids if not is_int(v)][:1]
    problems += repeat_problems((v for v in ann_ids if is_int(v)), where=f"{where}:annotations",
                                what="annotation id(s)")
    for i, a in enumerate(doc["annotations"]):
        at = f"{where}:annotations[{i}]"
        if not isinstance(a, dict):
            problems.append(Problem(at, "not an object", got=repr(a)[:200]))
            continue
        if not is_int(a.get("image_id")) or a["image_id"] not in img_map:
            problems.append(Problem(f"{at}.image_id", "unknown image id", expected="an integer id of images",
                                    got=repr(a.get("image_id"))))
            continue
        if not is_int(a.get("category_id")) or a["category_id"] not in cat_map:
            problems.append(Problem(f"{at}.category_id", "unknown category id",
                                    expected=f"one of {sorted(cat_map)}", got=repr(a.get("category_id"))))
            continue
        if not is_int(a.get("iscrowd", 0)) or a.get("iscrowd", 0) not in (0, 1):
            problems.append(Problem(f"{at}.iscrowd", "not 0 or 1", expected="0 or 1 (absent: 0)",
                                    got=repr(a.get("iscrowd"))))
            continue
        bad_box = bbox_problem(at, a.get("bbox"))
        if bad_box:
            problems.append(bad_box)
            continue
        fi = img_map[a["image_id"]]
        if not inside_image(np.array([a["bbox"]], dtype=np.float64), sizes[fi:fi + 1])[0]:
            w, h = (int(v) for v in sizes[fi])
            problems.append(Problem(f"{at}.bbox", "box outside the image",
                                    expected=f"within the image's {w} x {h} px "
                                             f"(tolerance {EDGE_TOLERANCE} of its size)",
                                    got=repr(a.get("bbox"))))
    return problems
