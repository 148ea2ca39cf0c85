"""An honest dvc.yaml: every stage lists its own module and every ``stages.*`` / ``candor.*``
module it imports (transitively) as deps, by the file or by a folder that holds it, so a
change to any of them reruns that stage; and scoring code is never a dep of inference."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

PIPELINES = [ROOT / "dvc.yaml", ROOT / "diagnostics" / "dvc.yaml"]


def imports_of(module: str, seen: set[str] | None = None) -> set[str]:
    """``stages.*`` and ``candor.*`` modules imported by ``module``, transitively (including itself)."""
    seen = set() if seen is None else seen
    if module in seen:
        return seen
    path = ROOT / (module.replace(".", "/") + ".py")
    if not path.is_file():
        return seen
    seen.add(module)
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only:          # ``if TYPE_CHECKING:`` imports never run: not a dep
            continue
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name.startswith(("stages.", "candor.")):
                imports_of(name, seen)
    return seen


def stages_of(pipeline: Path):
    doc = yaml.safe_load(pipeline.read_text())
    for name, stage in doc["stages"].items():
        body = stage.get("do", stage)
        yield f"{pipeline.relative_to(ROOT)}:{name}", body


CASES = [pytest.param(body, id=name) for p in PIPELINES for name, body in stages_of(p)]


@pytest.mark.parametrize("stage", CASES)
def test_stage_deps_cover_every_imported_module(stage):
    module = re.search(r"python -m (stages\.\w+)", stage["cmd"]).group(1)
    needed = {m.replace(".", "/") + ".py" for m in imports_of(module)}
    deps = {d if isinstance(d, str) else next(iter(d)) for d in stage.get("deps", [])}
    missing = {f for f in needed if not any(f == d or f.startswith(d.rstrip("/") + "/") for d in deps)}
    assert missing == set(), f"{module}: add to deps: {sorted(missing)}"


def detect_stage() -> dict:
    return dict(stages_of(ROOT / "dvc.yaml"))["dvc.yaml:detect"]


def test_inference_never_depends_on_scoring_code():
    """A change to scoring code or params reruns scoring, never inference (docs/ARCHITECTURE.md)."""
    deps = {d if isinstance(d, str) else next(iter(d)) for d in detect_stage()["deps"]}
    code = {d for d in deps if d.startswith(("candor", "stages"))}
    assert not any(d in ("candor", "candor/detection") or d.startswith("candor/detection/scoring") or
                   d.startswith(("candor/lots", "candor/stats")) for d in code), sorted(code)
    assert {"candor/detection/inference", "stages/detect.py"} <= code      # the inference path does rerun it
    assert set(detect_stage()["params"]) == {"detector.sets.${key}", "detector.floor", "detector.providers",
                                             "detector.executor"}


def test_scoring_never_depends_on_inference_code():
    """The raw-detections contract (``candor/detection/detections_file.py``) sits beside the other shared
    detector contracts, so an edit of the inference path (Ray, letterbox, decode) never reruns scoring."""
    body = dict(stages_of(ROOT / "dvc.yaml"))["dvc.yaml:score-detection"]
    deps = {d if isinstance(d, str) else next(iter(d)) for d in body["deps"]}
    code = {d for d in deps if d.startswith(("candor", "stages"))}
    assert not any(d in ("candor", "candor/detection") or d.startswith("candor/detection/inference") for d in code)
    assert "candor/detection/scoring" in code and "candor/detection/detections_file.py" in code


def test_package_inits_hold_no_code():
    """Deps name modules and folders; a package ``__init__`` that ran code would be a hidden dep."""
    for init in (ROOT / "candor").rglob("__init__.py"):
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
