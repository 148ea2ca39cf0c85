"""Ground truth and detections for scoring: YOLO txt, COCO JSON, COCO results JSON.

Every reader validates at the boundary (file, line or index, field, expected,
got) and returns the same column tables, so the scorer never knows the format.

- :class:`GroundTruth`: frames (id, width, height) and labels (frame index,
  index within the frame, class index, xyxy box in original pixels, crowd flag).
- :class:`DetectionTable`: detections (frame index, class index, xyxy box in
  original pixels, score), in the order read.

YOLO (``read_yolo``): ``labels/<frame>.txt``, one line ``class cx cy w h`` per
label, normalised to the frame's size (read from the image header); class is an
integer index into ``classes.txt``; coordinates in [0, 1] and ``w, h > 0``, and
the box itself inside the image (``cx +- w/2``, ``cy +- h/2`` in [0, 1], with a
tolerance of ``EDGE_TOLERANCE`` for rounding). A missing or empty label file is
a frame with no labels. A label's index in its frame is its line's position
among the label lines (0-based). YOLO has no crowd.

COCO (``read_coco``): ``images`` (id, file_name, width, height),
``categories`` (id, name), ``annotations`` (image_id, category_id, bbox
``[x, y, w, h]`` inside its image (same tolerance as YOLO), optional ``iscrowd``).
A frame's id is its ``file_name`` stem.
Annotation order within an image (as listed) gives the label index.
``iscrowd: 1`` marks a crowd region (see :mod:`candor.detection.scoring.matching`: never FN,
absorbs detections). A non-standard ``ignore`` key has no effect, exactly as
in pycocotools (whose loader overwrites it with ``iscrowd``).

COCO results (``read_coco_results``): a list of ``{image_id, category_id,
bbox [x, y, w, h], score}``; image and category ids must exist in the ground truth.
"""
from __future__ import annotations

import gc
import json
import math
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec
import numpy as np

from candor.common.errors import InputError, Problem, fail
from candor.detection.frames import find_images, image_size

# A label box may overhang the image by this much (normalised) for rounding; more is an error.
EDGE_TOLERANCE = 1e-3


@dataclass(frozen=True)
class GroundTruth:
    """Frames and labels; arrays are aligned per label (``L``) or per frame (``F``)."""

    classes: tuple[str, ...]
    frames: tuple[str, ...]
    sizes: np.ndarray         # (F, 2) int64: width, height
    label_frame: np.ndarray   # (L,) int64 index into frames
    label_index: np.ndarray   # (L,) int64 index of the label within its frame
    label_class: np.ndarray   # (L,) int64 index into classes
    label_boxes: np.ndarray   # (L, 4) float64 xyxy, original pixels
    label_crowd: np.ndarray   # (L,) bool


@dataclass(frozen=True)
class DetectionTable:
    """Detections aligned per row (``D``); class indices refer to ``classes``."""

    classes: tuple[str, ...]
    frame: np.ndarray    # (D,) int64 index into the ground truth's frames
    cls: np.ndarray      # (D,) int64
    boxes: np.ndarray    # (D, 4) float64 xyxy, original pixels
    score: np.ndarray    # (D,) float64


def read_classes(path: Path) -> tuple[str, ...]:
    """``classes.txt``: one non-empty, unique class name per line, in index order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise fail(str(path), "file not found", expected="one class name per line") from None
    names = [ln.strip() for ln in lines if ln.strip()]
    if not names:
        raise fail(str(path), "no class names", expected="one class name per line")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise fail(str(path), "duplicate class names", got=dup)
    return tuple(names)


def parse_yolo_lines(text: str, *, where: str, n_classes: int, width: int,
                     height: int) -> tuple[list[int], list[list[float]], list[Problem]]:
    """Parse one YOLO label file into class ids and xyxy boxes in pixels (plus problems)."""
    classes: list[int] = []
    boxes: list[list[float]] = []
    problems: list[Problem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        at = f"{where}:{lineno}"
        parts = line.split()
        if len(parts) != 5:
            problems.append(Problem(at, "wrong number of fields", expected="class cx cy w h", got=repr(line)))
            continue
        try:
            c = int(parts[0])
            cx, cy, w, h = (float(x) for x in parts[1:])
        except ValueError:
            problems.append(Problem(at, "not numbers", expected="an integer class and four floats", got=repr(line)))
            continue
        if not 0 <= c < n_classes:
            problems.append(Problem(f"{at}.class", "class index out of range",
                                    expected=f"0..{n_classes - 1}", got=str(c)))
            continue
        vals = (cx, cy, w, h)
        if not all(math.isfinite(v) and -1e-6 <= v <= 1 + 1e-6 for v in vals) or w <= 0 or h <= 0:
            problems.append(Problem(at, "coordinates out of range",
                                    expected="normalised cx cy w h in [0, 1], w and h > 0", got=repr(line)))
            continue
        if cx - w / 2 < -EDGE_TOLERANCE or cy - h / 2 < -EDGE_TOLERANCE \
                or cx + w / 2 > 1 + EDGE_TOLERANCE or cy + h / 2 > 1 + EDGE_TOLERANCE:
            problems.append(Problem(at, "box outside the image",
                                    expected=f"cx +- w/2 and cy +- h/2 within [0, 1] (tolerance {EDGE_TOLERANCE})",
                                    got=repr(line)))
            continue
        classes.append(c)
        boxes.append([(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height])
    return classes, boxes, problems


def read_yolo(root: Path, *, frames: list[str] | tuple[str, ...] | None = None,
              sizes: dict[str, tuple[int, int]] | None = None) -> GroundTruth:
    """Read ``root/classes.txt``, ``root/images/*`` and ``root/labels/<frame>.txt``.

    ``frames`` selects (and orders) the frames; default: every image, sorted by id.
    ``sizes`` (frame -> width, height) skips reading image headers when known.
    """
    classes = read_classes(root / "classes.txt")
    images = find_images(root / "images")
    wanted = sorted(images) if frames is None else list(frames)
    missing = [f for f in wanted if f not in images and not (sizes and f in sizes)]
    if missing:
        raise InputError([Problem(str(root / "images"), f"no image for frame {f!r}") for f in missing[:20]])
    problems: list[Problem] = []
    rows: list[tuple[int, int, int, list[float]]] = []
    size_list = []
    for fi, frame in enumerate(wanted):
        w, h = sizes[frame] if sizes and frame in sizes else image_size(images[frame])
        size_list.append((w, h))
        path = root / "labels" / f"{frame}.txt"
        if not path.is_file():
            continue
        cls, boxes, probs = parse_yolo_lines(path.read_text(encoding="utf-8"), where=str(path),
                                             n_classes=len(classes), width=w, height=h)
        problems.extend(probs)
        rows.extend((fi, k, c, b) for k, (c, b) in enumerate(zip(cls, boxes)))
    if problems:
        raise InputError(problems)
    return _ground_truth(classes, tuple(wanted), size_list, rows, crowd=[False] * len(rows))


def _ground_truth(classes, frames, sizes, rows, *, crowd) -> GroundTruth:
    n = len(rows)
    return GroundTruth(
        classes=tuple(classes), frames=tuple(frames),
        sizes=np.asarray(sizes, dtype=np.int64).reshape(-1, 2),
        label_frame=np.array([r[0] for r in rows], dtype=np.int64),
        label_index=np.array([r[1] for r in rows], dtype=np.int64),
        label_class=np.array([r[2] for r in rows], dtype=np.int64),
        label_boxes=np.array([r[3] for r in rows], dtype=np.float64).reshape(n, 4),
        label_crowd=np.array(crowd, dtype=bool),
    )


@contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while building a large acyclic tree.

    A parsed JSON document holds no reference cycles, but allocating hundreds of
    thousands of dicts and lists triggers a collection pass every few hundred
    containers; each pass walks the whole young generation (about half the parse
    time on a 500,000-entry results file). Reference counting still frees everything.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_json(path: Path) -> tuple[Any, bool]:
    """Parse a JSON file; returns the document and whether it may hold a JSON boolean.

    Parsing uses ``msgspec`` (a strict RFC 8259 parser; same floats and ints as the
    standard library, about 5x faster on COCO-scale files). Anything it refuses
    (NaN/Infinity literals, numbers out of range, bad syntax, bad UTF-8) is
    re-parsed by the standard library, so accepted documents and error messages
    (with line numbers) are exactly those of ``json.loads``. The boolean flag is
    false only when the bytes contain neither ``true`` nor ``false``, so the
    column readers may trust numpy's dtype inference (which turns booleans into
    numbers) without checking every value's type.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise fail(str(path), "file not found") from None
    may_bool = b"true" in raw or b"false" in raw
    try:
        return msgspec.json.decode(raw), may_bool
    except msgspec.MsgspecError:
        pass
    try:
        return json.loads(raw.decode("utf-8")), may_bool
    except UnicodeDecodeError as err:
        raise fail(str(path), f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise fail(str(path), f"not valid JSON ({err.msg} at line {err.lineno})") from None


def load_json(path: Path) -> Any:
    """The parsed JSON document at ``path`` (see :func:`read_json`)."""
    return read_json(path)[0]


def inside_image(xywh: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: each ``[x, y, w, h]`` box lies inside its image ``sizes`` ``(N, 2)`` (width, height),
    overhanging by at most ``EDGE_TOLERANCE`` of the image's size (rounding)."""
    tol = EDGE_TOLERANCE * sizes
    lo = xywh[:, :2] >= -tol
    hi = xywh[:, :2] + xywh[:, 2:] <= sizes + tol
    return (lo & hi).all(axis=1)


def _xywh(where: str, bbox: Any, problems: list[Problem]) -> list[float] | None:
    ok = (isinstance(bbox, list) and len(bbox) == 4
          and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in bbox)
          and bbox[2] >= 0 and bbox[3] >= 0)
    if not ok:
        problems.append(Problem(f"{where}.bbox", "bad box", expected="[x, y, w, h] finite numbers, w, h >= 0",
                                got=repr(bbox)))
        return None
    x, y, w, h = (float(v) for v in bbox)
    return [x, y, x + w, y + h]


def read_coco(path: Path, *, classes: tuple[str, ...] | list[str] | None = None) -> tuple[GroundTruth, dict[int, int], dict[int, int]]:
    """Read COCO ground truth. Returns it with maps image id -> frame index and category id -> class index.

    ``classes`` fixes the class order (category names must be among them); by
    default classes are the category names in ascending category id.
    """
    with _gc_paused():
        return _read_coco(path, classes=classes)


def _stem(file_name: str) -> str:
    """``PurePosixPath(file_name).stem``, without building a path for a plain file name."""
    if "/" in file_name or file_name in ("", ".", ".."):
        return PurePosixPath(file_name).stem
    i = file_name.rfind(".")
    return file_name[:i] if 0 < i < len(file_name) - 1 else file_name


def _annotations_fast(anns: list, *, img_map: dict[int, int], cat_map: dict[int, int], sizes: np.ndarray,
                      may_bool: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Column-wise reading of well-formed annotations: (frame, index in frame, class, xyxy, crowd).

    Same result as the checking loop in :func:`read_coco` whenever every annotation
    is valid and uses integer ids and an integer (or absent) ``iscrowd``; anything
    else returns None so that the loop decides (and names the bad entry).
    """
    n = len(anns)
    try:
        img = [a["image_id"] for a in anns]
        cat = [a["category_id"] for a in anns]
        bb = [a["bbox"] for a in anns]
        crowd = [a.get("iscrowd", 0) for a in anns]
    except (KeyError, TypeError, AttributeError):
        return None
    img_a = _numeric(img, kinds="i", may_bool=may_bool, shape=(n,))
    cat_a = _numeric(cat, kinds="i", may_bool=may_bool, shape=(n,))
    box = _numeric(bb, kinds="if", may_bool=may_bool, shape=(n, 4))
    crowd_a = _numeric(crowd, kinds="i", may_bool=may_bool, shape=(n,))
    if img_a is None or cat_a is None or box is None or crowd_a is None:
        return None
    return _annotation_arrays(img_a, cat_a, box.astype(np.float64, copy=False), crowd_a, img_map=img_map,
                              cat_map=cat_map, sizes=sizes)


def _annotation_arrays(img_a: np.ndarray, cat_a: np.ndarray, box: np.ndarray, crowd_a: np.ndarray, *,
                       img_map: dict[int, int], cat_map: dict[int, int],
                       sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Check annotation columns (int64 ids, float64 ``[x, y, w, h]``, int64 ``iscrowd``) as the loop would.

    Returns (frame, index in frame, class, xyxy, crowd) when every annotation is valid
    (finite box, ``w, h >= 0``, known ids, inside its image), else None.
    """
    n = len(img_a)
    if not (np.isfinite(box).all() and (box[:, 2:] >= 0).all()):
        return None
    frame = _lookup(img_a, img_map)
    cls = _lookup(cat_a, cat_map)
    if frame is None or cls is None or not inside_image(box, sizes[frame]).all():
        return None
    # index within the frame = rank among the frame's annotations in listed order
    order = np.argsort(frame, kind="stable")
    sf = frame[order]
    starts = np.flatnonzero(np.r_[True, sf[1:] != sf[:-1]]) if n else np.zeros(0, np.int64)
    lengths = np.diff(np.r_[starts, n])
    index = np.empty(n, dtype=np.int64)
    index[order] = np.arange(n) - np.repeat(starts, lengths)
    xyxy = np.concatenate([box[:, :2], box[:, :2] + box[:, 2:]], axis=1)
    return frame, index, cls, xyxy, crowd_a != 0


def _class_map(cats: dict[int, str], classes, *, where: str) -> tuple[tuple[str, ...], dict[int, int], list[Problem]]:
    """Classes (given, or the category names by ascending id) and category id -> class index."""
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


def _frame_map(images: list[tuple[str, int, int, int]], *,
               where: str) -> tuple[list[str], dict[int, int], np.ndarray, list[Problem]]:
    """From (frame id, image id, width, height) per image: frames sorted, image id -> frame index, sizes."""
    images = sorted(images)
    frames = [f for f, *_ in images]
    problems = []
    dup = sorted(f for f, k in Counter(frames).items() if k > 1)
    if dup:
        problems.append(Problem(f"{where}:images", "duplicate frame ids (file_name stems)", got=repr(dup[:10])))
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


class _CocoGroundTruth(msgspec.Struct, gc=False):
    """A COCO ground-truth file as the typed decoder reads it (other keys are ignored, as by the loop)."""

    images: list[_Image]
    annotations: list[_Annotation]
    categories: list[_Category]


_GROUND_TRUTH = msgspec.json.Decoder(_CocoGroundTruth)


def _coco_gt_typed(path: Path, *, classes) -> tuple[GroundTruth, dict[int, int], dict[int, int]] | None:
    """Decode and type-check a ground-truth file in one pass (msgspec, strict types); None: any doubt.

    Accepts a subset of what the checking path accepts (integer ids, sizes and
    ``iscrowd``, not booleans or floats; a bbox of exactly four numbers) and gives the
    same result for it; anything else (including an invalid value, an unknown id or a
    duplicate frame) returns None, and :func:`_read_coco`'s checking path decides and
    names the entry.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise fail(str(path), "file not found") from None
    try:
        doc = _GROUND_TRUTH.decode(raw)
    except msgspec.MsgspecError:
        return None
    del raw
    where = str(path)
    classes, cat_map, problems = _class_map({c.id: c.name for c in doc.categories}, classes, where=where)
    frames, img_map, sizes, frame_problems = _frame_map(
        [(_stem(im.file_name), im.id, im.width, im.height) for im in doc.images], where=where)
    if problems or frame_problems:
        return None
    anns = doc.annotations
    n = len(anns)
    img = np.fromiter(map(attrgetter("image_id"), anns), np.int64, n)
    cat = np.fromiter(map(attrgetter("category_id"), anns), np.int64, n)
    crowd = np.fromiter(map(attrgetter("iscrowd"), anns), np.int64, n)
    box = np.fromiter(chain.from_iterable(map(attrgetter("bbox"), anns)), np.float64, 4 * n).reshape(n, 4)
    del doc, anns
    cols = _annotation_arrays(img, cat, box, crowd, img_map=img_map, cat_map=cat_map, sizes=sizes)
    if cols is None:
        return None
    frame, index, cls, xyxy, crowd_a = cols
    gt = GroundTruth(classes=classes, frames=tuple(frames), sizes=sizes, label_frame=frame, label_index=index,
                     label_class=cls, label_boxes=xyxy, label_crowd=crowd_a)
    return gt, img_map, cat_map


def _read_coco(path: Path, *, classes) -> tuple[GroundTruth, dict[int, int], dict[int, int]]:
    typed = _coco_gt_typed(path, classes=classes)
    if typed is not None:
        return typed
    return _coco_gt_checked(path, classes=classes)


def _coco_gt_checked(path: Path, *, classes) -> tuple[GroundTruth, dict[int, int], dict[int, int]]:
    doc, may_bool = read_json(path)
    where = str(path)
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), list) for k in ("images", "annotations", "categories")):
        raise fail(where, "not a COCO ground-truth file", expected="an object with images, annotations, categories lists")
    problems: list[Problem] = []
    cats = {}
    for i, c in enumerate(doc["categories"]):
        if not isinstance(c, dict) or not isinstance(c.get("id"), int) or not isinstance(c.get("name"), str):
            problems.append(Problem(f"{where}:categories[{i}]", "bad category", expected="{id: int, name: str}", got=repr(c)))
            continue
        cats[c["id"]] = c["name"]
    classes, cat_map, class_problems = _class_map(cats, classes, where=where)
    problems.extend(class_problems)
    images: list[tuple[str, int, int, int]] = []
    for i, im in enumerate(doc["images"]):
        ok = isinstance(im, dict) and isinstance(im.get("id"), int) and isinstance(im.get("file_name"), str) \
            and isinstance(im.get("width"), int) and isinstance(im.get("height"), int)
        if not ok:
            problems.append(Problem(f"{where}:images[{i}]", "bad image",
                                    expected="{id, file_name, width, height}", got=repr(im)[:200]))
            continue
        images.append((_stem(im["file_name"]), im["id"], im["width"], im["height"]))
    frames, img_map, sizes, frame_problems = _frame_map(images, where=where)
    problems.extend(frame_problems)
    fast = None if problems else _annotations_fast(doc["annotations"], img_map=img_map, cat_map=cat_map,
                                                   sizes=sizes, may_bool=may_bool)
    if fast is not None:
        frame, index, cls, xyxy, crowd_a = fast
        gt = GroundTruth(classes=tuple(classes), frames=tuple(frames), sizes=sizes, label_frame=frame,
                         label_index=index, label_class=cls, label_boxes=xyxy, label_crowd=crowd_a)
        return gt, img_map, cat_map
    rows = []
    crowd = []
    per_frame = [0] * len(images)
    for i, a in enumerate(doc["annotations"]):
        at = f"{where}:annotations[{i}]"
        if not isinstance(a, dict):
            problems.append(Problem(at, "not an object", got=repr(a)[:200]))
            continue
        if a.get("image_id") not in img_map:
            problems.append(Problem(f"{at}.image_id", "unknown image id", got=repr(a.get("image_id"))))
            continue
        if a.get("category_id") not in cat_map:
            problems.append(Problem(f"{at}.category_id", "unknown category id",
                                    expected=f"one of {sorted(cats)}", got=repr(a.get("category_id"))))
            continue
        box = _xywh(at, a.get("bbox"), problems)
        if box is None:
            continue
        fi = img_map[a["image_id"]]
        xywh = np.array([[box[0], box[1], box[2] - box[0], box[3] - box[1]]])
        if not inside_image(xywh, sizes[fi:fi + 1])[0]:
            w, h = (int(v) for v in sizes[fi])
            problems.append(Problem(f"{at}.bbox", "box outside the image",
                                    expected=f"within the image's {w} x {h} px (tolerance {EDGE_TOLERANCE} of its size)",
                                    got=repr(a.get("bbox"))))
            continue
        rows.append((fi, per_frame[fi], cat_map[a["category_id"]], box))
        per_frame[fi] += 1
        crowd.append(bool(a.get("iscrowd", 0)))
    if problems:
        raise InputError(problems)
    gt = _ground_truth(classes, frames, sizes, rows, crowd=crowd)
    return gt, img_map, cat_map


def read_coco_results(path: Path, *, image_map: dict[int, int], category_map: dict[int, int],
                      classes: tuple[str, ...]) -> DetectionTable:
    """Read a COCO results list against the maps returned by :func:`read_coco`."""
    with _gc_paused():
        return _read_coco_results(path, image_map=image_map, category_map=category_map, classes=classes)


class _Result(msgspec.Struct, gc=False):
    """One COCO result as the typed decoder reads it (other keys are ignored, as by the loop)."""

    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    score: float


_RESULTS = msgspec.json.Decoder(list[_Result])
RESULTS_PIECE = 1 << 20  # bytes of results JSON decoded at once (about 12,000 entries)


def _coco_results_typed(path: Path, *, image_map: dict[int, int], category_map: dict[int, int],
                        classes: tuple[str, ...]) -> DetectionTable | None:
    """Decode and type-check a results file (msgspec, strict types), piece by piece; None: any doubt.

    The typed decoder accepts exactly the entries the checking loop accepts as to
    types (integer ids, not booleans or floats; a number score; a bbox of exactly four
    numbers; integers become floats as ``float()`` does); values (finite, ``w, h >= 0``,
    known ids) are then checked on the columns. Anything else returns None, and the
    generic path (:func:`read_json`, then the checking loop) decides and names the entry.
    The file is decoded in pieces of about ``RESULTS_PIECE`` bytes (:func:`_array_pieces`),
    each turned into columns before the next is decoded, so the Python objects of
    only one piece exist at a time (half the peak memory, and they stay in the caches).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise fail(str(path), "file not found") from None
    try:
        columns = [_result_columns(_RESULTS.decode(piece)) for piece in _array_pieces(raw, size=RESULTS_PIECE)]
    except msgspec.MsgspecError:
        try:   # a cut inside a string fails a piece of a valid file (see _array_pieces): decode it whole
            columns = [_result_columns(_RESULTS.decode(raw))]
        except msgspec.MsgspecError:
            return None
    del raw
    img, cat, score, box = (np.concatenate(c) for c in zip(*columns))
    return _results_table(img, cat, score, box.reshape(-1, 4), image_map=image_map, category_map=category_map,
                          classes=classes)


def _results_table(img: np.ndarray, cat: np.ndarray, score: np.ndarray, box: np.ndarray, *,
                   image_map: dict[int, int], category_map: dict[int, int],
                   classes: tuple[str, ...]) -> DetectionTable | None:
    """The table of typed result columns (ids, scores, ``(N, 4)`` xywh boxes) once their values
    pass (finite, ``w, h >= 0``, known ids); None otherwise, for the checking loop to name the entry."""
    if not (np.isfinite(box).all() and np.isfinite(score).all() and (box[:, 2:] >= 0).all()):
        return None
    frame = _lookup(img, image_map)
    cls = _lookup(cat, category_map)
    if frame is None or cls is None:
        return None
    xyxy = np.concatenate([box[:, :2], box[:, :2] + box[:, 2:]], axis=1)
    return DetectionTable(classes=tuple(classes), frame=frame, cls=cls, boxes=xyxy, score=score)


def _result_columns(rows: list[_Result]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Image ids, category ids, scores and the flat ``x, y, w, h`` values of decoded results."""
    n = len(rows)
    return (np.fromiter(map(attrgetter("image_id"), rows), np.int64, n),
            np.fromiter(map(attrgetter("category_id"), rows), np.int64, n),
            np.fromiter(map(attrgetter("score"), rows), np.float64, n),
            np.fromiter(chain.from_iterable(map(attrgetter("bbox"), rows)), np.float64, 4 * n))


def _array_pieces(raw: bytes, *, size: int) -> Iterator[bytes]:
    """Cut the text of a JSON array of objects into JSON arrays of consecutive entries.

    Cuts fall at the first ``},{`` after every ``size`` bytes: piece ``k`` is ``[``,
    the entries up to and including that ``}``, then ``]`` (the first piece keeps the
    file's own opening, the last its own end). A cut is only right between two
    entries of the top-level array; anywhere else (inside a string or a nested value)
    the piece ends inside that string or value, so a strict parser refuses it. Hence:
    when every piece parses as a list, the pieces' entries, in order, are the whole
    list's (the converse does not hold: a valid file with ``},{`` inside a string
    makes a piece fail, and the reader then decodes the file whole).

    >>> list(_array_pieces(b'[{"a":1},{"a":2},{"a":3}]', size=3))
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


def _read_coco_results(path: Path, *, image_map: dict[int, int], category_map: dict[int, int],
                       classes: tuple[str, ...]) -> DetectionTable:
    typed = _coco_results_typed(path, image_map=image_map, category_map=category_map, classes=classes)
    if typed is not None:
        return typed
    doc, may_bool = read_json(path)
    where = str(path)
    if not isinstance(doc, list):
        raise fail(where, "not a COCO results file", expected="a JSON list of {image_id, category_id, bbox, score}",
                   got=type(doc).__name__)
    fast = _coco_results_fast(doc, image_map=image_map, category_map=category_map, classes=classes,
                              may_bool=may_bool)
    if fast is not None:
        return fast
    problems: list[Problem] = []
    frame, cls, boxes, score = [], [], [], []
    for i, d in enumerate(doc):
        at = f"{where}[{i}]"
        if not isinstance(d, dict):
            problems.append(Problem(at, "not an object", got=repr(d)[:200]))
            continue
        if type(d.get("image_id")) is not int or d["image_id"] not in image_map:
            problems.append(Problem(f"{at}.image_id", "image id not in the ground truth", expected="an integer id",
                                    got=repr(d.get("image_id"))))
            continue
        if type(d.get("category_id")) is not int or d["category_id"] not in category_map:
            problems.append(Problem(f"{at}.category_id", "category id not in the ground truth",
                                    got=repr(d.get("category_id"))))
            continue
        s = d.get("score")
        if not isinstance(s, (int, float)) or isinstance(s, bool) or not math.isfinite(s):
            problems.append(Problem(f"{at}.score", "bad score", expected="a finite number", got=repr(s)))
            continue
        box = _xywh(at, d.get("bbox"), problems)
        if box is None:
            continue
        frame.append(image_map[d["image_id"]])
        cls.append(category_map[d["category_id"]])
        boxes.append(box)
        score.append(float(s))
        if len(problems) > 50:
            break
    if problems:
        raise InputError(problems)
    return DetectionTable(classes=tuple(classes), frame=np.array(frame, dtype=np.int64),
                          cls=np.array(cls, dtype=np.int64),
                          boxes=np.array(boxes, dtype=np.float64).reshape(-1, 4),
                          score=np.array(score, dtype=np.float64))


def _lookup(ids: np.ndarray, mapping: dict[int, int]) -> np.ndarray | None:
    """Map integer ids through ``mapping`` vectorised; None when any id is unknown."""
    keys = np.array(sorted(mapping), dtype=np.int64)
    vals = np.array([mapping[k] for k in keys.tolist()], dtype=np.int64)
    if len(keys) == 0:
        return None if len(ids) else ids.astype(np.int64)
    pos = np.clip(np.searchsorted(keys, ids), 0, len(keys) - 1)
    if not np.array_equal(keys[pos], ids):
        return None
    return vals[pos]


def _numeric(values: list, *, kinds: str, may_bool: bool, shape: tuple[int, ...]) -> np.ndarray | None:
    """``values`` as a numpy array when every value is a JSON number of an allowed kind, else None.

    ``kinds``: "i" (integers only) or "if" (integers or floats). numpy's dtype
    inference rejects strings, nulls, objects and ragged lists by the dtype or shape
    it infers; booleans (which it would turn into numbers) are ruled out by
    ``may_bool`` false, or else by checking each value's type.
    """
    if may_bool:
        allowed = {int} if kinds == "i" else {int, float}
        flat = values if len(shape) == 1 else [v for row in values if type(row) is list for v in row]
        if {type(v) for v in flat} - allowed:
            return None
    try:
        arr = np.array(values)
    except (ValueError, TypeError, OverflowError):
        return None
    if arr.shape != shape or arr.dtype.kind not in kinds or (arr.dtype.kind == "i" and arr.dtype.itemsize != 8):
        return None
    return arr


def _coco_results_fast(doc: list, *, image_map: dict[int, int], category_map: dict[int, int],
                       classes: tuple[str, ...], may_bool: bool = True) -> DetectionTable | None:
    """Column-wise reading of a well-formed results list (None: fall back to the checking loop).

    Same result as the loop whenever every entry is valid; any doubt (a type, a
    missing key, an unknown id, a bad box) returns None so the loop can name the entry.
    ``may_bool`` false (see :func:`read_json`) skips the per-value type checks.
    """
    n = len(doc)
    try:  # a non-object entry (list, string, number, null) raises TypeError here
        img = list(map(itemgetter("image_id"), doc))
        cat = list(map(itemgetter("category_id"), doc))
        sc = list(map(itemgetter("score"), doc))
        bb = list(map(itemgetter("bbox"), doc))
    except (KeyError, TypeError, IndexError):
        return None
    img_a = _numeric(img, kinds="i", may_bool=may_bool, shape=(n,))
    cat_a = _numeric(cat, kinds="i", may_bool=may_bool, shape=(n,))
    score = _numeric(sc, kinds="if", may_bool=may_bool, shape=(n,))
    box = _numeric(bb, kinds="if", may_bool=may_bool, shape=(n, 4))
    del img, cat, sc, bb
    if img_a is None or cat_a is None or score is None or box is None:
        return None
    return _results_table(img_a, cat_a, score.astype(np.float64, copy=False), box.astype(np.float64, copy=False),
                          image_map=image_map, category_map=category_map, classes=classes)


def coco_results(det: DetectionTable, *, frame_ids: list[int] | np.ndarray,
                 category_ids: list[int] | np.ndarray, decimals: int = 3) -> list[dict[str, Any]]:
    """Detections as a COCO results list (``bbox`` ``[x, y, w, h]``), in the table's order.

    ``frame_ids[f]`` is the COCO image id of frame index ``f``; ``category_ids[c]``
    the category id of class index ``c``.
    """
    b = det.boxes
    xywh = np.round(np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1), decimals) + 0.0
    sc = np.round(det.score, 5) + 0.0
    return [{"image_id": int(frame_ids[f]), "category_id": int(category_ids[c]),
             "bbox": [float(v) for v in xywh[i]], "score": float(sc[i])}
            for i, (f, c) in enumerate(zip(det.frame.tolist(), det.cls.tolist()))]
