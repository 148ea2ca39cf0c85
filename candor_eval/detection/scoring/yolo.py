"""YOLO ground truth: ``classes.txt``, ``images/`` and ``labels/<frame>.txt``.

One line ``class cx cy w h`` per label, normalised to the frame's size (read from the
image header); class is an integer index into ``classes.txt`` (ASCII digits); coordinates in [0, 1] and
``w, h > 0``, and the box itself inside the image (``cx +- w/2``, ``cy +- h/2`` in
[0, 1], with a tolerance of ``EDGE_TOLERANCE`` for rounding). A missing or empty label
file is a frame with no labels; a label file whose frame has no image is an error (it would
never be read), and so is a line repeated in one file (an identical second box can never be
matched: a silent extra miss). A label's index in its frame is its line's position among the
label lines (0-based). YOLO has no crowd. Files are read as checked UTF-8
(:func:`candor_eval.common.tables.read_text`: a BOM is dropped, another encoding is an error) and
capped: a label file is a regular file of at most :data:`LABEL_MAX_BYTES` (16 MiB: some 300 000
labels), ``classes.txt`` of at most :data:`CLASSES_MAX_BYTES`; a larger file, or a device (a
symlink to ``/dev/zero``) or FIFO, is an error naming it, never read. Every problem names the file
and line (``labels/a.txt:2``), what is wrong, what was expected and what was found.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import ascii_int, read_text
from candor_eval.common.unique import repeated
from candor_eval.detection.frames import find_images, image_size
from candor_eval.detection.scoring.columns import EDGE_TOLERANCE, GroundTruth

LABEL_MAX_BYTES = 16 * 2 ** 20
BATCH = 512                     # label files parsed at once (plain_labels)
CLASSES_MAX_BYTES = 2 ** 20


def read_classes(path: Path) -> tuple[str, ...]:
    """``classes.txt``: one non-empty, unique class name per line, in index order."""
    lines = read_text(path, expected="one class name per line", max_bytes=CLASSES_MAX_BYTES).splitlines()
    names = [ln.strip() for ln in lines if ln.strip()]
    if not names:
        raise fail(str(path), "no class names", expected="one class name per line")
    dup = repeated(names)
    if dup:
        raise fail(str(path), "duplicate class names", expected="each class once", got=dup)
    return tuple(names)


def parse_yolo_lines(text: str, *, where: str, n_classes: int, width: int,
                     height: int) -> tuple[list[int], list[list[float]], list[Problem]]:
    """Parse one YOLO label file into class ids and xyxy boxes in pixels (plus problems).

    A file whose every label line is well formed and in range (:func:`plain_labels`) is read in bulk;
    any other line by line, naming each problem."""
    plain = plain_labels([text], n_classes=n_classes, sizes=[(width, height)])[0]
    if plain is not None:
        return plain[0], plain[1].tolist(), []
    return _parse_lines(text, where=where, n_classes=n_classes, width=width, height=height)


def _parse_lines(text: str, *, where: str, n_classes: int, width: int,
                 height: int) -> tuple[list[int], list[list[float]], list[Problem]]:
    """:func:`parse_yolo_lines` line by line."""
    classes: list[int] = []
    boxes: list[list[float]] = []
    problems: list[Problem] = []
    seen: dict[tuple[str, ...], int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        at = f"{where}:{lineno}"
        parts = line.split()
        if len(parts) != 5:
            problems.append(Problem(at, "wrong number of fields", expected="class cx cy w h", got=repr(line)[:200]))
            continue
        if tuple(parts) in seen:
            problems.append(Problem(at, f"the same label twice (first on line {seen[tuple(parts)]})",
                                    expected="each label once", got=repr(line)))
            continue
        seen[tuple(parts)] = lineno
        try:
            c = ascii_int(parts[0])
            cx, cy, w, h = (float(x) for x in parts[1:])
            if c is None:
                raise ValueError(parts[0])
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


def _words(text: str) -> list[str] | None:
    """The words of YOLO label ``text`` when every non-blank line is five words, no line twice and every
    first word ASCII digits; else None. Every line break is whitespace, so the text's words are its
    lines' words in order."""
    lines = [p for p in map(str.split, text.splitlines()) if p]
    words = text.split()
    heads = "".join(words[0::5])
    if lines and (len(words) != 5 * len(lines) or set(map(len, lines)) != {5}
                  or len(set(map(tuple, lines))) < len(lines) or not (heads.isascii() and heads.isdigit())):
        return None
    return words


def plain_labels(texts: Sequence[str], *, n_classes: int,
                 sizes: Sequence[tuple[int, int]]) -> list[tuple[list[int], np.ndarray] | None]:
    """Per YOLO label text (of a frame of ``sizes``' width and height): its class ids and ``(k, 4)`` xyxy
    pixel boxes when :func:`parse_yolo_lines` finds no problem in it, computed for all the texts at once
    with the same arithmetic; else None (that text is then parsed line by line, naming what is wrong)."""
    out: list[tuple[list[int], np.ndarray] | None] = [None] * len(texts)
    taken, numbers, classes, counts = [], [], [], []     # the texts read in bulk, and their labels' fields
    for t, text in enumerate(texts):
        ws = _words(text)
        try:                                # int(): more than 4300 digits is a ValueError too
            values, cls = (list(map(float, ws)), list(map(int, ws[0::5]))) if ws is not None else (None, None)
        except ValueError:
            continue
        if values is not None and cls is not None and (not cls or max(cls) < n_classes):
            taken.append(t)
            numbers += values
            classes += cls
            counts.append(len(cls))
    if not taken:
        return out
    v = np.array(numbers, dtype=np.float64).reshape(-1, 5)
    wh = np.repeat(np.array([sizes[t] for t in taken], dtype=np.float64).reshape(-1, 2), counts, axis=0)
    cx, cy, w, h = v[:, 1], v[:, 2], v[:, 3], v[:, 4]
    with np.errstate(invalid="ignore", over="ignore"):        # rows with inf or nan fail below
        x1, y1, x2, y2 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
        coords = v[:, 1:]
        ok = np.isfinite(coords).all(axis=1) & ((coords >= -1e-6) & (coords <= 1 + 1e-6)).all(axis=1) \
            & (w > 0) & (h > 0) & (x1 >= -EDGE_TOLERANCE) & (y1 >= -EDGE_TOLERANCE) \
            & (x2 <= 1 + EDGE_TOLERANCE) & (y2 <= 1 + EDGE_TOLERANCE)
        boxes = np.stack([x1 * wh[:, 0], y1 * wh[:, 1], x2 * wh[:, 0], y2 * wh[:, 1]], axis=1)
    ends = np.cumsum(counts)
    for t, start, end in zip(taken, (ends - counts).tolist(), ends.tolist()):
        if ok[start:end].all():
            out[t] = (classes[start:end], boxes[start:end])
    return out


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
    labels = root / "labels"
    orphans = sorted(p.name for p in labels.glob("*.txt") if p.stem not in images and p.stem not in wanted) \
        if labels.is_dir() else []
    if orphans:
        raise InputError([Problem(str(labels / o), "label file without an image",
                                  expected=f"an image {root / 'images'}/{o[:-4]}.<ext>") for o in orphans[:20]])
    problems: list[Problem] = []
    label_class: list[int] = []
    label_boxes: list[np.ndarray] = [np.zeros((0, 4))]
    per_frame = np.zeros(len(wanted), np.int64)          # labels of each frame, in frame order
    size_list = []
    files: list[tuple[int, Path, str]] = []         # frame index, label file, its text: parsed BATCH at a time
    for fi, frame in enumerate(wanted):
        w, h = sizes[frame] if sizes and frame in sizes else image_size(images[frame])
        size_list.append((w, h))
        path = labels / f"{frame}.txt"
        if path.exists():
            files.append((fi, path, read_text(path, expected=f"YOLO label lines (a file of at most {LABEL_MAX_BYTES} "
                                                             "bytes)", max_bytes=LABEL_MAX_BYTES)))
        if len(files) == BATCH or fi == len(wanted) - 1:
            plain = plain_labels([text for _, _, text in files], n_classes=len(classes),
                                 sizes=[size_list[i] for i, _, _ in files])
            for (i, path, text), bulk in zip(files, plain):
                cls, boxes, probs = (bulk[0], bulk[1], []) if bulk is not None else _parse_lines(
                    text, where=str(path), n_classes=len(classes), width=size_list[i][0], height=size_list[i][1])
                problems.extend(probs)
                label_class += cls
                label_boxes.append(np.asarray(boxes, dtype=np.float64).reshape(-1, 4))
                per_frame[i] = len(cls)
            files = []
    if problems:
        raise InputError(problems)
    n = len(label_class)
    return GroundTruth(
        classes=classes, frames=tuple(wanted),
        sizes=np.asarray(size_list, dtype=np.int64).reshape(-1, 2),
        label_frame=np.repeat(np.arange(len(wanted), dtype=np.int64), per_frame),
        label_index=np.arange(n, dtype=np.int64) - np.repeat(np.cumsum(per_frame) - per_frame, per_frame),
        label_class=np.array(label_class, dtype=np.int64),
        label_boxes=np.concatenate(label_boxes),
        label_crowd=np.zeros(n, dtype=bool),
    )
