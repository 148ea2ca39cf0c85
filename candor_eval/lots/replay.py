"""Replay: which recorded lines answer a run of the identify stage, and which lots or cases it covers.

Replay (the default, offline) needs runs ``1..runs`` of every wanted lot and case in the
candidate's recording (:mod:`candor_eval.lots.recording`), made with the candidate's current
prompt or production code (same SHA-256, :mod:`candor_eval.lots.source_identity`) and the current gallery
setting; anything missing or stale is one InputError listing every problem, with the fix
(the command that records it again).
"""
from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.lots.golden import Golden
from candor_eval.lots.recording import RecordLine
from candor_eval.lots.source_identity import changed_parts


def select_ids(golden: Golden, globs: Sequence[str]) -> list[str]:
    """Lot ids and case names matching any glob (all when no glob), sorted; no match is an InputError."""
    ids = sorted(golden.ids())
    if not globs:
        return ids
    chosen = [i for i in ids if any(fnmatch.fnmatchcase(i, g) for g in globs)]
    if not chosen:
        raise fail("--case", "no lot or case matches", expected="a glob matching an id in lots.csv or a case name",
                   got=list(globs))
    return chosen


def check_replay(lines: Sequence[RecordLine], *, ids: Sequence[str], runs: int, sha: str, gallery: str,
                 file: str, code: str | None = None, rerecord: str | None = None,
                 parts: dict[str, str] | None = None) -> list[RecordLine]:
    """The recorded line of every wanted (id, run), in (id, run) order; InputError when missing or stale.

    ``code`` names the production code the SHA-256 covers (None: the SHA is a prompt's); ``parts``, for
    code of several paths, each path's SHA-256, so a stale recording names the paths that changed
    (:func:`candor_eval.lots.source_identity.changed_parts`); ``rerecord`` is the command that records the
    candidate again, given in the hint."""
    by_key = {(ln.case, ln.run): ln for ln in lines}
    problems: list[Problem] = []
    missing = [f"{i} run {r}" for i in ids for r in range(1, runs + 1) if (i, r) not in by_key]
    if missing:
        problems.append(Problem(file, f"{len(missing)} (case, run) pair(s) not recorded",
                                expected=f"runs 1..{runs} of every lot and case", got=", ".join(missing[:8])
                                + (" ..." if len(missing) > 8 else "")))
    wanted = [by_key[(i, r)] for i in ids for r in range(1, runs + 1) if (i, r) in by_key]
    stale = sorted({ln.prompt_sha256 for ln in wanted if ln.prompt_sha256 != sha})
    if stale:
        what = ("recorded with a different prompt" if code is None
                else f"recorded with other production code: {stale_paths(wanted, sha=sha, code=code, parts=parts)}")
        problems.append(Problem(file, what, expected=f"prompt_sha256 {sha}", got=", ".join(stale)))
    other = sorted({ln.gallery for ln in wanted if ln.gallery != gallery})
    if other:
        problems.append(Problem(file, "recorded with a different gallery setting", expected=gallery,
                                got=", ".join(other)))
    if problems:
        how = f"`{rerecord}`" if rerecord else "identify.mode: live"
        raise InputError(problems, hint=f"record it again with {how} (add --force to replace a recording made "
                                        "with other code; it records live and promotes the recording for dvc repro "
                                        "to score), or set runs/gallery to match the recording")
    return wanted


def stale_paths(lines: Sequence[RecordLine], *, sha: str, code: str, parts: dict[str, str] | None) -> str:
    """What changed, for the stale-recording message: ``<code> changed`` for one path; for several, the
    paths whose SHA-256 differs from the stale lines' ``sources`` (``a.ts, b.ts changed``), or, when those
    lines kept none, ``one of a.ts, b.ts changed``."""
    if parts is None:
        return f"{code} changed"
    changed: set[str] = set()
    for ln in lines:
        if ln.prompt_sha256 != sha:
            if ln.sources is None:
                return f"one of {', '.join(sorted(parts))} changed"
            changed.update(changed_parts(ln.sources, parts))
    return f"{', '.join(sorted(changed)) or 'the set of files below ' + ', '.join(sorted(parts))} changed"
