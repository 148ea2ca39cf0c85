"""candor installed from its wheel into a fresh venv, for the adoption tests (no test here).

:func:`installed` (a session fixture, registered in ``tests/conftest.py``) copies the tracked files
of this working tree as they stand (symlinks kept), builds the wheel from the copy, and installs it
with its dependencies into a new venv; its ``env`` runs commands with that venv first on ``PATH``,
this interpreter's folder (the repository's own ``.venv``) removed from it and no ``PYTHONPATH``, so
no candor checkout is on any path.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent        # (not from conftest, which imports this module)


def run(args: list[str], cwd: Path, env: dict[str, str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``cwd`` with ``env``; with ``check`` a non-zero exit fails the test with the output."""
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert not check or proc.returncode == 0, (f"{' '.join(args)} failed ({proc.returncode}):\n"
                                               f"{proc.stdout}\n{proc.stderr}")
    return proc


def new_repository(path: Path, env: dict[str, str]) -> Path:
    """``path`` made a new Git repository (with a committer) and DVC project, as a team's repository starts."""
    path.mkdir(parents=True, exist_ok=True)
    for args in (["git", "init", "-q"], ["git", "config", "user.email", "t@example.com"],
                 ["git", "config", "user.name", "t"], ["dvc", "init", "-q"]):
        run(args, cwd=path, env=env)
    return path


def source_copy(dest: Path) -> Path:
    """The tracked files of this working tree as they stand (symlinks kept), for building a wheel."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src, out = ROOT / rel, dest / rel
        if not src.exists() and not src.is_symlink():
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            out.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, out)
    return dest


def build_wheel(src: Path, dist: Path) -> Path:
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src), "-w", str(dist)], cwd=src,
        env=dict(os.environ))
    (wheel,) = dist.glob("candor_eval-*.whl")
    return wheel


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> dict:
    """A fresh venv holding the wheel and its dependencies; the environment to run its commands in."""
    base = tmp_path_factory.mktemp("adopt")
    src = source_copy(base / "src")
    wheel = build_wheel(src, base / "dist")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=base, env=dict(os.environ))
    run([str(venv / "bin/python"), "-m", "pip", "install", "-q", str(wheel)], cwd=base, env=dict(os.environ))
    path = os.pathsep.join([str(venv / "bin")] + [p for p in os.environ["PATH"].split(os.pathsep)
                                                   if Path(sys.executable).parent.as_posix() not in p])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PATH": path, "DVC_NO_ANALYTICS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return {"base": base, "src": src, "venv": venv, "env": env}


