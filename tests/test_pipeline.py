"""The whole pipeline on temporary clones: byte-identical reproduction from the canonical
inference outputs (no model call), no needless reruns, the re-inference check, and a real DVC
remote round trip between two clones (one pushes, a fresh clone of the commit pulls)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CANDOR, ROOT, reproduced_copy

pytestmark = pytest.mark.slow


def sh(args: list[str], cwd: Path) -> str:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               DVC_NO_ANALYTICS="1")
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def fresh_clone(parent: Path) -> Path:
    """A clone of this checkout's working tree (HEAD, then its uncommitted edits and untracked files,
    committed in the clone so that its ``git status`` starts clean): the code the editable venv runs is
    the code the clone holds, so a test sees an edit before it is committed. Its install inputs are
    older than any venv stamp: ``make`` there with this checkout's venv installs nothing (an editable
    install from the clone would point the shared venv at a temporary folder)."""
    clone = parent / "candor"
    sh(["git", "clone", "-q", str(ROOT), str(clone)], cwd=ROOT)
    diff = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=ROOT, capture_output=True, check=True).stdout
    if diff:
        subprocess.run(["git", "apply", "--whitespace=nowarn"], cwd=clone, input=diff, check=True)
    untracked = subprocess.run(["git", "ls-files", "-z", "--others", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, untracked):
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, clone / rel, follow_symlinks=False)
    if diff or any(untracked):
        sh(["git", "add", "-A"], cwd=clone)
        sh(["git", "-c", "user.name=candor tests", "-c", "user.email=tests@candor.invalid", "commit", "-q",
            "-m", "the working tree of the checkout under test"], cwd=clone)
    for req in [*clone.glob("requirements*.txt"), clone / "pyproject.toml"]:
        os.utime(req, (0, 0))
    return clone


@pytest.fixture(scope="module")
def first_repro(reproduced_once, tmp_path_factory) -> tuple[Path, str]:
    """A fresh clone of the working tree on which `make repro` (the pipeline, then the figures) has run
    once (this module's copy of the session's, ``tests/conftest.py``), and what that first run printed."""
    return reproduced_copy(reproduced_once, tmp_path_factory.mktemp("clone")), reproduced_once[1]


@pytest.fixture(scope="module")
def reproduced(first_repro) -> Path:
    return first_repro[0]


def test_fresh_clone_reproduces_committed_outputs_byte_for_byte(reproduced):
    status = sh(["git", "status", "--porcelain", "--untracked-files=all"], cwd=reproduced)
    assert status.strip() == "", f"repro changed committed files:\n{status}"


def test_fresh_clone_never_reruns_inference(first_repro):
    """The committed raw detections are the canonical inference outputs: no model call on any CPU."""
    _, out = first_repro
    assert "Running stage 'score-detection@detector'" in out          # downstream of inference does run
    assert "Running stage 'detect@" not in out, out


def test_reinference_agrees_with_the_canonical_outputs(reproduced):
    out = sh([*CANDOR, "verify-inference"], cwd=reproduced)
    assert "re-inference agrees with the canonical detections" in out, out


def test_unchanged_tree_reruns_no_stage(reproduced):
    out = sh(["dvc", "repro"], cwd=reproduced)
    assert "Running stage" not in out, out
    assert "didn't change, skipping" in out


def test_remote_round_trip_between_clones(reproduced, tmp_path):
    """One clone pushes; a fresh clone of the committed HEAD pulls, and then reruns nothing."""
    remote = tmp_path / "remote"
    sh(["dvc", "remote", "add", "--local", "-d", "test", str(remote)], cwd=reproduced)
    sh(["dvc", "push"], cwd=reproduced)
    other = fresh_clone(tmp_path)
    sh(["dvc", "remote", "add", "--local", "-d", "test", str(remote)], cwd=other)
    sh(["dvc", "pull"], cwd=other)
    # the main pipeline only: diagnostics/dvc.yaml (latency) is machine-specific and never pushed
    assert "up to date" in sh(["dvc", "status", "dvc.yaml"], cwd=other)
    out = sh(["dvc", "repro"], cwd=other)
    assert "Running stage" not in out, out
    status = sh(["git", "status", "--porcelain", "--untracked-files=all"], cwd=other)
    assert status.strip() == "", status
