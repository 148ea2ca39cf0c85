"""Files at a git revision or DVC experiment, for ``candor compare`` (reads git, writes nothing).

A *revision* is anything ``git rev-parse`` accepts; else, as DVC resolves one, a branch of a
remote (``main`` in a CI clone of another branch, where only ``origin/main`` exists: the
``refs/remotes/<remote>/<rev>`` of every remote, when they name one commit); else a DVC experiment
name, resolved through the ``refs/exps/.../<name>`` refs DVC keeps. :data:`WORKSPACE` stands for
the files on disk.
"""
from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.errors import fail
from candor_eval.common.tables import decode_text, read_text

WORKSPACE = "workspace"


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def _git_bytes(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Git's output as bytes: file contents and names decoded by the caller, never by the locale."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def resolve_revision(rev: str, *, repo: Path) -> str:
    """A commit SHA for a git revision or a DVC experiment name; :data:`WORKSPACE` stays itself."""
    if rev == WORKSPACE:
        return rev
    got = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo)
    if got.returncode == 0:
        return got.stdout.strip()
    if (remote := remote_branch(rev, repo=repo)) is not None:
        return remote
    refs = _git(["for-each-ref", "--format=%(refname)", "refs/exps"], repo).stdout.split()
    matches = sorted(r for r in refs if r.rsplit("/", 1)[-1] == rev)
    if len(matches) == 1:
        return _git(["rev-parse", matches[0]], repo).stdout.strip()
    if len(matches) > 1:
        raise fail(rev, "experiment name is ambiguous", expected="one experiment ref",
                   got=", ".join(matches), hint="pass the experiment's commit SHA instead")
    raise fail(rev, "not a git revision or DVC experiment name",
               hint="see `git log --oneline` and `dvc exp show`")


def remote_branch(rev: str, *, repo: Path) -> str | None:
    """The commit of ``refs/remotes/<remote>/<rev>`` when the remotes that have that branch agree on one
    (DVC's fallback for a branch that is not a local one); two commits is an InputError naming them."""
    listed = _git(["for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes"], repo).stdout.splitlines()
    found = {ref: sha for sha, ref in (line.split(" ", 1) for line in listed if " " in line)
             if ref.startswith("refs/remotes/") and ref.split("/", 3)[3:] == [rev]}
    if len(set(found.values())) > 1:
        raise fail(rev, "branch of more than one remote, at different commits", expected="one commit",
                   got=", ".join(r.removeprefix("refs/remotes/") for r in sorted(found)),
                   hint="name the remote's branch (origin/main) or the commit SHA")
    return next(iter(found.values()), None)


def read_at(rev: str, path: str, *, repo: Path) -> str | None:
    """The UTF-8 text of the file ``path`` at ``rev`` (a SHA or :data:`WORKSPACE`); ``None`` when no
    file is there (absent, or a folder). Text that is not UTF-8 is an InputError naming ``rev:path``."""
    if rev == WORKSPACE:
        p = repo / path
        return read_text(p, expected="a UTF-8 text file") if p.is_file() else None
    got = _git_bytes(["cat-file", "blob", f"{rev}:{path}"], repo)
    return decode_text(got.stdout, where=f"{rev}:{path}") if got.returncode == 0 else None


def folders_at(rev: str, path: str, *, repo: Path) -> list[str]:
    """The names of the folders directly under ``path`` at ``rev`` (a SHA or :data:`WORKSPACE`), sorted."""
    if rev == WORKSPACE:
        p = repo / path
        return sorted(d.name for d in p.iterdir() if d.is_dir()) if p.is_dir() else []
    got = _git_bytes(["ls-tree", "-d", "-z", "--name-only", rev, f"{path.rstrip('/')}/"], repo)
    if got.returncode != 0:
        return []
    names = (decode_text(n, where=f"{rev}:{path}").rsplit("/", 1)[-1] for n in got.stdout.split(b"\0") if n)
    return sorted(names)
