"""A detector data set's frames: ``frames.csv`` (session, zoom, split per frame) and ``images/``.

``frames.csv`` is optional (:func:`load_frames`): without it every image of ``images/`` is a
frame of the ``test`` split with an empty session and zoom, so a set brought as a folder of
images and labels is scored as one held-out evaluation; write ``frames.csv`` to mark ``dev``
frames (the only ones thresholds are tuned on) and to report per session and zoom.

What is verified is what is read (:func:`check_listed`, called by :func:`load_frames`, which every
reader of a set calls first): when the set has a ``manifest.csv``, every file a reader would read
(:func:`read_files`: ``frames.csv``, ``classes.txt``, ``coco.json``, each image of ``images/``, each
``labels/*.txt``) must be listed in it; an unlisted one (an image added to ``images/`` without
``candor fetch manifest``) is an input error naming it, never scored unverified.

``frames.csv`` is a regular file of at most :data:`FRAMES_MAX_BYTES` (64 MiB: over a million
frames); a larger file, a device (a symlink to ``/dev/zero``) or a FIFO is an input error naming
it, never read (:func:`candor_eval.common.tables.read_bytes`).

Both inference (which frames to run, where their images are) and scoring (splits, sessions,
zooms) read these, so they live beside, not inside, either sub-package.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.manifest import MANIFEST_NAME, load_manifest
from candor_eval.common.tables import read_rows
from candor_eval.common.unique import repeat_of

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
SPLITS = ("dev", "test")
COLUMNS = ("frame", "session", "zoom", "split")
FRAMES_MAX_BYTES = 64 * 2 ** 20
SET_FILES = ("frames.csv", "classes.txt", "coco.json")     # the set's own files a reader reads when present


@dataclass(frozen=True)
class FrameInfo:
    """``frames.csv``: per frame its capture ``session``, ``zoom`` and ``split`` (dev/test), sorted by frame."""

    frames: tuple[str, ...]
    session: tuple[str, ...]
    zoom: tuple[str, ...]
    split: tuple[str, ...]
    rows: tuple[int, ...] = ()      # each frame's row of frames.csv (empty: no frames.csv)


def read_frames(path: Path) -> FrameInfo:
    """Read and validate ``frames.csv`` (:func:`~candor_eval.common.tables.read_rows`; columns
    ``frame,session,zoom,split``, values stripped; frame ids non-empty and unique; split in
    dev/test; at most :data:`FRAMES_MAX_BYTES`, a regular file). Every problem is reported at once, naming its
    row and column."""
    problems: list[Problem] = []
    rows: dict[str, tuple[str, str, str]] = {}
    first: dict[str, int] = {}
    for rowno, row in read_rows(path, columns=COLUMNS, max_bytes=FRAMES_MAX_BYTES).rows:
        frame = row["frame"].strip()
        split = row["split"].strip()
        if not frame:
            problems.append(Problem(f"{path}:row {rowno}.frame", "empty frame id"))
        elif (repeat := repeat_of(first, frame, where=f"{path}:row {rowno}.frame", noun="frame id")) is not None:
            problems.append(repeat)
        if split not in SPLITS:
            problems.append(Problem(f"{path}:row {rowno}.split", "unknown split", expected=" or ".join(SPLITS),
                                    got=repr(split)))
        if frame and frame not in rows:
            rows[frame] = (row["session"].strip(), row["zoom"].strip(), split)
            first[frame] = rowno
    if problems:
        raise InputError(problems)
    order = sorted(rows)
    return FrameInfo(frames=tuple(order), session=tuple(rows[f][0] for f in order),
                     zoom=tuple(rows[f][1] for f in order), split=tuple(rows[f][2] for f in order),
                     rows=tuple(first[f] for f in order))


def check_sessions_within_splits(info: FrameInfo, *, where: str) -> None:
    """Every capture session lies in one split: a session with ``dev`` and ``test`` frames is the
    leakage that clustering by session exists to expose (thresholds tuned on frames of the very
    session the test frames come from), so it is an InputError naming the session and its rows
    of ``frames.csv`` (``where``) per split. The empty session (no session given) is no session.

    >>> info = FrameInfo(("a", "b", "c"), ("s1", "s1", "s2"), ("", "", ""), ("dev", "test", "test"), (2, 3, 4))
    >>> check_sessions_within_splits(info, where="frames.csv")
    Traceback (most recent call last):
    ...
    candor_eval.common.errors.InputError: frames.csv: session 's1' lies in two splits: dev row 2 (a); test row 3 (b)
    hint: put every frame of a capture session in one split (frames.csv split column)
    """
    rows = info.rows or (None,) * len(info.frames)
    by: dict[str, dict[str, list[str]]] = {}
    for frame, session, split, row in zip(info.frames, info.session, info.split, rows):
        if session:
            by.setdefault(session, {}).setdefault(split, []).append(frame if row is None else f"row {row} ({frame})")
    problems = [Problem(where, f"session {name!r} lies in two splits: "
                               + "; ".join(f"{split} " + ", ".join(found[:5]) + (" ..." if len(found) > 5 else "")
                                           for split, found in sorted(splits.items())))
                for name, splits in sorted(by.items()) if len(splits) > 1]
    if problems:
        raise InputError(problems, hint="put every frame of a capture session in one split (frames.csv split column)")


def read_files(data: Path) -> list[str]:
    """Every file of data set folder ``data`` that a reader reads, as a path relative to ``data``,
    sorted: those of :data:`SET_FILES` present, every image of ``images/`` (by suffix, as
    :func:`find_images` picks them) and every ``labels/*.txt``."""
    out = [name for name in SET_FILES if (data / name).is_file()]
    for folder, picked in (("images", lambda p: p.suffix.lower() in IMAGE_SUFFIXES),
                           ("labels", lambda p: p.suffix == ".txt")):
        if (data / folder).is_dir():
            out += [f"{folder}/{p.name}" for p in (data / folder).iterdir() if picked(p)]
    return sorted(out)


def unlisted(data: Path) -> list[Problem]:
    """A Problem naming each file a reader of ``data`` reads (:func:`read_files`) that its
    ``manifest.csv`` does not list (none when ``data`` has no manifest; one that is there but not a regular file,
    a symlink to ``/dev/zero`` or a dangling one, is read and refused, never taken for no manifest)."""
    if not ((data / MANIFEST_NAME).is_symlink() or (data / MANIFEST_NAME).exists()):
        return []
    listed = {e.path for e in load_manifest(data / MANIFEST_NAME).entries}
    return [Problem(str(data / rel), f"not listed in {data / MANIFEST_NAME}, so not verified",
                    expected="only the files the manifest lists")
            for rel in read_files(data) if rel not in listed]


def check_listed(data: Path) -> None:
    """When ``data`` has a ``manifest.csv``: every file a reader reads (:func:`read_files`) is
    listed in it, else an InputError naming each unlisted file (:func:`unlisted`; the first 20)."""
    if problems := unlisted(data):
        raise InputError(problems[:20], hint=f"to read it, list it: candor fetch manifest {data} "
                                             "(then dvc repro fetch); else remove it")


def load_frames(data: Path) -> FrameInfo:
    """The frames of data set folder ``data``: its ``frames.csv`` (:func:`read_frames`), or when it
    has none every image of ``images/`` as a ``test`` frame (module docstring); first, every file
    a reader reads must be listed in its manifest (:func:`check_listed`)."""
    check_listed(Path(data))
    table = Path(data) / "frames.csv"
    if table.exists():
        return read_frames(table)
    frames = tuple(sorted(find_images(Path(data) / "images")))
    if not frames:
        raise fail(str(Path(data) / "images"), "no frames: neither frames.csv nor images",
                   expected="images/*.jpg|png|... and optionally frames.csv")
    return FrameInfo(frames=frames, session=("",) * len(frames), zoom=("",) * len(frames),
                     split=("test",) * len(frames))


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) from an image file's header (the pixels are not decoded)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return int(im.size[0]), int(im.size[1])
    except FileNotFoundError:
        raise fail(str(path), "image not found") from None
    except (UnidentifiedImageError, OSError) as err:
        raise fail(str(path), f"not a readable image ({err})") from None


def find_images(folder: Path) -> dict[str, Path]:
    """Frame id (file stem) -> image path for every image in ``folder``; duplicate stems are an error."""
    out: dict[str, Path] = {}
    if not folder.is_dir():
        raise fail(str(folder), "folder not found", expected="a folder of frame images")
    for p in sorted(folder.iterdir()):
        if p.suffix.lower() in IMAGE_SUFFIXES:
            if p.stem in out:
                raise fail(str(p), "two images share the frame id", got=[out[p.stem].name, p.name])
            out[p.stem] = p
    return out
