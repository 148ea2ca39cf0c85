"""A copy of this repository's pipeline in a temporary folder, for tests that run real DVC (no test here).

:func:`repo_copy` copies what the lots track's identify stage needs (``dvc.yaml``,
``params.yaml``, ``candor.lock``, ``.dvcignore``, ``examples/``, ``data/lots/``) and makes it a DVC
repository (``dvc init --no-scm``); the code is this interpreter's installed ``candor``, the working
tree's as it stands, so a test sees the code under test rather than the last commit. :func:`sh` runs a
command there the way DVC runs stages: this interpreter's folder first on ``PATH`` (its ``candor`` command).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT

COPIED = ("dvc.yaml", "params.yaml", "candor.lock", ".dvcignore", "examples", "data/lots")


def repo_copy(dest: Path) -> Path:
    """The pipeline's files under ``dest``, a DVC repository (module docstring)."""
    for rel in COPIED:
        src = ROOT / rel
        if src.is_dir():
            shutil.copytree(src, dest / rel, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / rel)
    sh(["dvc", "init", "--no-scm", "-q"], cwd=dest)
    return dest


def sh(args: list[str], cwd: Path, *, env: dict[str, str] | None = None, check: bool = True
       ) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``cwd`` (module docstring); with ``check`` a non-zero exit fails the test with the output."""
    full = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                DVC_NO_ANALYTICS="1", PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    proc = subprocess.run(args, cwd=cwd, env=full, capture_output=True, text=True, timeout=600, check=False)
    assert not check or proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def add_candidates(repo: Path, providers: dict[str, object], sources: dict[str, str], **identify: object) -> None:
    """Add candidates to ``repo``'s params.yaml: their provider and source (``identify.sources`` names all);
    ``identify`` sets other keys of the section."""
    doc = yaml.safe_load((repo / "params.yaml").read_text())
    ident = doc["identify"]
    ident |= identify
    ident["candidates"] += [c for c in providers if c not in ident["candidates"]]
    ident["providers"] |= providers
    ident["sources"] |= sources
    (repo / "params.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
