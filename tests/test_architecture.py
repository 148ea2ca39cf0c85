"""The layers of docs/ARCHITECTURE.md, checked on the import graph of the tree.

The graph has one node per module of ``candor/``, ``stages/``, ``tools/`` and ``bench/`` and one edge
per absolute import of a first-party module, wherever it stands: at the top of a module or inside a
function (a lazy import is still a dependency). ``import a.b`` is an edge to ``a.b``; ``from a.b import
c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``. Relative imports are resolved the
same way (the tree has none today).

An import under ``if TYPE_CHECKING:`` is an edge of its own kind (``typing``): never executed, yet a
dependency a reader follows. A layering rule that holds for those edges too is the stronger rule, so
the direct rules count them. The rules about what Python *loads* count runtime edges only, and say so:
what a package reaches through other modules (:func:`reached`: what a DVC stage really depends on) and
the import cycles (the order of imports); an annotation loads nothing. Today the one such edge is
``candor_eval.detection.detections_file`` naming the inference side's model type.

Each rule is a function from edges to the edges that break it; its test runs it on the tree and
:func:`test_every_rule_reports_a_forbidden_edge` shows each one on a graph that breaks it.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

FIRST_PARTY = ("candor_eval", "tools", "bench")
STAGES = "candor_eval.stages"                        # the entry points, leaves of the graph
COMMON = "candor_eval.common"
LOTS, DETECTION, STATS, REVIEW = "candor_eval.lots", "candor_eval.detection", "candor_eval.stats", "candor_eval.review"
SCORING, INFERENCE = f"{DETECTION}.scoring", f"{DETECTION}.inference"

# The gate's detector edge: the only modules of candor_eval/review that may import candor_eval/detection (the gate
# names a detection set, its models' cards and its split), and only its shared top-level modules.
REVIEW_DETECTOR_EDGE = ("candor_eval.review.gate_files", "candor_eval.review.gate_views", "candor_eval.review.params")


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` (module names) at ``line``; ``typing``: under ``if TYPE_CHECKING:``."""

    source: str
    target: str
    line: int = 0
    typing: bool = False

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line}{', typing' if self.typing else ''})"


def module_name(path: Path, *, root: Path) -> str:
    """``candor_eval/common/atomic.py`` -> ``candor_eval.common.atomic``; a package's ``__init__.py`` is the package."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path, folders: Iterable[str] = FIRST_PARTY) -> dict[str, Path]:
    """Every module under ``root``'s ``folders``, by name."""
    return {module_name(p, root=root): p for f in folders for p in sorted((root / f).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def edges_of(name: str, path: Path, *, known: Iterable[str]) -> list[Edge]:
    """The first-party imports of module ``name`` (file ``path``); ``known``: every module name of the tree."""
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
              for stmt in node.body for n in ast.walk(stmt)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out += [Edge(name, t, node.lineno, id(node) in typing) for t in dict.fromkeys(targets)
                if t.split(".")[0] in FIRST_PARTY]
    return out


def import_graph(root: Path = ROOT, folders: Iterable[str] = FIRST_PARTY) -> list[Edge]:
    """Every first-party import edge of the tree under ``root``."""
    found = modules(root, folders)
    return [e for name, path in found.items() for e in edges_of(name, path, known=found)]


EDGES = import_graph()


def within(name: str, *packages: str) -> bool:
    """``name`` is one of ``packages`` or a module inside one."""
    return any(name == p or name.startswith(p + ".") for p in packages)


def crossing(edges: Iterable[Edge], *, sources: tuple[str, ...], targets: tuple[str, ...]) -> list[Edge]:
    """The edges from a module of ``sources`` to a module of ``targets`` (packages)."""
    return [e for e in edges if within(e.source, *sources) and within(e.target, *targets)]


# --- the rules: each returns the edges that break it


def common_imports_no_track(edges: Iterable[Edge]) -> list[Edge]:
    return crossing(edges, sources=(COMMON,), targets=(LOTS, DETECTION, STATS, REVIEW))


def tracks_are_independent(edges: Iterable[Edge]) -> list[Edge]:
    edges = list(edges)
    return crossing(edges, sources=(LOTS,), targets=(DETECTION,)) + crossing(edges, sources=(DETECTION,),
                                                                             targets=(LOTS,))


def middle_floor_imports_itself_nowhere(edges: Iterable[Edge]) -> list[Edge]:
    floor = (LOTS, DETECTION, STATS)
    return [e for e in edges for a in floor for b in (*floor, REVIEW)
            if a != b and within(e.source, a) and within(e.target, b)]


def reached(edges: Iterable[Edge], *, sources: tuple[str, ...], targets: tuple[str, ...]) -> list[Edge]:
    """The runtime edges into ``targets`` out of a module that a module of ``sources`` loads, itself or
    through other modules (a path ``source -> ... -> target``; its last edge is the one reported)."""
    runtime = [x for x in edges if not x.typing]
    out_of: dict[str, list[Edge]] = {}
    for x in runtime:
        out_of.setdefault(x.source, []).append(x)
    todo = sorted({x.source for x in runtime if within(x.source, *sources)})
    seen: set[str] = set()
    bad: set[Edge] = set()
    while todo:
        if (m := todo.pop()) in seen:
            continue
        seen.add(m)
        for x in out_of.get(m, []):
            if within(x.target, *targets):
                bad.add(x)
            else:
                todo.append(x.target)
    return [x for x in runtime if x in bad]


def is_shared_detector_module(name: str) -> bool:
    """A module directly in ``candor_eval/detection/`` (``candor_eval.detection.<m>``), neither of its subpackages."""
    return within(name, DETECTION) and name.count(".") == 2 and not within(name, SCORING, INFERENCE)


def review_reaches_a_track_only_through_the_gate(edges: Iterable[Edge]) -> list[Edge]:
    edges = list(edges)
    direct = [x for x in edges if within(x.source, REVIEW) and within(x.target, "candor_eval")
              and not within(x.target, COMMON, STATS, REVIEW)
              and not (x.source in REVIEW_DETECTOR_EDGE and is_shared_detector_module(x.target))]
    through = reached(edges, sources=(REVIEW,), targets=(LOTS, SCORING, INFERENCE))
    return direct + [x for x in through if x not in direct]


def scoring_and_inference_are_apart(edges: Iterable[Edge]) -> list[Edge]:
    edges = list(edges)
    return crossing(edges, sources=(SCORING,), targets=(INFERENCE,)) + crossing(edges, sources=(INFERENCE,),
                                                                                targets=(SCORING,))


def scoring_and_inference_load_nothing_of_each_other(edges: Iterable[Edge]) -> list[Edge]:
    edges = list(edges)
    return (reached(edges, sources=(SCORING,), targets=(INFERENCE,))
            + reached(edges, sources=(INFERENCE,), targets=(SCORING,)))


def nothing_imports_a_stage(edges: Iterable[Edge]) -> list[Edge]:
    return [e for e in crossing(edges, sources=FIRST_PARTY, targets=(STAGES,)) if not within(e.source, STAGES)]


def is_glue(name: str) -> bool:
    """A CLI-glue module: ``stages/cli_*.py`` (argument sets a track's stages share)."""
    return name.startswith(f"{STAGES}.cli_")


HELP_BASE = f"{STAGES}.cli_help"        # the one parser class every command's argv is read with


def stages_import_only_glue(edges: Iterable[Edge]) -> list[Edge]:
    return [e for e in crossing(edges, sources=(STAGES,), targets=(STAGES,))
            if e.source != e.target and e.target != HELP_BASE and (is_glue(e.source) or not is_glue(e.target))]


def cycles(edges: Iterable[Edge], *, inside: str = "candor_eval") -> list[list[str]]:
    """The import cycles among the modules of ``inside`` over runtime edges: every strongly connected
    component of more than one module, or a module importing itself (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if not e.typing and within(e.source, inside) and within(e.target, inside):
            graph.setdefault(e.source, set()).add(e.target)
            graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            component.append(v)
            if len(component) > 1 or v in graph[v]:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def layers(edges: Iterable[Edge], *, inside: str) -> dict[str, int]:
    """Each module's layer inside package ``inside``, over the edges between its modules (annotation
    edges too: a reader follows them): 1 for a module that imports none of the package, else one more
    than the highest layer it imports. The package's depth is the highest layer (the room's "layer count")."""
    graph: dict[str, set[str]] = {}
    for x in edges:
        if within(x.source, inside):
            graph.setdefault(x.source, set())
            if within(x.target, inside) and x.target != x.source:
                graph[x.source].add(x.target)
                graph.setdefault(x.target, set())
    out: dict[str, int] = {}

    def layer(m: str, path: tuple[str, ...] = ()) -> int:
        if m in path:
            raise ValueError(f"import cycle: {' -> '.join((*path, m))}")
        if m not in out:
            out[m] = 1 + max((layer(t, (*path, m)) for t in graph[m]), default=0)
        return out[m]

    for m in sorted(graph):
        layer(m)
    return out


def shown(bad: Iterable[object]) -> str:
    return "\n  ".join(map(str, bad))


# --- the rules on the tree


def test_the_graph_sees_every_package():
    """The graph is not empty by mistake: it has edges out of each library package and the stages."""
    sources = {e.source.split(".")[1] if e.source.startswith("candor_eval.") else e.source.split(".")[0] for e in EDGES}
    assert {"common", "lots", "detection", "stats", "review", "stages", "tools", "bench"} <= sources


def test_common_imports_no_track_or_higher_package():
    """``candor_eval/common`` (errors, tables, atomic writes, params, manifests) is the ground floor: it imports
    nothing of ``candor_eval.lots``, ``candor_eval.detection``, ``candor_eval.stats`` or ``candor_eval.review``."""
    assert not (bad := common_imports_no_track(EDGES)), shown(bad)


def test_the_tracks_are_independent():
    """The lots track and the detection track import nothing of each other: either can change (and rerun)
    without the other."""
    assert not (bad := tracks_are_independent(EDGES)), shown(bad)


def test_tracks_and_statistics_import_each_other_nowhere_nor_review():
    """``candor_eval.lots``, ``candor_eval.detection`` (all of it) and ``candor_eval.stats`` are one floor: none imports
    another, and none imports ``candor_eval.review``, which is built on them (so ``candor_eval.stats``, the
    mathematics, imports nothing of review, lots or detection)."""
    assert not (bad := middle_floor_imports_itself_nowhere(EDGES)), shown(bad)


def test_review_reaches_a_track_only_through_the_gates_detector_edge():
    """``candor_eval.review`` imports ``candor_eval.common``, ``candor_eval.stats`` and itself; its only edge into a
    track
    is the gate's detector edge: the modules of :data:`REVIEW_DETECTOR_EDGE` may import the shared modules
    directly in ``candor_eval/detection/`` (config, match defaults, frames, model cards, sets), and what they
    load reaches nothing of ``candor_eval.detection.scoring``, ``candor_eval.detection.inference`` or
    ``candor_eval.lots`` (so ``candor_eval.detection.latency``, which loads both sides, is out of reach too). The
    detection side is named by structure, not by module, so a rename there keeps the rule; a review module
    that needs a detector edge is added to :data:`REVIEW_DETECTOR_EDGE` on purpose."""
    assert not (bad := review_reaches_a_track_only_through_the_gate(EDGES)), shown(bad)
    missing = [m for m in REVIEW_DETECTOR_EDGE if m not in modules(ROOT, ["candor_eval"])]
    assert not missing, f"REVIEW_DETECTOR_EDGE names modules that are gone (renamed?): {missing}"


def test_scoring_and_inference_import_nothing_of_each_other():
    """``candor_eval.detection.inference`` imports nothing of ``candor_eval.detection.scoring`` and vice versa
    (annotations included)."""
    assert not (bad := scoring_and_inference_are_apart(EDGES)), shown(bad)


def test_scoring_and_inference_share_only_contracts_that_load_neither_side():
    """Nor through another module: what scoring loads, directly or through the shared modules in
    ``candor_eval/detection/*.py``, reaches nothing of inference, and the other way round, so scoring depends
    on the shared contracts only (an edit to inference reruns no scoring). Runtime edges:
    ``detections_file`` names the inference side's model type in an annotation under ``TYPE_CHECKING``,
    which loads nothing; ``candor_eval.detection.latency`` loads both sides and neither side loads it."""
    assert not (bad := scoring_and_inference_load_nothing_of_each_other(EDGES)), shown(bad)


def test_no_code_imports_an_entry_point():
    """Nothing in ``candor/``, ``tools/`` or ``bench/`` imports ``stages``: the stages are leaves."""
    assert not (bad := nothing_imports_a_stage(EDGES)), shown(bad)


def test_a_stage_imports_no_other_stage_but_cli_glue():
    """A stage never imports another stage; it may import a CLI-glue module ``stages/cli_*.py`` (argument
    sets a track's stages share), and a glue module imports nothing of ``stages/`` (no stage, no other
    glue: one level, so a stage's argv is at most one file away), but ``stages/cli_help.py``, the parser
    class every command is read with, which imports nothing of ``stages/``."""
    assert not (bad := stages_import_only_glue(EDGES)), shown(bad)


PARAMS_READERS = ("section", "read_params")      # candor_eval.common.params: the readers of params.yaml


def seam_leaks(path: Path) -> list[str]:
    """What in one library module belongs to a stage: an ``argparse`` import, or a call of a params
    reader (:data:`PARAMS_READERS`), each as ``line: what``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            out += [f"{node.lineno}: import {n}" for n in names if n.split(".")[0] == "argparse"]
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in PARAMS_READERS:
                out.append(f"{node.lineno}: {name}()")
    return out


def test_stages_own_argv_and_params():
    """No library module parses argv (``argparse``) or reads ``params.yaml`` (a call of a params
    reader): the stages do, and pass typed values in. ``candor_eval/common/params.py`` defines the readers."""
    bad = {str(p.relative_to(ROOT)): leaks for p in sorted((ROOT / "candor_eval").rglob("*.py"))
           if "stages" not in p.relative_to(ROOT).parts and p != ROOT / "candor_eval/common/params.py"
           and (leaks := seam_leaks(p))}
    assert bad == {}


def test_the_seam_check_finds_argv_and_params_in_a_library_module(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import argparse\nfrom candor_eval.common.params import section\n\n"
                 "def f(p):\n    return section(M, 'x', path=p), params.read_params(p)\n")
    assert seam_leaks(f) == ["1: import argparse", "5: section()", "5: read_params()"]


def test_no_import_cycles_inside_candor():
    """No import cycle among the modules of ``candor/`` (module granularity, runtime edges, lazy imports
    inside functions included): every module can be imported first."""
    assert cycles(EDGES) == []


SCORING_MAX_LAYERS = 6       # issue 41: the record types at the bottom (scoring/records.py) made 10 layers 6


def test_the_scoring_room_is_at_most_six_layers_deep(capsys):
    """The detector scoring room stays shallow: its record types live in one bottom module
    (``scoring/records.py``), so a module that reads a record never depends on the code that builds it.
    The count is printed (``pytest -s``) for the closing notes of an architecture change."""
    depth = layers(EDGES, inside=SCORING)
    room_edges = [x for x in EDGES if within(x.source, SCORING) and within(x.target, SCORING) and x.source != x.target]
    with capsys.disabled():
        print(f"\nscoring room: {len(depth)} modules, {len({(x.source, x.target) for x in room_edges})} edges, "
              f"{max(depth.values())} layers")
    deepest = sorted(m for m, n in depth.items() if n > SCORING_MAX_LAYERS)
    assert max(depth.values()) <= SCORING_MAX_LAYERS, f"deeper than {SCORING_MAX_LAYERS} layers: {deepest}"
    assert depth[f"{SCORING}.records"] == 1


def test_layers_count_the_longest_import_chain_inside_the_package():
    """A chain a -> b -> c inside the package is 3 layers; edges leaving it and self-imports add none; a
    cycle is an error, not a depth."""
    chain = [e("~.p.a", "~.p.b"), e("~.p.b", "~.p.c", typing=True), e("~.p.a", "~.p.c"), e("~.p.c", "~.q.z"),
             e("~.p.c", "~.p.c")]
    assert layers(chain, inside="candor_eval.p") == {"candor_eval.p.a": 3, "candor_eval.p.b": 2, "candor_eval.p.c": 1}
    with pytest.raises(ValueError, match="import cycle"):
        layers([e("~.p.a", "~.p.b"), e("~.p.b", "~.p.a")], inside="candor_eval.p")


# --- each rule can fail


def e(source: str, target: str, typing: bool = False) -> Edge:
    """An edge of the rule tables; a name written ``~.x.y`` is ``candor_eval.x.y``."""
    def full(name: str) -> str:
        return "candor_eval" + name[1:] if name.startswith("~") else name

    return Edge(full(source), full(target), typing=typing)


Rule = Callable[[list[Edge]], list]


@pytest.mark.parametrize("rule, bad, good", [
    (common_imports_no_track, [e("~.common.tables", "~.stats.rates"),
                               e("~.common.params", "~.review.params", typing=True)],
     [e("~.common.params", "~.common.errors"), e("~.lots.comps", "~.common.tables")]),
    (tracks_are_independent, [e("~.lots.golden", "~.detection.config"),
                              e("~.detection.scoring.truth", "~.lots")],
     [e("~.lots.golden", "~.lots.comps"), e("~.detection.sets", "~.detection.config")]),
    (middle_floor_imports_itself_nowhere, [e("~.stats.units", "~.review.compare"),
                                           e("~.stats.units", "~.detection.frames"),
                                           e("~.detection.scoring.tally", "~.stats.rates"),
                                           e("~.lots.scoring", "~.stats"),
                                           e("~.lots.scoring", "~.review.report")],
     [e("~.stats.units", "~.stats.outcomes"), e("~.review.compare", "~.stats.units")]),
    (review_reaches_a_track_only_through_the_gate, [
        e("~.review.report", "~.detection.config"),
        e("~.review.gate_files", "~.detection.scoring.metrics"),
        e("~.review.gate_files", "~.detection.inference"),
        e("~.review.gate_views", "~.detection"),
        e("~.review.params", "~.lots.params"),
        e("~.review.collect", "~.lots.scoring"),
        e("~.detection.sets", "~.detection.inference.runner"),       # reached through gate_files
        e("~.stats.units", "~.lots.scoring")],                       # reached through compare
     [e("~.review.gate_files", "~.detection.sets"), e("~.review.params", "~.detection.config"),
      e("~.review.compare", "~.stats.units"), e("~.review.report", "~.common.errors")]),
    (scoring_and_inference_are_apart, [e("~.detection.scoring.stream", "~.detection.inference.decode"),
                                       e("~.detection.inference.runner", "~.detection.scoring"),
                                       e("~.detection.inference.runner", "~.detection.scoring.truth",
                                         typing=True)],
     [e("~.detection.scoring.stream", "~.detection.config"),
      e("~.detection.inference.runner", "~.detection.sets")]),
    (scoring_and_inference_load_nothing_of_each_other, [
        e("~.detection.sets", "~.detection.inference.runner"),     # scoring.metrics -> config -> sets
        e("~.detection.frames", "~.detection.scoring.boxes")],     # inference.runner -> frames
     [e("~.detection.scoring.metrics", "~.detection.config"), e("~.detection.config",
                                                                          "~.detection.sets"),
      e("~.detection.inference.runner", "~.detection.frames"),
      e("~.detection.frames", "~.detection.inference.onnx_model", typing=True),
      e("~.detection.latency", "~.detection.scoring.boxes"),
      e("~.detection.latency", "~.detection.inference.decode")]),
    (nothing_imports_a_stage, [e("~.review.report", "~.stages.stats"), e("tools.demo.card", "~.stages"),
                               e("bench.run", "~.stages.detect")],
     [e("~.stages.stats", "~.review.report"), e("tests.test_x", "~.stages.stats")]),
    (stages_import_only_glue, [e("~.stages.gate", "~.stages.stats"), e("~.stages.cli_lots", "~.stages.identify"),
                               e("~.stages.cli_lots", "~.stages.cli_common")],
     [e("~.stages.identify", "~.stages.cli_lots"), e("~.stages.gate", "~.review.gate")]),
])
def test_every_rule_reports_a_forbidden_edge(rule: Rule, bad: list[Edge], good: list[Edge]):
    """Each rule, run on a graph of allowed edges plus forbidden ones, reports exactly the forbidden ones."""
    assert rule(good) == []
    assert rule(good + bad) == bad


def test_the_cycle_check_finds_a_cycle_and_ignores_annotations():
    """A three-module cycle and a self-import are found; an edge under TYPE_CHECKING closes no cycle."""
    ring = [e("candor_eval.a", "candor_eval.b"), e("candor_eval.b", "candor_eval.c"),
            e("candor_eval.c", "candor_eval.a"),
            e("candor_eval.c", "candor_eval.d")]
    assert cycles(ring) == [["candor_eval.a", "candor_eval.b", "candor_eval.c"]]
    assert cycles([e("candor_eval.a", "candor_eval.a")]) == [["candor_eval.a"]]
    assert cycles([e("candor_eval.a", "candor_eval.b"), e("candor_eval.b", "candor_eval.a", typing=True)]) == []
    assert cycles(ring[:2]) == []


def test_the_graph_sees_lazy_relative_and_annotation_imports(tmp_path):
    """On a tiny tree in tmp_path: a top-level import, one inside a function, one under ``if
    TYPE_CHECKING:`` (marked), ``from package import module`` (an edge to the module), a relative import,
    and a third-party import (no edge); the forbidden lazy import is reported by its rule."""
    (tmp_path / "candor_eval" / "common").mkdir(parents=True)
    (tmp_path / "candor_eval" / "stats").mkdir()
    for init in ("candor_eval", "candor_eval/common", "candor_eval/stats"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "candor_eval" / "stats" / "rates.py").write_text("X = 1\n")
    (tmp_path / "candor_eval" / "common" / "errors.py").write_text("")
    (tmp_path / "candor_eval" / "common" / "tables.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import yaml\n"
        "from candor_eval.common import errors\n"
        "from . import errors as again\n"
        "if TYPE_CHECKING:\n"
        "    from candor_eval.stats.rates import X\n"
        "def f():\n"
        "    import candor_eval.stats.rates\n")
    edges = import_graph(tmp_path, ["candor_eval"])
    assert [(x.source, x.target, x.line, x.typing) for x in edges] == [
        ("candor_eval.common.tables", "candor_eval.common.errors", 4, False),
        ("candor_eval.common.tables", "candor_eval.common.errors", 5, False),
        ("candor_eval.common.tables", "candor_eval.stats.rates", 7, True),
        ("candor_eval.common.tables", "candor_eval.stats.rates", 9, False)]
    assert [x.line for x in common_imports_no_track(edges)] == [7, 9]


# --- entry points and tests


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
        assert (ROOT / "candor_eval" / folder).is_dir(), f"tests/{folder} mirrors no package of candor/"
    assert not list((ROOT / "tests").glob("test_rates.py"))                    # the statistics are in tests/stats


def mirror(path: Path) -> Path:
    """The test file of ``candor/x/y.py`` (``tests/x/test_y.py``) or of ``stages/y.py`` (``tests/stages/test_y.py``)."""
    rel = path.relative_to(ROOT)
    inner = rel.parts[1:] if rel.parts[0] == "candor_eval" else rel.parts
    return ROOT / "tests" / Path(*inner).parent / f"test_{rel.stem}.py"


def mirrored_modules() -> dict[str, Path]:
    """Every module that must have its own test file, by name (package ``__init__`` files excluded)."""
    return {name: p for name, p in modules(ROOT, ["candor_eval"]).items()
            if p.name not in ("__init__.py", "__main__.py")}


def test_mirror_names_the_test_file_of_a_module_and_of_a_stage():
    assert mirror(ROOT / "candor_eval" / "common" / "atomic.py") == ROOT / "tests" / "common" / "test_atomic.py"
    assert mirror(ROOT / "candor_eval" / "detection" / "scoring" / "boxes.py") == (
        ROOT / "tests" / "detection" / "scoring" / "test_boxes.py")
    assert mirror(ROOT / "candor_eval" / "stages" / "gate.py") == ROOT / "tests" / "stages" / "test_gate.py"


def test_every_module_has_its_test_file():
    """Every module ``candor/x/y.py`` has ``tests/x/test_y.py`` and every stage ``stages/y.py`` has
    ``tests/stages/test_y.py``."""
    lacking = sorted(n for n, p in mirrored_modules().items() if not mirror(p).is_file())
    assert lacking == [], "write their tests (tests/x/test_y.py)"
