"""The README's user paths, run as written on fresh clones: the command blocks of "Quick start",
"Bring your own", "Remote cache and CI" (with a local-folder remote) and "Sweeps" (run by
tests/test_sweep.py, whose one sweep also checks its metrics), and every
output line the README quotes under a command (``#   <line>``) is checked in what that command
printed, so the README cannot drift from what the commands do. The quick start runs once per test
session, from scratch, on the fresh clone every slow module copies (``tests/conftest.reproduced_once``);
the other blocks start from copies of it.

Not run: ``make test`` (this suite itself), the venv-creating line of the CI block (the clones use
the test's own venv through a ``.venv`` symlink: one install, not one per clone), and the lines
after ``# which is:`` in "Sweeps" (the commands ``make sweep`` runs for you, spelled out).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT, reproduced_copy
from tests.test_pipeline import fresh_clone

pytestmark = pytest.mark.slow

README = (ROOT / "README.md").read_text(encoding="utf-8")
VENV = Path(sys.executable).parent.parent
SKIPPED = ("make test", "python3 -m venv ")


@dataclass
class Step:
    """One command line of a block and the output lines the README quotes under it."""

    command: str
    quoted: list[str] = field(default_factory=list)


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else None]


def blocks(title: str) -> list[list[Step]]:
    """The steps of each fenced block of a section (comments dropped, quoted output kept)."""
    out = []
    for body in re.findall(r"\n```\n(.*?)\n```", section(title), flags=re.S):
        steps: list[Step] = []
        for line in body.splitlines():
            if line.startswith("# which is:"):
                break
            if line.startswith("#   "):
                text = line[4:].strip()
                if steps and not text.startswith("(") and "..." not in text and "<" not in text:
                    steps[-1].quoted.append(text)
            elif line.strip() and not line.startswith("#"):
                steps.append(Step(re.sub(r"\s{2,}#.*$", "", line).strip()))
        out.append(steps)
    return out


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# the demo's candidate fails its predeclared gate (README, "The demo, and what it shows"): CI would fail
EXIT = {"make gate": 2}


def run(repo: Path, command: str, *, code: int = 0, **subst: str) -> str:
    """Run one README command in ``repo`` (venv first on PATH, as after ``. .venv/bin/activate``);
    it must exit 0. ``subst`` replaces README placeholders (e.g. the remote's folder)."""
    for old, new in subst.items():
        command = command.replace(old, new)
    env = dict(os.environ, PATH=f"{repo / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}", DVC_NO_ANALYTICS="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    proc = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == code, f"{command}\nexit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


def walk(repo: Path, steps: list[Step], **subst: str) -> None:
    """Run every step (but :data:`SKIPPED`) and check each quoted line in its output."""
    for step in steps:
        if step.command.startswith(SKIPPED):
            continue
        printed = squash(run(repo, step.command, code=EXIT.get(step.command, 0), **subst))
        missing = [q for q in step.quoted if squash(q) not in printed]
        assert missing == [], f"{step.command}: the README quotes lines it did not print: {missing}\n{printed[-3000:]}"


def clone(parent: Path, source: Path = ROOT) -> Path:
    repo = fresh_clone(parent) if source == ROOT else parent / "candor"
    if source != ROOT:
        subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
    (repo / ".venv").symlink_to(VENV)            # `make` finds its venv installed
    with open(repo / ".git" / "info" / "exclude", "a") as fh:      # .gitignore's `.venv/` is for a folder
        fh.write(".venv\n")
    if source != ROOT:                           # (fresh_clone does it for a clone of ROOT)
        for req in [*repo.glob("requirements*.txt"), repo / "pyproject.toml"]:   # older than the venv stamp
            os.utime(req, (0, 0))
    return repo


def status(repo: Path) -> str:
    return run(repo, "git status --porcelain --untracked-files=all").rstrip("\n")


def test_the_blocks_are_found():
    """The parser sees the commands and the quoted outputs (so the tests below can fail)."""
    assert [s.command for s in blocks("Quick start")[0]] == ["make repro", "make test"]
    byo = blocks("Bring your own")[0]
    assert any(s.command.startswith("sed -i") for s in byo) and sum(len(s.quoted) for s in byo) >= 8
    remote, ci = blocks("Remote cache and CI")
    assert [s.command.split()[0] for s in ci] == ["python3", ".", "dvc", "dvc", "dvc", "make"]
    assert remote[1].command.startswith("git add .dvc/config")
    assert blocks("Sweeps")[0][0].command.startswith("make sweep")


@pytest.fixture(scope="module")
def quick_started(reproduced_once, tmp_path_factory) -> Path:
    """A copy of the session's fresh clone on which the quick start, ``make repro``, ran from scratch
    (``tests/conftest.reproduced_once``)."""
    return reproduced_copy(reproduced_once, tmp_path_factory.mktemp("readme-quick"))


def test_quick_start_reproduces_every_committed_output(reproduced_once, quick_started):
    [repro] = [step for step in blocks("Quick start")[0] if step.command == "make repro"]
    printed = squash(reproduced_once[1])
    assert [q for q in repro.quoted if squash(q) not in printed] == []
    ran = set(re.findall(r"Running stage '([^'@]+)", reproduced_once[1]))       # what the README says runs
    assert ran == {"fetch", "identify", "value", "score-detection"}, ran
    assert "recorded failure (in replay mode: replayed from the recording, no call made): run 3" in printed
    assert status(quick_started) == ""


def test_bring_your_own_walk_through_prints_what_the_readme_says(quick_started):
    walk(quick_started, blocks("Bring your own")[0])
    changed = status(quick_started).splitlines()
    assert " M params.yaml" in changed and " M dvc.lock" in changed     # the set's line; its stages locked


def test_remote_cache_recipe_and_ci_block_round_trip(reproduced_once, tmp_path):
    remote, ci = blocks("Remote cache and CI")
    first = reproduced_copy(reproduced_once, tmp_path / "a")               # a fresh clone, reproduced
    walk(first, remote, **{"/mnt/shared/candor-cache": str(tmp_path / "remote")})
    assert status(first) == ""                                           # .dvc/config was committed
    second = clone(tmp_path / "b", source=first)
    run(second, "git checkout -q -B main")                               # the branch a review compares with
    walk(second, ci)
    out = run(second, "dvc repro")
    assert "Running stage" not in out and status(second) == ""
