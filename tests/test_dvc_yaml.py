"""An honest dvc.yaml: every stage lists its own module and every stages.* module it imports
(transitively) as deps, so a change to any of them reruns that stage."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

PIPELINES = [ROOT / "dvc.yaml", ROOT / "diagnostics" / "dvc.yaml"]


def imports_of(module: str, seen: set[str] | None = None) -> set[str]:
    """``stages.*`` modules imported by ``module``, transitively (including itself)."""
    seen = set() if seen is None else seen
    if module in seen:
        return seen
    path = ROOT / (module.replace(".", "/") + ".py")
    if not path.is_file():
        return seen
    seen.add(module)
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name.startswith("stages."):
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
    assert needed - deps == set(), f"{module}: add to deps: {sorted(needed - deps)}"
