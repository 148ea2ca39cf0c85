"""Manifests: the ordered, hashed list of files that make up one data set.

A manifest is ``data/<set>/manifest.csv``: one row per file, sorted by ``path``,
with columns ``path,sha256,bytes`` plus an optional ``source`` (where to fetch the
file when it is missing: ``file://`` URL, a path relative to the manifest's
folder, ``http(s)://``, or any fsspec URL) and any extra columns the data set
needs (``session``, ``zoom``, ``split``...). Paths are relative POSIX paths inside
the data set's folder; absolute paths, ``..`` parts, backslashes, a component that
starts or ends with whitespace, duplicates, unsorted rows and malformed digests are rejected
before any file is read (and ``fetch manifest`` refuses to list such a file); a listed file
that is a symlink out of the folder is refused by verify (:mod:`candor_eval.common.verify`).

A manifest is a regular file of at most :data:`MANIFEST_MAX_BYTES` (256 MiB: a million rows with
their source URLs); a larger file, a device (a symlink to ``/dev/zero``) or a FIFO is an input
error naming it, never read (:func:`candor_eval.common.tables.read_bytes`).

The manifest's own identity (:func:`manifest_sha256`) is the SHA-256 of the
canonical listing ``"<sha256>  <path>\\n"`` per row, in order (the format of
``sha256sum``): it identifies the ordered set of file contents and does not
change when a mirror URL or a metadata column changes.

Pure functions here decide; :mod:`candor_eval.common.verify` acts.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath

from candor_eval.common.errors import InputError, Problem
from candor_eval.common.tables import ascii_int, csv_text, parse_rows, read_text
from candor_eval.common.unique import repeat_of

MANIFEST_NAME = "manifest.csv"
REQUIRED_COLUMNS = ("path", "sha256", "bytes")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
CHUNK = 1 << 20
MANIFEST_MAX_BYTES = 256 * 2 ** 20


@dataclass(frozen=True)
class Entry:
    """One file of a data set: ``path`` relative to the set's folder."""

    path: str
    sha256: str
    bytes: int | None         # None: not declared (a model card's ONNX file); else compared with the file
    source: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Manifest:
    """A validated manifest: its file, the set's root folder and its entries in order."""

    file: Path
    entries: tuple[Entry, ...]
    columns: tuple[str, ...]

    @property
    def root(self) -> Path:
        return self.file.parent

    @property
    def sha256(self) -> str:
        return manifest_sha256(self.entries)

    @property
    def total_bytes(self) -> int:
        return sum(e.bytes or 0 for e in self.entries)


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_sha256(entries: tuple[Entry, ...] | list[Entry]) -> str:
    """SHA-256 of the canonical ``sha256sum``-style listing of ``entries`` in order."""
    listing = "".join(f"{e.sha256}  {e.path}\n" for e in entries)
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a safe relative POSIX path inside a data set, or None."""
    if not path:
        return "empty path"
    if "\\" in path:
        return "backslash in path (paths are POSIX, '/'-separated)"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return "absolute path (paths are relative to the manifest's folder)"
    parts = PurePosixPath(path).parts
    if ".." in parts:
        return "'..' in path (paths must stay inside the data set's folder)"
    if any(p in ("", ".") for p in path.split("/")):
        return "empty or '.' path component"
    if any(p != p.strip() for p in path.split("/")):
        return "a path component starts or ends with whitespace (a reader that trims it names another file)"
    if path == MANIFEST_NAME:
        return "the manifest cannot list itself"
    return None


def parse_manifest(text: str, *, file: Path) -> Manifest:
    """Validate manifest CSV ``text`` (read from ``file``) into a :class:`Manifest`.

    Every row is checked and all problems are reported at once, each naming the
    file, the row number (the header is row 1) and the field.
    """
    table = parse_rows(text, where=str(file), columns=REQUIRED_COLUMNS)
    columns = table.header
    extra_cols = [c for c in columns if c not in (*REQUIRED_COLUMNS, "source")]
    problems: list[Problem] = []
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for rowno, row in table.rows:
        where = f"{file}:row {rowno}"
        path = row["path"] or ""
        digest = (row["sha256"] or "").strip()
        size = (row["bytes"] or "").strip()
        bad = False
        if (why := path_problem(path)) is not None:
            problems.append(Problem(f"{where}.path", why, got=repr(path)))
            bad = True
        elif (repeat := repeat_of(seen, path, where=f"{where}.path", noun="path")) is not None:
            problems.append(repeat)
            bad = True
        if not HEX64.match(digest):
            problems.append(Problem(f"{where}.sha256", "malformed digest",
                                    expected="64 lower-case hex digits", got=repr(digest)))
            bad = True
        if ascii_int(size) is None:
            problems.append(Problem(f"{where}.bytes", "not a byte count",
                                    expected="a non-negative integer (ASCII digits)", got=repr(size)))
            bad = True
        if bad:
            continue
        seen[path] = rowno
        entries.append(Entry(path=path, sha256=digest, bytes=int(size),
                             source=(row.get("source") or "").strip() or None,
                             extra={c: row[c] or "" for c in extra_cols}))
    if not problems:
        for prev, cur in zip(entries, entries[1:]):
            if cur.path < prev.path:
                problems.append(Problem(f"{file}:row {seen[cur.path]}.path",
                                        f"rows are not sorted by path ({cur.path!r} after {prev.path!r})"))
                break
    if problems:
        raise InputError(problems, hint=f"rewrite it with: candor fetch manifest {file.parent}")
    return Manifest(file=file, entries=tuple(entries), columns=columns)


def load_manifest(file: str | Path) -> Manifest:
    """Read and validate a manifest file (a regular file of at most :data:`MANIFEST_MAX_BYTES`)."""
    p = Path(file)
    return parse_manifest(read_text(p, expected=f"a manifest (path,sha256,bytes) of at most {MANIFEST_MAX_BYTES} bytes",
                                    max_bytes=MANIFEST_MAX_BYTES), file=p)


class Action(Enum):
    """What fetch-and-verify does with one entry."""

    VERIFY = "verify"    # present: hash it and compare
    FETCH = "fetch"      # missing, has a source: download to a temp file, verify, move into place
    MISSING = "missing"  # missing and no source: a problem


def decide(entry: Entry, *, root: Path) -> Action:
    """Decide what to do with ``entry`` of the data set rooted at ``root``."""
    if (root / entry.path).is_file():
        return Action.VERIFY
    return Action.FETCH if entry.source else Action.MISSING


def size_mismatch(entry: Entry, *, where: str, actual_bytes: int) -> Problem | None:
    """The Problem when a file's size is not the manifest's ``bytes`` (None when it is, or undeclared)."""
    if entry.bytes is None or actual_bytes == entry.bytes:
        return None
    return Problem(where, "size differs from the manifest's bytes", expected=f"{entry.bytes} bytes",
                   got=f"{actual_bytes} bytes")


def mismatch(entry: Entry, *, where: str, actual_sha256: str | None) -> Problem | None:
    """The Problem when a file's actual hash is not the expected one (None when it matches).

    ``actual_sha256`` None means the file is missing.
    """
    if actual_sha256 == entry.sha256:
        return None
    return Problem(where, "SHA-256 mismatch" if actual_sha256 else "missing",
                   expected=entry.sha256, got=actual_sha256 or "missing")


def build_manifest_rows(root: Path, *, extra: dict[str, dict[str, str]] | None = None) -> list[Entry]:
    """Entries for every file under ``root`` (except the manifest, dotfiles and DVC's ``*.dvc`` pointer files), sorted
    by path. A ``.dvc`` file is DVC's record of a tracked folder (``recordings.dvc``: the recordings kept out of
    Git), rewritten by ``dvc repro``/``dvc commit``; the files it tracks are listed themselves.

    ``extra`` maps a path to its extra columns (e.g. ``session``, ``zoom``, ``split``).
    A file whose path the manifest reader would refuse (:func:`path_problem`, e.g. a name with a
    leading space) is an InputError naming each: the manifest never lists what verify refuses.
    """
    extra = extra or {}
    out = []
    problems = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if not p.is_file() or rel == MANIFEST_NAME or p.suffix == ".dvc" or any(part.startswith(".")
                                                                                for part in rel.split("/")):
            continue
        if (why := path_problem(rel)) is not None:
            problems.append(Problem((root / rel).as_posix(), why, expected="a file name the manifest can hold",
                                    got=repr(rel)))
            continue
        out.append(Entry(path=rel, sha256=sha256_file(p), bytes=p.stat().st_size, extra=extra.get(rel, {})))
    if problems:
        raise InputError(problems, hint="rename the file(s), then rerun")
    return sorted(out, key=lambda e: e.path)


def format_manifest(entries: list[Entry] | tuple[Entry, ...], *, extra_columns: tuple[str, ...] = (),
                    with_source: bool = False) -> str:
    """CSV text of a manifest (``\\n`` line endings, columns in a fixed order)."""
    cols = [*REQUIRED_COLUMNS, *(["source"] if with_source else []), *extra_columns]
    rows = [[e.path, e.sha256, str(e.bytes), *([e.source or ""] if with_source else []),
             *(e.extra.get(c, "") for c in extra_columns)] for e in entries]
    return csv_text(cols, rows)
