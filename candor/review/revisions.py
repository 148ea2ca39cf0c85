"""Files at a git revision or DVC experiment, for ``python -m stages.compare`` (reads git, writes nothing).

A *revision* is anything ``git rev-parse`` accepts, or a DVC experiment name, resolved through
the ``refs/exps/.../<name>`` refs DVC keeps. :data:`WORKSPACE` stands for the files on disk.
"""
from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from candor.common.errors import fail

WORKSPACE = "workspace"


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def resolve_revision(rev: str, *, repo: Path) -> str:
    """A commit SHA for a git revision or a DVC experiment name; :data:`WORKSPACE` stays itself."""
    if rev == WORKSPACE:
        return rev
    got = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo)
    if got.returncode == 0:
        return got.stdout.strip()
    refs = _git(["for-each-ref", "--format=%(refname)", "refs/exps"], repo).stdout.split()
    matches = sorted(r for r in refs if r.rsplit("/", 1)[-1] == rev)
    if len(matches) == 1:
        return _git(["rev-parse", matches[0]], repo).stdout.strip()
    if len(matches) > 1:
        raise fail(rev, "experiment name is ambiguous", expected="one experiment ref",
                   got=", ".join(matches), hint="pass the experiment's commit SHA instead")
    raise fail(rev, "not a git revision or DVC experiment name",
               hint="see `git log --oneline` and `dvc exp show`")


def read_at(rev: str, path: str, *, repo: Path) -> str | None:
    """The text of ``path`` at ``rev`` (a SHA or :data:`WORKSPACE`); ``None`` when absent there."""
    if rev == WORKSPACE:
        p = repo / path
        return p.read_text(encoding="utf-8") if p.is_file() else None
    got = _git(["show", f"{rev}:{path}"], repo)
    return got.stdout if got.returncode == 0 else None


def folders_at(rev: str, path: str, *, repo: Path) -> list[str]:
    """The names of the folders directly under ``path`` at ``rev`` (a SHA or :data:`WORKSPACE`), sorted."""
    if rev == WORKSPACE:
        p = repo / path
        return sorted(d.name for d in p.iterdir() if d.is_dir()) if p.is_dir() else []
    got = _git(["ls-tree", "-d", "--name-only", rev, f"{path.rstrip('/')}/"], repo)
    return sorted(line.rsplit("/", 1)[-1] for line in got.stdout.splitlines()) if got.returncode == 0 else []
