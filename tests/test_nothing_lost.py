"""Nothing lost through DVC: a bad param or input, reached through `dvc repro`, `dvc exp run` or
`make sweep` on a fresh clone, leaves every output byte-identical (docs/reliability.md, "Nothing
lost"). Every output of dvc.yaml is ``persist: true``, so DVC never removes it before running the
stage, and the stage replaces files only once everything is valid."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, reproduced_copy
from tests.test_pipeline import sh

pytestmark = pytest.mark.slow


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               DVC_NO_ANALYTICS="1")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def outputs(repo: Path) -> dict[str, str]:
    """SHA-256 of every file under the pipeline's output roots (committed and DVC-cached alike)."""
    out = {}
    for root in ("build", "metrics", "plots"):
        for p in sorted((repo / root).rglob("*")):
            if p.is_file() and "figures" not in p.parts:
                out[p.relative_to(repo).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def porcelain(repo: Path) -> list[str]:
    return sh(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo).splitlines()


@pytest.fixture(scope="module")
def clone(reproduced_once, tmp_path_factory) -> Path:
    repo = reproduced_copy(reproduced_once, tmp_path_factory.mktemp("lost"))
    assert porcelain(repo) == []
    return repo


def test_every_output_is_persistent():
    """DVC removes a stage's non-persistent outputs before running it; none may be."""
    doc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    for name, stage in doc["stages"].items():
        body = stage.get("do", stage)
        for out in body.get("outs", []) + body.get("metrics", []):
            assert isinstance(out, dict) and next(iter(out.values())).get("persist") is True, (name, out)


def test_no_run_cache_entry_is_written(clone):
    """A side effect of persist: DVC keeps no run cache for these stages, so no copy of a tracked
    param (or of an output) lands in ``.dvc/cache/runs/``."""
    assert not (clone / ".dvc" / "cache" / "runs").exists()


@pytest.mark.parametrize("value", ["abc", "-0.1", "1e309"])
def test_exp_run_with_a_bad_value_changes_no_output(clone, value):
    before = outputs(clone)
    proc = run(["dvc", "exp", "run", "-S", f"thresholds.deer={value}"], cwd=clone)
    assert proc.returncode != 0
    assert "error: params.yaml:thresholds.deer:" in proc.stdout + proc.stderr
    assert outputs(clone) == before
    # DVC writes the -S value into params.yaml before any stage runs and keeps it (as on success)
    assert porcelain(clone) == [" M params.yaml"]
    sh(["git", "checkout", "params.yaml"], cwd=clone)
    assert "up to date" in sh(["dvc", "status", "dvc.yaml"], cwd=clone)


def test_repro_with_a_hand_edited_bad_param_changes_no_output(clone):
    before = outputs(clone)
    params = clone / "params.yaml"
    text = params.read_text()
    params.write_text(text.replace("  deer: 0.2\n", "  deer: -0.1\n", 1))
    try:
        proc = run(["dvc", "repro"], cwd=clone)
        assert proc.returncode != 0
        assert "threshold outside [detector.floor, 1]" in proc.stdout + proc.stderr
        assert outputs(clone) == before and porcelain(clone) == [" M params.yaml"]
    finally:
        params.write_text(text)


def test_repro_with_a_tampered_frame_keeps_the_verified_records(clone):
    before = outputs(clone)
    frame = sorted((clone / "data" / "detector" / "images").iterdir())[0]
    blob = frame.read_bytes()
    frame.write_bytes(blob + b"\0")
    try:
        proc = run(["dvc", "repro"], cwd=clone)
        assert proc.returncode != 0
        assert f"data/detector/images/{frame.name}" in proc.stdout + proc.stderr
        assert outputs(clone) == before        # build/verified/ too (a DVC-cached output)
    finally:
        frame.write_bytes(blob)
    assert porcelain(clone) == []


def test_make_sweep_waits_and_fails_when_an_experiment_fails(clone):
    before = outputs(clone)
    venv = Path(sys.executable).parent.parent
    proc = run(["make", "sweep", f"VENV={venv}", "PARAM=thresholds.deer", "VALUES=abc 0.25", "JOBS=2"], cwd=clone)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "error: params.yaml:thresholds.deer: not a number (got 'abc')" in proc.stderr
    assert "error: make sweep: failed experiment(s):" in proc.stderr
    status = sh(["dvc", "queue", "status"], cwd=clone)
    assert " Running" not in status and " Queued" not in status and " Success" in status, status
    assert outputs(clone) == before and porcelain(clone) == []
