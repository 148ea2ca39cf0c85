"""Atomic, deterministic writes: nothing partial ever appears at a final path, and nothing but
final files ever appears in an output folder.

Every output is written to a temporary file, flushed and fsynced, then moved into place with
:func:`os.replace` (atomic on POSIX, within one file system). The temporary file is not beside the
output but in a temporary folder, :data:`TMP_DIR`, in the working directory (a DVC stage runs in
its ``dvc.yaml``'s folder, and every output lies under it) when the output lies under it on the
same file system, else beside the output. An interrupted stage therefore leaves either the old file
or the new one, never half of one, and a kill (``kill -9``) leaves its temporary file only in
:data:`TMP_DIR`, never in an output folder that Git lists or DVC hashes. The folder ignores itself
(it holds a ``.gitignore`` of ``*``); every write first sweeps it of the temporaries whose writer is
gone (each writer holds an exclusive :func:`fcntl.flock` on its temporary until it is moved into
place; the kernel drops the lock when the process dies), and removes it once it is empty.

A file whose bytes would not change is not written again: when the path already is a regular
file (not a link) of mode ``0644`` holding exactly the new bytes (:func:`holds`), the write leaves
it as it is (its inode and modification time too), so a stage that changes 13 of its 77 outputs
fsyncs 13. Content known before the write (:func:`write_bytes`, :func:`write_text`,
:func:`write_json`, :func:`replace_dir_files`) is compared before any temporary file exists;
content streamed through :func:`atomic_path` / :func:`atomic_open` is compared once complete, and
an equal temporary is discarded instead of moved into place. Either way the final path holds the
old bytes or the new ones, which are the same: the guarantees above are unchanged.

JSON is written with a fixed key order (as built), two-space indent, ``allow_nan=False`` and a
trailing newline, so equal content gives equal bytes on every machine.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import msgspec

from candor_eval.common.errors import fail

TMP_DIR = ".candor-tmp"
"""The temporary folder's name (docs/reliability.md, "Nothing lost")."""

_IGNORE = "# candor's temporary files (docs/reliability.md): never committed, swept by every write\n*\n"


def temp_dir_for(final: Path) -> Path:
    """Where ``final``'s temporary file goes: :data:`TMP_DIR` in the working directory when
    ``final``'s folder (which exists) lies under it on the same file system (so the move stays
    atomic), else :data:`TMP_DIR` beside ``final`` (:func:`temp_file` also falls back there when
    the working directory is read-only)."""
    cwd, parent = Path.cwd(), final.parent
    if parent.resolve().is_relative_to(cwd.resolve()) and os.stat(cwd).st_dev == os.stat(parent).st_dev:
        return cwd / TMP_DIR
    return parent / TMP_DIR


def _same_file(path: str | Path, fd: int) -> bool:
    try:
        st, fst = os.stat(path), os.fstat(fd)
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)


def sweep_temp_dir(folder: Path) -> None:
    """Remove every temporary file or folder in ``folder`` whose writer is gone (no process holds its lock)."""
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in names:
        if not name.endswith(".tmp"):
            continue
        path = folder / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue                          # moved into place meanwhile, or not ours to open
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)                      # a live writer's
            continue
        try:
            if _same_file(path, fd):
                _remove(path)
        finally:
            os.close(fd)


def _remove(path: Path) -> None:
    """Remove the temporary file or folder ``path`` (gone already: nothing to do)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _drop_if_empty(folder: Path) -> None:
    """Remove ``folder`` when it holds nothing but its ``.gitignore`` (a clean run leaves no trace)."""
    try:
        if os.listdir(folder) == [".gitignore"]:
            (folder / ".gitignore").unlink()
            folder.rmdir()
    except OSError:
        pass                                  # another writer's file arrived meanwhile: it stays


@contextmanager
def temp_file(final: Path, *, folder: bool = False) -> Iterator[Path]:
    """Yield a new empty temporary file (with ``folder``: a temporary folder) for ``final`` (in
    :func:`temp_dir_for`), locked while the block runs; it is removed on the way out unless the
    block moved it into place. The temporary folder is swept of dead writers' temporaries first
    and removed after when empty."""
    beside = False
    for _ in range(100):
        tmp_dir = final.parent / TMP_DIR if beside else temp_dir_for(final)
        try:
            tmp_dir.mkdir(exist_ok=True)
            if not (tmp_dir / ".gitignore").exists():
                (tmp_dir / ".gitignore").write_text(_IGNORE, encoding="utf-8")
            sweep_temp_dir(tmp_dir)
            if folder:
                tmp = tempfile.mkdtemp(prefix=f"{final.name}.", suffix=".tmp", dir=tmp_dir)
                fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
            else:
                fd, tmp = tempfile.mkstemp(prefix=f"{final.name}.", suffix=".tmp", dir=tmp_dir)
        except FileNotFoundError:
            continue                          # another writer removed the empty folder meanwhile
        except PermissionError:
            if beside or tmp_dir == final.parent / TMP_DIR:
                raise
            beside = True                     # the working folder is read-only: beside the output
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        if _same_file(tmp, fd):               # not swept between its creation and its lock
            break
        os.close(fd)
    else:  # pragma: no cover - a hundred writers racing on one folder
        raise OSError(f"could not create a temporary file for {final} in {tmp_dir}")
    tmp_path = Path(tmp)
    try:
        yield tmp_path
    finally:
        _remove(tmp_path)
        os.close(fd)
        _drop_if_empty(tmp_dir)


def holds(path: Path, blob: bytes) -> bool:
    """Whether ``path`` is a regular file (not a link) of mode ``0644`` whose bytes are ``blob``: what
    writing ``blob`` there would leave, so the write can be skipped (see the module docstring)."""
    try:
        if not _plain_file_of_size(path, len(blob)):
            return False
        with open(path, "rb") as fh:
            return fh.read(len(blob) + 1) == blob
    except OSError:
        return False


def _plain_file_of_size(path: Path, size: int) -> bool:
    """Whether ``path`` is a regular file (not a link) of mode ``0644`` and ``size`` bytes (``OSError`` when
    it cannot be read)."""
    st = os.lstat(path)
    return stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644 and st.st_size == size


def _same_file_bytes(new: Path, path: Path, chunk: int = 1 << 20) -> bool:
    """Whether ``path`` already is what moving the file ``new`` there would leave: :func:`holds` for a
    file read in chunks (an output may be larger than is worth holding in memory)."""
    try:
        if not _plain_file_of_size(path, os.stat(new).st_size):
            return False
        with open(new, "rb") as a, open(path, "rb") as b:
            while block := a.read(chunk):
                if block != b.read(chunk):
                    return False
            return b.read(1) == b""
    except OSError:
        return False


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path for ``path`` (:func:`temp_file`); on success move it into place, unless
    ``path`` already holds the same bytes (then the temporary is discarded: the module docstring). An
    existing folder at ``path``, or a file where one of its parent folders should be, is an
    InputError naming it."""
    final = Path(path)
    if final.is_dir():
        raise fail(str(final), "is a folder", expected="a file path to write")
    blocking = next((p for p in final.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise fail(str(blocking), "is a file", expected=f"a folder to hold {final}")
    final.parent.mkdir(parents=True, exist_ok=True)
    with temp_file(final) as tmp_path:
        yield tmp_path
        if _same_file_bytes(tmp_path, final):
            return
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp_path, 0o644)
        os.replace(tmp_path, final)


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file for ``path`` (:func:`atomic_path`) for writing; move it into place on success."""
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


def write_bytes(path: str | os.PathLike[str], blob: bytes) -> None:
    """Write ``blob`` to ``path`` atomically; nothing when ``path`` already :func:`holds` it."""
    if holds(Path(path), blob):
        return
    with atomic_path(path) as tmp:
        tmp.write_bytes(blob)


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as deterministic JSON to ``path`` atomically (:func:`write_bytes`)."""
    write_bytes(path, dumps_json(obj).encode("utf-8"))


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
    """Write ``text`` to ``path`` atomically (UTF-8, ``\\n`` newlines; :func:`write_bytes`)."""
    write_bytes(path, text.encode("utf-8"))          # as atomic_open writes it: newline="\n" translates nothing


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Stream ``lines`` (each without newline) to ``path`` atomically."""
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")


def replace_dir_files(root: str | os.PathLike[str], files: dict[str, bytes], *, clean: bool) -> None:
    """Write ``files`` (path relative to ``root`` -> bytes) under ``root``, each atomically
    (:func:`write_bytes`: a file that already holds its bytes is left as it is).

    With ``clean``, every other file under ``root`` is then removed, and so are the folders
    left empty: ``root`` holds exactly ``files`` (for an output folder a stage owns).
    """
    root = Path(root)
    for rel, blob in files.items():
        write_bytes(root / rel, blob)
    if clean:
        remove_others(root, keep=files)


def remove_others(root: str | os.PathLike[str], *, keep: Iterable[str]) -> None:
    """Remove every file under ``root`` but ``keep`` (paths relative to ``root``), then the folders
    left empty: what a stage does after writing an output folder it owns, so a file of an earlier
    run (a model or candidate since removed from params) does not linger as if it were current."""
    root = Path(root)
    if not root.is_dir():
        return
    keep = list(keep)
    named = set(keep)
    wanted: set[Path] | None = None        # the kept paths resolved: only for a file not named as it is found
    for p in sorted(root.rglob("*"), reverse=True):
        if p.is_file():
            if p.relative_to(root).as_posix() in named:        # root/<a kept path>: kept, nothing to resolve
                continue
            if wanted is None:
                wanted = {(root / r).resolve() for r in keep}
            if p.resolve() not in wanted:
                p.unlink()
        elif p.is_dir() and not any(p.iterdir()):
            p.rmdir()
