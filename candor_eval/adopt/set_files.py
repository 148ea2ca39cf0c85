"""The folder ``candor add set`` writes, ``<dir>/data/<set>/``: which file comes from where.

A detection set brought from a training repository holds (:mod:`candor_eval.detection.sets`):

- ``images/<file>``: a copy of each image, its file name kept (the frame id is its stem, so
  stems are unique in a set);
- YOLO labels: ``labels/<stem>.txt``, a copy of each image's label file (an image without one
  has none: no labels), and ``classes.txt``, the class names in index order, one per line;
- or COCO: ``coco.json``, a copy of the annotation file;
- ``frames.csv`` only for ``dev`` frames: without it every image is a ``test`` frame
  (:func:`candor_eval.detection.frames.load_frames`), so a held-out evaluation set needs none;
  for ``dev`` it lists every frame with that split, session and zoom empty (:func:`frames_text`);
- ``manifest.csv`` (:mod:`candor_eval.common.manifest`): every file but itself and the
  ``.gitignore``, with the SHA-256 and size of the copy, and for a copy its ``source``: the
  user's file, which ``candor fetch`` copies in when the copy is missing (a fresh clone;
  :func:`source_ref`);
- ``.gitignore``: the copies (``/images/``, ``/labels/``, ``/coco.json``) are the user's data,
  versioned where they came from; the written files are committed (:func:`gitignore_text`).

A rerun rewrites the folder whole (a changed split's copies; a removed image gone). A folder
holding anything else (:func:`foreign`) is refused, so nothing of the user's is overwritten.
Nothing here reads or writes a file.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from candor_eval.common.errors import Problem
from candor_eval.common.manifest import MANIFEST_NAME, Entry, format_manifest, path_problem
from candor_eval.common.tables import csv_text
from candor_eval.detection.frames import COLUMNS as FRAME_COLUMNS

IMAGES, LABELS, CLASSES, COCO, FRAMES, GITIGNORE = "images", "labels", "classes.txt", "coco.json", "frames.csv", \
    ".gitignore"
OWNED = (IMAGES, LABELS, CLASSES, COCO, FRAMES, MANIFEST_NAME, GITIGNORE)   # what a set folder of add set holds


@dataclass(frozen=True)
class SetFile:
    """One file of the set: ``path`` inside the set folder, and either the user's file it is a copy
    of (``source``) or its ``text``."""

    path: str
    source: Path | None = None
    text: str | None = None


def plan(images: Sequence[Path], *, split: str, labels: Sequence[Path | None] = (), names: Sequence[str] = (),
         coco: Path | None = None) -> tuple[list[SetFile], list[Problem]]:
    """The files of a set of ``images`` with YOLO ``labels`` (one per image, None: no labels) and
    class ``names``, or with the COCO file ``coco``; ``split`` is the frames' split (``dev`` or
    ``test``). Returns them sorted by path, and the problems: two images with one stem, a file name
    a manifest cannot hold.

    >>> files, _ = plan([Path("/d/images/a.jpg")], labels=[Path("/d/labels/a.txt")], names=["cat"], split="test")
    >>> [(f.path, f.source and f.source.as_posix(), f.text) for f in files]  # doctest: +NORMALIZE_WHITESPACE
    [('classes.txt', None, 'cat\\n'), ('images/a.jpg', '/d/images/a.jpg', None),
     ('labels/a.txt', '/d/labels/a.txt', None)]
    """
    files: list[SetFile] = []
    problems: list[Problem] = []
    first: dict[str, Path] = {}
    for i, image in enumerate(images):
        if image.stem in first:
            problems.append(Problem(str(image), "two images share the frame id (file stem)",
                                    expected="one image per file stem in the set", got=f"{first[image.stem]} too"))
            continue
        first[image.stem] = image
        files.append(SetFile(f"{IMAGES}/{image.name}", source=image))
        label = labels[i] if labels else None
        if label is not None:
            files.append(SetFile(f"{LABELS}/{image.stem}.txt", source=label))
    if coco is not None:
        files.append(SetFile(COCO, source=coco))
    else:
        files.append(SetFile(CLASSES, text="".join(f"{n}\n" for n in names)))
    if split == "dev":
        files.append(SetFile(FRAMES, text=frames_text(sorted(first), split=split)))
    problems += [Problem(str(f.source), why, expected="a file name a manifest can hold", got=f.path)
                 for f in files if (why := path_problem(f.path)) is not None]
    return sorted(files, key=lambda f: f.path), problems


def frames_text(frames: Sequence[str], *, split: str) -> str:
    """``frames.csv`` with every frame of ``frames`` in ``split``, session and zoom empty.

    >>> frames_text(["a", "b"], split="dev")
    'frame,session,zoom,split\\na,,,dev\\nb,,,dev\\n'
    """
    return csv_text(FRAME_COLUMNS, [(f, "", "", split) for f in frames])


def source_ref(source: Path, *, folder: Path, repo: Path | None) -> str:
    """Where the manifest says a copy comes from: ``source`` relative to the set ``folder`` when both
    lie in the repository ``repo`` (a clone elsewhere finds it), else its absolute path (a file
    outside the repository stays where it is). All three paths are absolute.

    >>> source_ref(Path("/r/datasets/b/a.jpg"), folder=Path("/r/eval/data/b"), repo=Path("/r"))
    '../../../datasets/b/a.jpg'
    >>> source_ref(Path("/mnt/b/a.jpg"), folder=Path("/r/eval/data/b"), repo=Path("/r"))
    '/mnt/b/a.jpg'
    """
    if repo is not None and source.is_relative_to(repo) and folder.is_relative_to(repo):
        return Path(os.path.relpath(source, folder)).as_posix()
    return source.as_posix()


def gitignore_text(files: Sequence[SetFile]) -> str:
    """The set folder's ``.gitignore``: the top-level names of the copies.

    >>> gitignore_text([SetFile("images/a.jpg", source=Path("/a.jpg")), SetFile("classes.txt", text="a\\n")])
    '# copies of the data set, fetched from their source (manifest.csv) by `candor fetch`\\n/images/\\n'
    """
    tops = sorted({f.path.split("/")[0] + ("/" if "/" in f.path else "") for f in files if f.source is not None})
    return "# copies of the data set, fetched from their source (manifest.csv) by `candor fetch`\n" + "".join(
        f"/{t}\n" for t in tops)


def manifest_text(files: Sequence[SetFile], *, digests: dict[str, tuple[str, int]], sources: dict[str, str]) -> str:
    """``manifest.csv`` of ``files``: per path its (SHA-256, bytes) from ``digests`` and its
    ``source`` from ``sources`` (a written file has none)."""
    entries = [Entry(f.path, *digests[f.path], source=sources.get(f.path)) for f in sorted(files, key=lambda f: f.path)]
    return format_manifest(entries, with_source=True)


def foreign(names: Sequence[str]) -> list[str]:
    """The top-level names of an existing set folder that ``add set`` does not write (it refuses to
    replace a folder holding them).

    >>> foreign(["images", "manifest.csv", "notes.md"])
    ['notes.md']
    """
    return sorted(n for n in names if n not in OWNED)
