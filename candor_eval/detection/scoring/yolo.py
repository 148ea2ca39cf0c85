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
from pathlib import Path

import numpy as np

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import ascii_int, read_text
from candor_eval.common.unique import repeated
from candor_eval.detection.frames import find_images, image_size
from candor_eval.detection.scoring.columns import EDGE_TOLERANCE, GroundTruth

LABEL_MAX_BYTES = 16 * 2 ** 20
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
    """Parse one YOLO label file into class ids and xyxy boxes in pixels (plus problems)."""
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
    rows: list[tuple[int, int, int, list[float]]] = []
    size_list = []
    for fi, frame in enumerate(wanted):
        w, h = sizes[frame] if sizes and frame in sizes else image_size(images[frame])
        size_list.append((w, h))
        path = labels / f"{frame}.txt"
        if not path.exists():
            continue
        text = read_text(path, expected=f"YOLO label lines (a file of at most {LABEL_MAX_BYTES} bytes)",
                         max_bytes=LABEL_MAX_BYTES)
        cls, boxes, probs = parse_yolo_lines(text, where=str(path),
                                             n_classes=len(classes), width=w, height=h)
        problems.extend(probs)
        rows.extend((fi, k, c, b) for k, (c, b) in enumerate(zip(cls, boxes)))
    if problems:
        raise InputError(problems)
    n = len(rows)
    return GroundTruth(
        classes=classes, frames=tuple(wanted),
        sizes=np.asarray(size_list, dtype=np.int64).reshape(-1, 2),
        label_frame=np.array([r[0] for r in rows], dtype=np.int64),
        label_index=np.array([r[1] for r in rows], dtype=np.int64),
        label_class=np.array([r[2] for r in rows], dtype=np.int64),
        label_boxes=np.array([r[3] for r in rows], dtype=np.float64).reshape(n, 4),
        label_crowd=np.zeros(n, dtype=bool),
    )
