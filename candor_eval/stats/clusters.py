"""The fewest clusters a paired test may run on, and the check every entry point that clusters by
capture session makes before it computes (docs/stats.md, "Units and clusters").

Pure: no I/O. *The rule*: every paired test is the exact two-sided sign-flip test over ``G``
clusters, whose smallest p-value is ``2 ** (1 - G)`` (every cluster moving one way). Below the
least ``G`` with ``2 ** (1 - G) <= alpha`` no outcome whatever can reach alpha, and Student's t
with ``G - 1`` degrees of freedom makes every interval nearly ``[0, 1]``: so :func:`min_clusters`
is that least ``G`` (6 at alpha 0.05, 7 at 0.02, 8 at 0.01), derived from alpha and nothing else.

Clustering by session is a choice the params make (``stats.cluster``); a split clustered by session
with fewer sessions than :func:`min_clusters`, a frame with no session name (it would become one
unnamed cluster of its own), or label outcomes with no per-frame table to say which session each
frame is in (every frame would silently be its own "session") is an InputError
(:func:`check_session_clusters`), raised by the ``stats`` stage, ``candor gate run``,
``candor compare`` and ``score-detection`` before anything is written. Clustering by frame (the
default) and lots need no such check: with too few of them the report says plainly that nothing
could have been seen.

>>> min_clusters(0.05), min_clusters(0.01), min_clusters(0.0625)
(6, 8, 5)
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from candor_eval.common.errors import InputError, Problem
from candor_eval.common.params import check_probability

HINT = "cluster by frame (stats.cluster.detection: frame, or stats.cluster.by_set.<set>: frame), or add sessions"


def min_clusters(alpha: float) -> int:
    """The least number of clusters whose exact two-sided sign-flip test can reach ``alpha``: the
    least ``G >= 1`` with ``2 ** (1 - G) <= alpha`` (module docstring)."""
    check_probability(alpha, where="alpha")
    g = max(1, math.ceil(1.0 - math.log2(alpha)) - 1)       # then check neighbours exactly, for float safety
    while 2.0 ** (1 - g) > alpha:
        g += 1
    while g > 1 and 2.0 ** (2 - g) <= alpha:
        g -= 1
    return g


def check_session_clusters(frames: Iterable[tuple[str, str, str]] | None, *, alpha: float, where: str,
                           labels: bool = False) -> None:
    """Check a set clustered by session before anything is computed over its sessions.

    ``frames``: ``(frame, session, split)`` per frame (repeats, e.g. one row per model, are fine),
    read from ``where`` (named in errors); ``None``: no per-frame table, an error when ``labels``
    (label outcomes exist, whose sessions only that table gives). Every frame needs a session name,
    and every split at least :func:`min_clusters` ``(alpha)`` sessions. Else an InputError naming
    ``where``, the frames or the split, what was expected and what was found.

    >>> check_session_clusters([(f"f{i}", f"s{i}", "test") for i in range(6)], alpha=0.01, where="f.csv")
    Traceback (most recent call last):
    ...
    candor_eval.common.errors.InputError: f.csv (split test): too few capture sessions for an exact test at alpha \
0.01 (expected >= 8 sessions, got 6: s0, s1, s2, s3, s4, s5)
    hint: cluster by frame (stats.cluster.detection: frame, or stats.cluster.by_set.<set>: frame), or add sessions
    """
    if frames is None:
        if labels:
            raise InputError(Problem(where, "absent: the label outcomes are clustered by session, and only the "
                                            "per-frame table says which session each frame is in",
                                     expected="the per-frame table beside the label table"),
                             hint="rerun score-detection, which writes both tables")
        return
    need = min_clusters(alpha)
    unnamed: list[str] = []
    sessions: dict[str, set[str]] = {}
    for frame, session, split in frames:
        if not session.strip():
            if frame not in unnamed:
                unnamed.append(frame)
            continue
        sessions.setdefault(split, set()).add(session)
    problems = []
    if unnamed:
        more = f" ... ({len(unnamed)} frames)" if len(unnamed) > 5 else ""
        problems.append(Problem(where, "frame with no session name, clustered by session: " + ", ".join(unnamed[:5])
                                + more, expected="a session name for every frame"))
    problems += [Problem(f"{where} (split {split})", f"too few capture sessions for an exact test at alpha {alpha:g}",
                         expected=f">= {need} sessions", got=f"{len(s)}: {', '.join(sorted(s))}")
                 for split, s in sorted(sessions.items()) if len(s) < need]
    if problems:
        raise InputError(problems, hint=HINT)
