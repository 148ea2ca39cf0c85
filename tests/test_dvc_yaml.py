"""An honest dvc.yaml: candor's own repository runs exactly the pipeline ``candor init`` writes; no stage
lists candor's code as a dep, each lists its code fingerprint in ``candor.lock``, which matches the code;
and scoring code is never in the fingerprint of inference (nor the other way round)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from candor_eval.adopt.fingerprint import STAGE_MODULES, closure, package_root
from candor_eval.adopt.lockfile import read_lock, seal, stages_of
from candor_eval.adopt.scaffold import dvc_yaml
from tests.conftest import ROOT

PIPELINES = [ROOT / "dvc.yaml", ROOT / "diagnostics" / "dvc.yaml"]


def stages_in(pipeline: Path):
    doc = yaml.safe_load(pipeline.read_text())
    for name, stage in doc["stages"].items():
        yield name, stage.get("do", stage)


def test_the_repository_runs_the_pipeline_candor_init_writes():
    """candor's own dvc.yaml is the ``both`` scaffold, byte for byte: the demo runs what an adopter runs."""
    assert (ROOT / "dvc.yaml").read_text() == dvc_yaml("both")


@pytest.mark.parametrize("pipeline", PIPELINES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_each_stage_lists_its_code_fingerprint_and_no_code_path(pipeline):
    for name, body in stages_in(pipeline):
        code = [d for d in body.get("deps", []) if str(d).startswith(("candor", "stages"))]
        assert code == [], f"{name}: code is tracked by candor.lock, not deps"
        locked = [p for p in body["params"] if isinstance(p, dict) and "candor.lock" in p]
        assert locked == [{"candor.lock": [f"code.{name}"]}], name
        assert body["cmd"].startswith(f"candor {name}"), name


def test_the_committed_lock_matches_the_code():
    """``candor.lock`` holds every stage's fingerprint of this checkout (``candor lock`` after a code change)."""
    from candor_eval.adopt.fingerprint import stage_fingerprints

    lock = read_lock(ROOT / "candor.lock")
    assert list(lock.code) == stages_of("both")
    assert lock.code == stage_fingerprints(), "run `candor lock` and `dvc repro`"
    assert lock.package == seal(lock.code), "run `candor lock`: the seal lets a stage skip its closure at start"


def closure_of(stage: str) -> set[str]:
    root = package_root()
    return {p.relative_to(root).as_posix() for p in closure(f"candor_eval.stages.{STAGE_MODULES[stage]}", root)}


def test_inference_never_depends_on_scoring_code():
    """A change to scoring code reruns scoring, never inference (docs/ARCHITECTURE.md)."""
    files = closure_of("detect")
    assert not [f for f in files if f.startswith(("detection/scoring/", "lots/", "stats/", "review/"))], files
    assert {"stages/detect.py", "detection/inference/onnx_model.py"} <= files      # the inference path does rerun it


def test_scoring_never_depends_on_inference_code():
    """The raw-detections contract (``candor_eval/detection/detections_file.py``) sits beside the other shared
    detector contracts, so an edit of the inference path (Ray, letterbox, decode) never reruns scoring."""
    files = closure_of("score-detection")
    assert not [f for f in files if f.startswith("detection/inference/")], files
    assert {"detection/scoring/metrics.py", "detection/detections_file.py"} <= files


def test_package_inits_hold_no_code():
    """A package ``__init__`` that ran code would load modules outside the closure the fingerprint reads."""
    for init in (ROOT / "candor_eval").rglob("__init__.py"):
        body = ast.parse(init.read_text()).body
        assert all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body), init


def test_lock_records_only_stages_of_the_pipeline():
    """DVC never prunes ``dvc.lock``: a stage removed or renamed in dvc.yaml keeps its old entry,
    which every later stage run parses and rewrites again. Every entry must name a stage DVC
    builds from dvc.yaml (foreach expanded with params.yaml)."""
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:
        stages = {s.addressing for s in repo.index.stages if s.path == str(ROOT / "dvc.yaml")}
    locked = set(yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"])
    assert locked - stages == set(), "stale dvc.lock entries: delete them"
    assert stages - locked == set(), "stages never run: run `dvc repro`"
