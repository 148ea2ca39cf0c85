"""A by-hand run of the identify stage: the flags that make one, and the throwaway report it writes.

A pipeline run of identify writes the normalised answers (the DVC output). A *by-hand* run keeps a
few lots and cases (``--case GLOB``), overrides the runs (``--runs N``) or names a report
(``--label NAME``), and writes a **throwaway report** instead (``--out PATH``): each answer with
its raw model text, and the field scores of the answered cases. Raw model text must not land in
the repository, so the report's path lies outside it.

Rules (:func:`check_by_hand`, each an InputError naming the flag, exit 2): ``--case``, ``--runs``
and ``--label`` need ``--out``; ``--out`` is a path outside the repository (the repository top of the
project's folder, :func:`candor_eval.common.repository.repository_top`: a project in ``eval/`` is one
folder of it); ``--label`` is a name (:mod:`candor_eval.common.names`: it names the default live recording,
``build/live/<label>.jsonl``, so ``a/b`` or ``../x`` would put it elsewhere); ``--runs`` is at least 1.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from candor_eval.common.errors import fail
from candor_eval.common.names import check_name
from candor_eval.common.repository import repository_top
from candor_eval.lots.answers import Answer
from candor_eval.lots.field_scoring import field_json
from candor_eval.lots.fields import CaseScore
from candor_eval.lots.recording import RecordLine


def check_by_hand(*, cases: Sequence[str], runs: int | None, label: str | None, out: str | None,
                  root: Path) -> None:
    """Refuse by-hand flags without ``out``, an ``out`` inside the repository of the project folder ``root``,
    a ``label`` that is not a name and ``runs`` below 1 (module docstring)."""
    if (cases or runs is not None or label) and not out:
        raise fail("command line", "--case, --runs and --label are for by-hand runs",
                   expected="--out PATH (a throwaway report outside the repository)", got="no --out")
    top = repository_top(root).resolve()
    if out and Path(out).resolve().is_relative_to(top):
        raise fail("--out", "the throwaway report holds raw model text and must stay outside the repository",
                   expected="a path outside " + top.as_posix(), got=out)
    if label is not None:
        check_name(label, what="report", where="--label")
    if runs is not None and runs < 1:
        raise fail("--runs", "must be at least 1", got=runs)


def throwaway_report(*, label: str, candidate: str, mode: str, runs: int, sha: str, lines: Sequence[RecordLine],
                     answers: Sequence[Answer], scores: Sequence[CaseScore]) -> dict[str, Any]:
    """The report of a by-hand run: what ran (label, candidate, mode, runs, the first line's provider and
    model, the prompt or code SHA-256), the field scores per case, and every answer with its raw text
    (``lines`` and ``answers`` pair one to one, in order)."""
    first = lines[0] if lines else None
    return {
        "label": label, "candidate": candidate, "mode": mode, "runs": runs,
        "provider": first.provider if first else None, "model": first.model if first else None,
        "prompt_sha256": sha,
        "cases": [{"case": c.case, "score": c.score, "fields": [field_json(f) for f in c.fields],
                   "notes": list(c.notes), "errors": list(c.errors)} for c in scores],
        "answers": [a.model_dump() | {"raw": ln.raw} for a, ln in zip(answers, lines)],
    }
