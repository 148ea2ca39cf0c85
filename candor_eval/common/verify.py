"""Verifying a data set's files against its manifest, fetching the missing ones first.

Decide, then act (:func:`candor_eval.common.manifest.decide`): a present file is hashed; a missing
one with a ``source`` is fetched through fsspec into a temporary file
(:func:`candor_eval.common.atomic.temp_file`, never beside its final path), hashed, and moved into
place only when the SHA-256 matches; a missing one without a source is a Problem, and so is a
listed path that leads out of its folder (a symlink) or holds a folder. A source's user-info never
reaches a Problem or the log. Every bad file of every manifest is collected, so one message can
list them all.

``tqdm`` is imported where a manifest is verified, not with this module: the scoring stages import
this module for :func:`verify_entry` alone and need no progress bar.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from candor_eval.common.atomic import temp_file
from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.manifest import (
    MANIFEST_NAME,
    REQUIRED_COLUMNS,
    Action,
    Entry,
    Manifest,
    build_manifest_rows,
    decide,
    format_manifest,
    load_manifest,
    mismatch,
    sha256_file,
    size_mismatch,
)
from candor_eval.common.tables import read_rows
from candor_eval.common.urls import redact_source, redact_text, userinfo

log = logging.getLogger("candor.fetch")


def resolve_source(source: str, *, root: Path) -> str:
    """A fetchable URL for ``source``: URLs pass through, plain paths are relative to ``root``."""
    if "://" in source:
        return source
    return str((root / source).resolve())


def fetch_to(source: str, tmp: Path) -> None:
    """Copy ``source`` (any fsspec URL or local path) to ``tmp``, a temporary file for the final
    path (:func:`candor_eval.common.atomic.temp_file`): the caller verifies it and moves it into
    place, so a failed or killed download leaves nothing at the final path nor beside it."""
    import fsspec  # imported here: only needed when something is missing

    with open(tmp, "wb") as out, fsspec.open(source, "rb") as src:
        while chunk := src.read(1 << 20):
            out.write(chunk)


def outside(final: Path, *, root: Path) -> Path | None:
    """Where ``final`` really is when that is outside ``root`` (a symlink, of the file or of a folder
    on its way, pointing out of it), else None."""
    real = final.resolve()
    return None if real.is_relative_to(root.resolve()) else real


def verify_entry(entry: Entry, *, root: Path, where: str) -> Problem | None:
    """Verify (and fetch when missing) one file; return its Problem or None. A path that leads out
    of ``root`` or holds something other than a file is a Problem before anything is read or
    fetched; a source's user-info is never in a Problem or a log (:mod:`candor_eval.common.urls`)."""
    final = root / entry.path
    if (real := outside(final, root=root)) is not None:
        return Problem(where, "a symlink out of its folder", expected=f"a file inside {root}", got=str(real))
    if final.exists() and not final.is_file():
        return Problem(where, "is a folder, not a file" if final.is_dir() else "not a regular file",
                       expected="the file listed (remove what is there, then rerun)")
    action = decide(entry, root=root)
    if action is Action.VERIFY:
        return (mismatch(entry, where=where, actual_sha256=sha256_file(final))
                or size_mismatch(entry, where=where, actual_bytes=final.stat().st_size))
    if action is Action.MISSING:
        return mismatch(entry, where=where, actual_sha256=None)
    shown = redact_source(entry.source or "")
    url = resolve_source(entry.source or "", root=root)
    final.parent.mkdir(parents=True, exist_ok=True)
    with temp_file(final) as tmp:
        try:
            fetch_to(url, tmp)
        except Exception as err:  # network, permission, 404...: a problem of this file, keep checking others
            reason = redact_text(f"{type(err).__name__}: {err}", entry.source)
            return Problem(where, f"missing, and fetching it from {shown!r} failed: {reason}")
        problem = mismatch(entry, where=where, actual_sha256=sha256_file(tmp))
        if problem is None and (problem := size_mismatch(entry, where=where, actual_bytes=tmp.stat().st_size)):
            return problem
        if problem is None:
            os.replace(tmp, final)
            log.info("fetched %s from %s", where, shown)
            return None
        return Problem(where, f"fetched from {shown!r} but SHA-256 mismatch", expected=entry.sha256, got=problem.got)


def verify_manifest(manifest: Manifest) -> list[Problem]:
    """Every Problem of one manifest's files (empty when all verify); a progress bar on a terminal only
    (a log keeps no bar for the error that follows to land on)."""
    from tqdm import tqdm  # here, not at the top: the module docstring says why

    problems = []
    for entry in tqdm(manifest.entries, desc=f"verify {manifest.root}", unit="file", leave=False, disable=None):
        where = (manifest.root / entry.path).as_posix()
        if (p := verify_entry(entry, root=manifest.root, where=where)) is not None:
            problems.append(p)
    return problems


def find_manifests(data: Path) -> list[Path]:
    """``<data>/<set>/manifest.csv`` for every data set folder (a folder not starting with ``.``), sorted;
    a folder without one is an InputError naming it (it would be read later, never verified)."""
    if not data.is_dir():
        raise fail(str(data), "not a folder", expected="a folder of data sets <set>/manifest.csv")
    sets = sorted(p for p in data.iterdir() if p.is_dir() and not p.name.startswith("."))
    missing = [Problem(str(p / MANIFEST_NAME), "data set folder without a manifest",
                       expected="path,sha256,bytes of every file of the set")
               for p in sets if not ((p / MANIFEST_NAME).is_symlink() or (p / MANIFEST_NAME).exists())]
    if missing:
        raise InputError(missing, hint="write one with: candor fetch manifest <folder>")
    return [p / MANIFEST_NAME for p in sets]


def verify_sets(data: Path) -> tuple[dict[str, dict], list[Problem]]:
    """Verify (and fetch) every data set under ``data``: its record per set, and every Problem."""
    problems: list[Problem] = []
    sets: dict[str, dict] = {}
    for file in find_manifests(data):
        try:
            manifest = load_manifest(file)
        except InputError as err:
            problems.extend(err.problems)
            continue
        problems.extend(verify_manifest(manifest))
        sets[file.parent.name] = {
            "manifest": file.as_posix(), "sha256": manifest.sha256,
            "files": len(manifest.entries), "bytes": manifest.total_bytes,
        }
    return sets, problems


def read_columns(path: Path) -> tuple[dict[str, dict[str, str]], tuple[str, ...]]:
    """Extra per-file columns from a CSV with a ``path`` column."""
    table = read_rows(path, columns=("path",))
    cols = tuple(c for c in table.header if c != "path")
    return {row["path"]: {c: row[c] for c in cols} for _, row in table.rows}, cols


def carried_columns(file: Path) -> tuple[dict[str, dict[str, str]], tuple[str, ...], dict[str, str]]:
    """What a rewrite keeps from an existing manifest: extra columns and sources per path.

    Returns (path -> extra values, extra column names, path -> source); all empty when
    ``file`` does not exist. Rows whose file is gone simply drop out of the new manifest.
    """
    if not file.is_file():
        return {}, (), {}
    old = load_manifest(file)
    cols = tuple(c for c in old.columns if c not in (*REQUIRED_COLUMNS, "source"))
    return ({e.path: dict(e.extra) for e in old.entries}, cols,
            {e.path: e.source for e in old.entries if e.source})


def rewrite_manifest(root: Path, *, columns: Path | None = None,
                     source_prefix: str | None = None) -> tuple[str, int]:
    """The text of ``root/manifest.csv`` for the folder's current files, and their number.

    Keeps the extra columns and ``source`` of every file of an existing manifest that is
    still present; ``columns`` (a CSV with a ``path`` column) adds or overrides extra
    columns; ``source_prefix`` records ``source=<prefix>/<path>`` for every file.
    """
    if not root.is_dir():
        raise fail(str(root), "not a folder", expected="an existing data set folder")
    if source_prefix and userinfo(source_prefix):
        raise fail("--source-prefix", "holds user-info (a user name or password)",
                   expected="a URL without credentials", got=redact_source(source_prefix),
                   hint="a manifest is committed: give fsspec its credentials through its configuration or "
                        "the environment, never in the URL")
    extra, cols, sources = carried_columns(root / MANIFEST_NAME)
    if columns is not None:
        given, given_cols = read_columns(columns)
        for path, values in given.items():
            extra[path] = {**extra.get(path, {}), **values}
        cols = (*cols, *(c for c in given_cols if c not in cols))
    entries = build_manifest_rows(root, extra=extra)
    if source_prefix:
        prefix = source_prefix.rstrip("/")
        sources = {e.path: f"{prefix}/{e.path}" for e in entries}
    entries = [Entry(e.path, e.sha256, e.bytes, sources.get(e.path), e.extra) for e in entries]
    return format_manifest(entries, extra_columns=cols, with_source=any(e.source for e in entries)), len(entries)
