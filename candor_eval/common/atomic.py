"""Atomic, deterministic writes: nothing partial ever appears at a final path.

Every output is written to a temporary file in the destination folder, flushed
and fsynced, then moved into place with :func:`os.replace` (atomic on POSIX).
An interrupted stage therefore leaves either the old file or the new one, never
half of one. JSON is written with a fixed key order (as built), two-space
indent, ``allow_nan=False`` and a trailing newline, so equal content gives equal
bytes on every machine.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import msgspec

from candor_eval.common.errors import fail


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success move it into place. An existing folder at
    ``path``, or a file where one of its parent folders should be, is an InputError naming it."""
    final = Path(path)
    if final.is_dir():
        raise fail(str(final), "is a folder", expected="a file path to write")
    blocking = next((p for p in final.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise fail(str(blocking), "is a file", expected=f"a folder to hold {final}")
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp_path, 0o644)
        os.replace(tmp_path, final)
    finally:
        tmp_path.unlink(missing_ok=True)


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; move it into place on success."""
    with atomic_path(path) as tmp:
        text = "b" not in mode
        with open(tmp, mode, encoding="utf-8" if text else None, newline="\n" if text else None) as fh:
            yield fh


def pretty_json(obj: Any) -> str:
    """``json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)``, byte for byte, faster:
    the standard library's C encoder writes the values (its float and string forms), then msgspec
    only lays out the whitespace (its ``format`` copies every token as it is)."""
    return msgspec.json.format(json.dumps(obj, ensure_ascii=False, allow_nan=False), indent=2)


def dumps_json(obj: Any) -> str:
    """Deterministic JSON text: keys in insertion order, indent 2, no NaN, trailing newline."""
    return pretty_json(obj) + "\n"


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as deterministic JSON to ``path`` atomically."""
    with atomic_open(path) as fh:
        fh.write(dumps_json(obj))


class JsonListWriter:
    """Writes a JSON list item by item to an open text file ``fh``: after :meth:`close` the file
    holds exactly :func:`dumps_json` of the list of every item written (so a long list never has to
    be in memory at once).

    >>> import io
    >>> buf = io.StringIO(); w = JsonListWriter(buf); w.extend([{"a": [1, 2]}, 3]); w.close()
    >>> buf.getvalue() == dumps_json([{"a": [1, 2]}, 3])
    True
    """

    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.empty = True

    def extend(self, items: Iterable[Any]) -> None:
        """Append ``items`` to the list."""
        text = pretty_json(list(items))
        if text != "[]":
            self.fh.write(("[\n" if self.empty else ",\n") + text[2:-2])   # the entries, without "[\n", "\n]"
            self.empty = False

    def close(self) -> None:
        """End the list (and the file's text: a trailing newline) and flush it to the file, so the
        text is there even when the writer was used in a forked worker process."""
        self.fh.write("[]\n" if self.empty else "\n]\n")
        self.fh.flush()


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8, ``\\n`` newlines)."""
    with atomic_open(path) as fh:
        fh.write(text)


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Stream ``lines`` (each without newline) to ``path`` atomically."""
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")


def replace_dir_files(root: str | os.PathLike[str], files: dict[str, bytes], *, clean: bool) -> None:
    """Write ``files`` (path relative to ``root`` -> bytes) under ``root``, each atomically.

    With ``clean``, every other file under ``root`` is then removed, and so are the folders
    left empty: ``root`` holds exactly ``files`` (for an output folder a stage owns).
    """
    root = Path(root)
    for rel, blob in files.items():
        with atomic_path(root / rel) as tmp:
            tmp.write_bytes(blob)
    if clean:
        remove_others(root, keep=files)


def remove_others(root: str | os.PathLike[str], *, keep: Iterable[str]) -> None:
    """Remove every file under ``root`` but ``keep`` (paths relative to ``root``), then the folders
    left empty: what a stage does after writing an output folder it owns, so a file of an earlier
    run (a model or candidate since removed from params) does not linger as if it were current."""
    root = Path(root)
    if not root.is_dir():
        return
    wanted = {(root / r).resolve() for r in keep}
    for p in sorted(root.rglob("*"), reverse=True):
        if p.is_file() and p.resolve() not in wanted:
            p.unlink()
        elif p.is_dir() and not any(p.iterdir()):
            p.rmdir()
