"""An Ultralytics detection data set (its ``data.yaml``): the class names, and one split's images and labels.

The rules are Ultralytics' (``ultralytics/data/utils.py``: ``check_det_dataset``, ``check_class_names``,
``img2label_paths``; ``ultralytics/data/base.py``: ``BaseDataset.get_img_files``), read here
without Ultralytics:

- **names**: ``names`` is a list (index order) or a mapping index -> name whose indices are
  exactly ``0..n-1`` (integers, or strings of them); without ``names``, ``nc`` classes named
  ``class_0``, ``class_1``...; with both, ``nc`` must be the number of names (:func:`class_names`).
- **root**: ``path``, the data set's root; missing or empty: the data.yaml's folder. A relative
  ``path`` is relative to the data.yaml's folder. (Ultralytics tries it against the working
  directory, then its settings' datasets folder; neither is known where candor runs, and a
  data.yaml kept beside its data is the layout that works from anywhere: give an absolute
  ``path`` otherwise.)
- **split**: the value of the split key (``val`` by default; ``val`` is also read from
  ``validation``, as Ultralytics renames it): one entry or a list, each relative to the root (or
  absolute): a folder (every image under it, recursively) or a text file listing images, one per
  line, a line starting with ``./`` relative to the list's folder (Ultralytics reads any other
  relative line against the working directory; here it is relative to the list's folder too).
- **images**: the files with an Ultralytics image suffix (any case); candor reads ``.jpg``,
  ``.jpeg``, ``.png``, ``.bmp`` and ``.webp`` (:data:`candor_eval.detection.frames.IMAGE_SUFFIXES`),
  so any other image format is an error naming the file. A listed file that is missing is an error.
- **labels**: an image's label file is its path with the last ``/images/`` replaced by
  ``/labels/`` and the suffix by ``.txt`` (:func:`label_path`). A missing label file is an image
  without labels (a background image), as in Ultralytics.

:func:`read_split` applies these to a data.yaml; :func:`label_problems` checks every label line
with candor's own YOLO reader (:func:`candor_eval.detection.scoring.yolo.parse_yolo_lines`): five
fields (a segment's polygon is refused), a class index below the number of names, a box inside
the image, no line twice. Every problem names the user's file and line.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.params import load_yaml
from candor_eval.common.tables import read_text
from candor_eval.detection.frames import IMAGE_SUFFIXES, image_size
from candor_eval.detection.scoring.yolo import parse_yolo_lines

# Ultralytics' IMG_FORMATS (ultralytics/data/utils.py): what it takes for an image
ULTRALYTICS_IMAGES = ("bmp", "dng", "jpeg", "jpg", "mpo", "png", "tif", "tiff", "webp", "pfm", "heic")
SPLIT_ALIASES = {"val": ("val", "validation")}


@dataclass(frozen=True)
class Split:
    """One split of a data set: its class ``names`` (index order), its ``images`` (absolute paths,
    sorted) and per image its label file, or None when the image has none."""

    names: tuple[str, ...]
    images: tuple[Path, ...]
    labels: tuple[Path | None, ...]


def class_names(doc: dict[str, Any], *, where: str) -> tuple[str, ...]:
    """The class names of a data.yaml's content ``doc`` (module docstring); ``where`` names the file.

    >>> class_names({"names": {1: "car", 0: "person"}}, where="data.yaml")
    ('person', 'car')
    >>> class_names({"nc": 2}, where="data.yaml")
    ('class_0', 'class_1')
    """
    names, nc = doc.get("names"), doc.get("nc")
    if names is None and nc is None:
        raise fail(f"{where}:names", "missing", expected="names: [class names] (or {0: name, 1: name, ...})")
    if names is None:
        if type(nc) is not int or nc < 1:
            raise fail(f"{where}:nc", "not a number of classes", expected="an integer >= 1", got=nc)
        return tuple(f"class_{i}" for i in range(nc))
    if isinstance(names, list):
        table = dict(enumerate(names))
    elif isinstance(names, dict):
        table = {}
        for key, value in names.items():
            index = key if type(key) is int else int(key) if isinstance(key, str) and key.isdigit() else None
            if index is None:
                raise fail(f"{where}:names", "a key is not a class index", expected="integers 0..n-1", got=key)
            table[index] = value
        if sorted(table) != list(range(len(table))):
            raise fail(f"{where}:names", "the class indices are not 0..n-1", expected=f"0..{len(table) - 1}",
                       got=sorted(table))
    else:
        raise fail(f"{where}:names", "not a list or a mapping", expected="[names] or {index: name}",
                   got=type(names).__name__)
    out = tuple(str(table[i]).strip() if table[i] is not None else "" for i in range(len(table)))
    if not out or any(not n for n in out):
        raise fail(f"{where}:names", "an empty class name", expected="a non-empty name per class", got=list(out))
    if nc is not None and nc != len(out):
        raise fail(f"{where}:nc", "not the number of names", expected=str(len(out)), got=nc)
    return out


def split_entries(doc: dict[str, Any], *, file: Path, split: str) -> list[Path]:
    """The folders and list files of ``split`` in data.yaml ``file`` (content ``doc``), joined to
    the data set's root (module docstring); nothing is read here.

    >>> split_entries({"path": "../sets/birds", "val": ["images/a", "/abs/b"]}, file=Path("cfg/data.yaml"),
    ...               split="val")
    [PosixPath('cfg/../sets/birds/images/a'), PosixPath('/abs/b')]
    """
    key = next((k for k in SPLIT_ALIASES.get(split, (split,)) if doc.get(k) is not None), None)
    if key is None:
        present = [k for k in ("train", "val", "validation", "test", "minival") if doc.get(k) is not None]
        raise fail(f"{file}:{split}", "no such split in the data.yaml",
                   expected="a folder of images, a list of folders, or a .txt file listing images",
                   hint=f"the splits it has: {', '.join(present) or 'none'}; pick one with --split")
    value = doc[key]
    entries = value if isinstance(value, list) else [value]
    if not entries or not all(isinstance(e, str) and e.strip() for e in entries):
        raise fail(f"{file}:{key}", "not a path or a list of paths", got=value)
    path = doc.get("path")
    if path is not None and not isinstance(path, str):
        raise fail(f"{file}:path", "not a path", got=path)
    root = file.parent / path if path else file.parent
    return [root / e.strip() for e in entries]


def label_path(image: Path) -> Path:
    """Ultralytics' label file of ``image``: the last ``/images/`` of its path becomes ``/labels/``
    and its suffix ``.txt`` (``img2label_paths``).

    >>> label_path(Path("/d/images/val/images/a.b.jpg")).as_posix(), label_path(Path("/d/pics/a.png")).as_posix()
    ('/d/images/val/labels/a.b.txt', '/d/pics/a.txt')
    """
    text = image.as_posix()
    head, sep, tail = text.rpartition("/images/")
    text = f"{head}/labels/{tail}" if sep else text
    return Path(text.rsplit(".", 1)[0] + ".txt")


def is_image(path: str | Path) -> bool:
    """Ultralytics takes ``path`` for an image (its suffix, any case)."""
    return str(path).rpartition(".")[2].lower() in ULTRALYTICS_IMAGES


def list_images(entries: Sequence[Path], *, where: str) -> list[Path]:
    """Every image of ``entries`` (folders: recursively; files: lists of images), absolute, sorted,
    each once; a missing entry, a listed file that is missing, an image candor cannot read, or no
    image at all is an InputError naming them."""
    found: list[Path] = []
    problems: list[Problem] = []
    for entry in entries:
        entry = entry.absolute()
        if entry.is_dir():
            found += [p for p in entry.rglob("*.*") if p.is_file() and is_image(p)]
        elif entry.is_file():
            for lineno, line in enumerate(read_text(entry, expected="a list of images").splitlines(), start=1):
                line = line.strip()
                if not line:
                    continue
                p = Path(line[2:]) if line.startswith("./") else Path(line)
                p = p if p.is_absolute() else entry.parent / p
                if not is_image(p):
                    continue
                if not p.is_file():
                    problems.append(Problem(f"{entry}:{lineno}", "listed image not found", got=line))
                else:
                    found.append(p)
        else:
            problems.append(Problem(where, "split entry not found", expected="a folder of images or a .txt list",
                                    got=str(entry)))
    unreadable = sorted(p for p in found if p.suffix.lower() not in IMAGE_SUFFIXES)
    problems += [Problem(str(p), "an image format candor does not read", expected=" ".join(IMAGE_SUFFIXES))
                 for p in unreadable[:20]]
    if problems:
        raise InputError(problems)
    if not found:
        raise fail(where, "no images in the split", expected="images with one of: " + " ".join(IMAGE_SUFFIXES),
                   got=[str(e) for e in entries])
    return sorted(set(found))


def read_split(data_yaml: Path, *, split: str = "val") -> Split:
    """Class names, images and label files of ``split`` of ``data_yaml`` (module docstring)."""
    doc = load_yaml(data_yaml)
    if not isinstance(doc, dict):
        raise fail(str(data_yaml), "not a mapping", expected="an Ultralytics data.yaml (path, train, val, names)")
    names = class_names(doc, where=str(data_yaml))
    images = list_images(split_entries(doc, file=data_yaml, split=split), where=f"{data_yaml}:{split}")
    labels = [label_path(p) for p in images]
    return Split(names=names, images=tuple(images), labels=tuple(p if p.is_file() else None for p in labels))


def label_problems(split: Split) -> list[Problem]:
    """Every problem of the split's label files, by candor's YOLO reader (module docstring), each
    naming the label file and line."""
    problems: list[Problem] = []
    for image, label in zip(split.images, split.labels):
        if label is None:
            continue
        width, height = image_size(image)
        problems += parse_yolo_lines(read_text(label, expected="YOLO label lines"), where=str(label),
                                     n_classes=len(split.names), width=width, height=height)[2]
    return problems

