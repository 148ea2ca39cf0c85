"""The code the documentation names exists: every backticked path into the code (``candor_eval/...``,
``stages/...``, ``tests/...``, ``bench/...``, ``tools/...``) in the README and ``docs/`` is a file or
folder of the repository, and every dotted name ``candor_eval.x.y[.name]`` is a module (and ``name``
a function, class or constant defined in it). A renamed module or function fails here, not in a
reader's hands. Placeholders (``candor_eval/x/y.py``, ``<set>``) and generated folders are skipped."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

CODE_PATH = re.compile(r"`((?:candor_eval|candor|stages|tests|bench|tools)/[A-Za-z0-9_./-]*)`")
DOTTED = re.compile(r"`(candor_eval(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`")
GENERATED = ("bench/out",)


def documents() -> dict[str, str]:
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
            for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}


def placeholder(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return any(len(p.removesuffix(".py")) == 1 or p.startswith("test_y") for p in parts) or "<" in path


def defined(source: str) -> set[str]:
    """Top-level and nested names a module defines: functions, classes and assigned names."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def dotted_problem(name: str, root: Path = ROOT) -> str | None:
    """Why ``name`` (``candor_eval.x.y`` or ``candor_eval.x.y.attr``) names nothing (``None``: it exists)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:i])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file():
            rest = parts[i:]
            if rest and rest[0] not in defined(module.read_text(encoding="utf-8")):
                return f"{'.'.join(parts[:i])} defines no {rest[0]}"
            return None
    return "no such module"


def test_code_paths_named_in_the_docs_exist():
    missing = sorted({(doc, path) for doc, text in documents().items() for path in CODE_PATH.findall(text)
                      if not placeholder(path) and not path.startswith(GENERATED)
                      and not (ROOT / path.rstrip("/")).exists()})
    assert missing == []


def test_modules_and_functions_named_in_the_docs_exist():
    missing = sorted({(doc, name, why) for doc, text in documents().items() for name in DOTTED.findall(text)
                      if (why := dotted_problem(name)) is not None})
    assert missing == []


def test_the_checks_find_a_renamed_module_and_function(tmp_path):
    pkg = tmp_path / "candor_eval" / "stats"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "rates.py").write_text("CONFIDENCE = 0.95\n\ndef wilson(k, n):\n    return k / n\n")
    assert dotted_problem("candor_eval.stats.rates.wilson", tmp_path) is None
    assert dotted_problem("candor_eval.stats.rates.CONFIDENCE", tmp_path) is None
    assert dotted_problem("candor_eval.stats.rates.agresti", tmp_path) == "candor_eval.stats.rates defines no agresti"
    assert dotted_problem("candor_eval.stats.power", tmp_path) == "candor_eval.stats defines no power"
    assert dotted_problem("candor_eval.review", tmp_path) == "no such module"
    assert CODE_PATH.findall("see `candor/stats/gate.py` and `candor_eval/x/y.py`") == ["candor/stats/gate.py",
                                                                                     "candor_eval/x/y.py"]
    assert placeholder("candor_eval/x/y.py") and not placeholder("candor/stats/gate.py")


def test_every_module_of_the_package_is_on_the_architecture_map():
    """docs/ARCHITECTURE.md's package map names every module of ``candor_eval`` (by file name): a new
    or renamed module is placed on the map in the same change."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = [p for p in (ROOT / "candor_eval").rglob("*.py")
               if p.name != "__init__.py" and "demo" not in p.relative_to(ROOT).parts]
    missing = sorted(p.relative_to(ROOT).as_posix() for p in modules if not re.search(rf"\b{p.stem}\b", text))
    assert missing == []
