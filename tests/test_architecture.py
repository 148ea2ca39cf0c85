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
    bad = {str(p.relative_to(ROOT)): sorted(n for n in imported(p) if (n == "stages" or n.startswith("stages."))
                                            and not (folder == "stages" and n.startswith("stages.cli_")))
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


@pytest.mark.parametrize("stage", sorted(p.stem for p in (ROOT / "stages").glob("*.py")
                                           if p.stem != "__init__" and not p.stem.startswith("cli_")))
def test_every_stage_help_states_its_exit_codes(stage):
    """``--help`` prints the module docstring: it must say what the exit codes mean (2: bad input)."""
    doc = ast.get_docstring(ast.parse((ROOT / "stages" / f"{stage}.py").read_text()))
    assert re.search(r"(?is)\bexit.{0,160}?\b2\b", doc), stage


def test_tests_mirror_the_packages():
    """``tests/<package>/`` mirrors ``candor/<package>/`` (plus ``tests/stages`` and ``tests/tools``); a test
    module there named after a module tests that module, so a reader finds the tests of ``candor/x/y.py`` in
    ``tests/x/test_y.py``."""
    folders = {p.parent.relative_to(ROOT / "tests") for p in (ROOT / "tests").rglob("test_*.py")
               if "bad_inputs" not in p.parts}
    for folder in folders - {Path("."), Path("stages"), Path("tools")}:
        assert (ROOT / "candor" / folder).is_dir(), f"tests/{folder} mirrors no package of candor/"
    assert not list((ROOT / "tests").glob("test_rates.py"))                    # the statistics are in tests/stats
