"""Per-stage code fingerprints: what makes ``dvc repro`` rerun exactly the stages whose code changed.

DVC hashes the files a stage lists as ``deps``; an installed candor lives in site-packages, outside
the user's repository, where no ``deps`` entry can reach it. So each stage's code is summarised
into one value that ``candor.lock`` holds and ``dvc.yaml`` lists as a param.

Definitions:

- the *import closure* of a module of the package is the smallest set of the package's modules
  that holds it and, for each module in the set, every module of the package its source imports
  anywhere it runs (at the top or inside a function, absolute or relative; not under
  ``if TYPE_CHECKING:``, which never runs),
  together with the ``__init__`` of every package on the way. It is read from the source with
  :mod:`ast`, nothing is executed, so it is the same on any machine;
- a stage's *fingerprint* is the SHA-256 of the listing ``"<sha256 of the file>  <path>\\n"`` of
  its closure's files, paths relative to the package folder in POSIX form, sorted (the format of
  ``sha256sum``). A change to any byte of a file the stage loads changes it; a change elsewhere
  does not;
- the *package fingerprint* is the fingerprint of every ``.py`` file under the package folder (the
  same listing over all of them). When it is unchanged, so is every stage's closure and fingerprint;
  hashing the ~170 files takes ~15 ms, where the closures parse the AST of each stage's ~60 modules.

Written here rather than taken from :mod:`modulefinder`: that one follows the standard library and
third-party imports too (seconds, and machine-dependent), while the fingerprint is about the
package's own files only.
"""
from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKAGE = "candor_eval"

# The pipeline's stages (the name in dvc.yaml and on the command line) -> their module in candor_eval.stages
STAGE_MODULES = {
    "fetch": "fetch",
    "identify": "identify",
    "score-lots": "score_lots",
    "value": "value",
    "score-valuation": "score_valuation",
    "detect": "detect",
    "score-detection": "score_detection",
    "stats": "stats",
    "latency": "latency",          # the machine-specific diagnostic (diagnostics/dvc.yaml in candor's own repository)
}


def package_root() -> Path:
    """The folder of the installed (or checked-out) ``candor_eval`` package."""
    return Path(__file__).resolve().parent.parent


def module_file(name: str, root: Path) -> Path | None:
    """The source file of module ``name`` (``candor_eval.x.y``) under the package folder ``root``, or None."""
    parts = name.split(".")[1:]
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_names(source: str, *, module: str, is_package: bool) -> set[str]:
    """Every module name ``source`` (the text of ``module``) imports, relative imports made absolute;
    ``from a import b`` gives both ``a`` and ``a.b`` (``b`` may be a module).

    >>> sorted(imported_names("from .b import c\\nimport x.y\\ndef f():\\n    from ..z import w\\n"
    ...                       "if TYPE_CHECKING:\\n    import t", module="p.q.m", is_package=False))
    ['p.q.b', 'p.q.b.c', 'p.z', 'p.z.w', 'x.y']
    """
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in statements(ast.parse(source).body):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names if a.name != "*")
    return out


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks nested in it (functions, classes, if/try/with/loops),
    but not the body of ``if TYPE_CHECKING:``; expressions are not visited (an import is a statement)."""
    for node in body:
        yield node
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            yield from statements(node.orelse)
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from statements(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from statements(handler.body)
        for case in getattr(node, "cases", None) or []:
            yield from statements(case.body)


def closure(module: str, root: Path) -> list[Path]:
    """The files of ``module``'s import closure in the package under ``root`` (see the module docstring), sorted."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or not (name == PACKAGE or name.startswith(PACKAGE + ".")):
            continue
        path = module_file(name, root)
        if path is None:
            continue                                   # ``from pkg import function``: not a module
        seen[name] = path
        parents = [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
        todo += parents
        todo += imported_names(path.read_text(encoding="utf-8"), module=name, is_package=path.name == "__init__.py")
    return sorted(set(seen.values()))


def fingerprint(files: Iterable[Path], root: Path) -> str:
    """The SHA-256 of the ``sha256sum`` listing of ``files`` (paths relative to ``root``, sorted)."""
    rows = sorted((p.relative_to(root).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest()) for p in files)
    return hashlib.sha256("".join(f"{digest}  {path}\n" for path, digest in rows).encode()).hexdigest()


def stage_fingerprint(stage: str, root: Path | None = None) -> str:
    """The fingerprint of one stage of :data:`STAGE_MODULES` in the package under ``root`` (default: this one)."""
    root = package_root() if root is None else root
    return fingerprint(closure(f"{PACKAGE}.stages.{STAGE_MODULES[stage]}", root), root.parent)


def stage_fingerprints(root: Path | None = None) -> dict[str, str]:
    """Every stage's fingerprint, in :data:`STAGE_MODULES` order."""
    return {stage: stage_fingerprint(stage, root) for stage in STAGE_MODULES}


def package_files(root: Path) -> list[Path]:
    """Every ``.py`` file under the package folder ``root`` (``__pycache__`` holds none), sorted."""
    return sorted(root.rglob("*.py"))


def package_fingerprint(root: Path | None = None) -> str:
    """The package fingerprint (see the module docstring) of the package under ``root`` (default: this one)."""
    root = package_root() if root is None else root
    return fingerprint(package_files(root), root.parent)
