"""The layers of docs/ARCHITECTURE.md, checked on the import graph: entry points (stages/) are
leaves that no code imports, and the library (candor/) never reaches up into them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT


def imported(path: Path) -> set[str]:
    """Top-level package-qualified names ``path`` imports (absolute imports only)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("folder", ["candor", "stages", "tools", "bench"])
def test_no_code_imports_an_entry_point(folder):
    bad = {str(p.relative_to(ROOT)): sorted(n for n in imported(p) if n == "stages" or n.startswith("stages."))
           for p in (ROOT / folder).rglob("*.py")}
    assert {k: v for k, v in bad.items() if v} == {}


def test_library_subpackages_keep_their_direction():
    """common imports no track; a track's inference path imports nothing of its scoring; the tracks
    (lots, detection) import neither statistics nor review; the statistics import nothing of review
    (review is built on them, and the gate's detector edge lives in review)."""
    rules = {"candor/common": ("candor.detection", "candor.lots", "candor.stats", "candor.review"),
             "candor/detection/inference": ("candor.detection.scoring", "candor.lots", "candor.stats",
                                            "candor.review"),
             "candor/detection": ("candor.lots", "candor.review"),
             "candor/lots": ("candor.detection", "candor.review"),
             "candor/stats": ("candor.review", "candor.lots", "candor.detection")}
    for folder, banned in rules.items():
        for p in (ROOT / folder).rglob("*.py"):
            assert not [n for n in imported(p) if n.startswith(banned)], p


@pytest.mark.parametrize("stage", sorted(p.stem for p in (ROOT / "stages").glob("*.py") if p.stem != "__init__"))
def test_every_stage_help_states_its_exit_codes(stage):
    """``--help`` prints the module docstring: it must say what the exit codes mean (2: bad input)."""
    doc = ast.get_docstring(ast.parse((ROOT / "stages" / f"{stage}.py").read_text()))
    assert re.search(r"(?is)\bexit.{0,160}?\b2\b", doc), stage
