"""Promotion: a live recording becomes the candidate's recording, with its manifest entry.

Replay reads ``<lots>/recordings/<candidate>.jsonl`` (:mod:`candor_eval.lots.replay`); a live run
appends to a recording of its own (``build/live/<candidate>-<sha8>.jsonl``, named after the first
8 hex digits of the candidate's SHA-256, :mod:`candor_eval.lots.source_identity`). **Promoting** it:

1. **Refusal** (:func:`replaced_problem`): the candidate's recording, when it exists, was made with
   this prompt or code (every line's ``prompt_sha256`` is the candidate's), or the caller asked to
   replace it (``force``). A recording made with other code is never replaced by accident: its
   scores are what the committed metrics say.
2. **Seed** (:func:`seed_lines`): the lines of a same-code recording are the start of the live run, so
   only the missing (id, run) pairs are asked (a recording is extended, never re-rolled: a run
   asked twice would move the scores by run noise alone).
3. **Check** (:func:`promoted_lines`): the live recording holds runs ``1..runs`` of every lot and case,
   each with the candidate's SHA-256 and gallery setting (:func:`candor_eval.lots.replay.check_replay`),
   so what is promoted replays.
4. **Write**: the recording's text is those lines in (id, run) order, one JSON line each
   (:meth:`candor_eval.lots.recording.RecordLine.to_json`), written atomically; and, when the bench has a
   manifest (``<lots>/manifest.csv``), its entry for the recording is set to the new file's SHA-256 and
   size (:func:`manifest_with`), every other row kept as it was: a change to another file of the bench is
   not absorbed silently (``candor fetch manifest`` rewrites them all, on purpose).
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from candor_eval.common.errors import Problem
from candor_eval.common.manifest import Entry, format_manifest, load_manifest
from candor_eval.lots.recording import RecordLine
from candor_eval.lots.replay import check_replay


def live_record(candidate: str, sha: str) -> Path:
    """The live recording of ``candidate`` made with the code of SHA-256 ``sha``: ``build/live/<c>-<sha8>.jsonl``
    (the name identify's stale-recording hint gives, so either command resumes the other's run)."""
    return Path("build/live") / f"{candidate}-{sha[:8]}.jsonl"


def replaced_problem(existing: Sequence[RecordLine], *, sha: str, file: str) -> Problem | None:
    """A Problem when the recording ``existing`` (read from ``file``) holds a line made with other code than
    ``sha``; None when every line is this code's (or there is none)."""
    other = sorted({ln.prompt_sha256 for ln in existing if ln.prompt_sha256 != sha})
    if not other:
        return None
    return Problem(file, "recorded with other code; recording anew replaces it and moves its scores",
                   expected=f"prompt_sha256 {sha}", got=", ".join(other))


def seed_lines(existing: Sequence[RecordLine], *, sha: str, gallery: str) -> list[RecordLine]:
    """The lines of ``existing`` a live run of code ``sha`` keeps: its answers made with this code and gallery
    (failed runs are asked again)."""
    return [ln for ln in existing if ln.prompt_sha256 == sha and ln.gallery == gallery and ln.error is None]


def promoted_lines(live: Sequence[RecordLine], *, ids: Sequence[str], runs: int, sha: str, gallery: str,
                   file: str, code: str | None, parts: dict[str, str] | None = None) -> list[RecordLine]:
    """The lines to promote, in (id, run) order: runs ``1..runs`` of every id of ``live`` (read from ``file``),
    checked as replay checks them (InputError naming what is missing or stale)."""
    return check_replay(live, ids=ids, runs=runs, sha=sha, gallery=gallery, file=file, code=code, parts=parts)


def recording_text(lines: Sequence[RecordLine]) -> str:
    """A recording's text: one JSON line per line, in (id, run) order."""
    return "".join(ln.to_json() + "\n" for ln in sorted(lines, key=lambda x: (x.case, x.run)))


def manifest_with(manifest: Path, path: str, data: bytes) -> str:
    """The text of ``manifest`` with the entry of ``path`` (relative to the manifest's folder) set to the SHA-256
    and size of ``data`` (added in path order when absent), every other row, column and source kept."""
    old = load_manifest(manifest)
    entry = Entry(path=path, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    entries = [replace(e, sha256=entry.sha256, bytes=entry.bytes) if e.path == path else e for e in old.entries]
    if all(e.path != path for e in old.entries):
        entries = sorted([*entries, entry], key=lambda e: e.path)
    extra = tuple(c for c in old.columns if c not in ("path", "sha256", "bytes", "source"))
    return format_manifest(entries, extra_columns=extra, with_source=any(e.source for e in entries))
