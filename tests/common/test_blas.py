"""blas.one_blas_thread: OpenBLAS loads with one thread inside, the environment is as it was after; and
candor calls no BLAS routine, the premise of setting it."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from candor_eval.common.blas import THREADS_VARIABLE, one_blas_thread
from tests.conftest import ROOT


def test_unset_it_is_one_inside_and_gone_after(monkeypatch):
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    with one_blas_thread():
        assert os.environ[THREADS_VARIABLE] == "1"
    assert THREADS_VARIABLE not in os.environ


def test_a_value_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv(THREADS_VARIABLE, "4")
    with one_blas_thread():
        assert os.environ[THREADS_VARIABLE] == "4"
    assert os.environ[THREADS_VARIABLE] == "4"


def test_removed_again_when_the_import_fails(monkeypatch):
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    with pytest.raises(ImportError), one_blas_thread():
        raise ImportError("no such module")
    assert THREADS_VARIABLE not in os.environ


THREADS_AFTER = """
import importlib, json, os, sys
from candor_eval.cli import COMMANDS, load
if sys.argv[1] == "load":
    load(COMMANDS["stats"])
else:
    importlib.import_module(COMMANDS["stats"].module)
threads = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("Threads:"))
print(json.dumps({"threads": threads, "variable": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def _threads_after(how: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (THREADS_VARIABLE, "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", THREADS_AFTER, how], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.skipif(not os.path.exists("/proc/self/status") or len(os.sched_getaffinity(0)) < 2,
                    reason="counts threads in /proc; on one core OpenBLAS starts no worker thread anyway")
def test_the_stats_stage_loads_with_one_thread_and_leaves_no_variable():
    plain = _threads_after("import")
    loaded = _threads_after("load")
    assert plain["threads"] > 1, "the plain import starts OpenBLAS workers: else this test shows nothing"
    assert loaded == {"threads": 1, "variable": None}


BLAS_ATTRIBUTES = {"linalg", "dot", "vdot", "matmul", "tensordot"}   # numpy.linalg holds solve, lstsq and the rest


def blas_calls(tree: ast.AST) -> list[str]:
    """What in ``tree`` would reach BLAS: a ``@``, an attribute named in :data:`BLAS_ATTRIBUTES`, an
    ``einsum`` asked to ``optimize`` (which hands its contractions to ``tensordot``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.MatMult):
            found.append((node.lineno, "@"))
        elif isinstance(node, ast.Attribute) and node.attr in BLAS_ATTRIBUTES:
            found.append((node.lineno, f".{node.attr}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "einsum"
              and any(k.arg == "optimize" for k in node.keywords)):
            found.append((node.lineno, "einsum(optimize=...)"))
    return [f"line {line}: {what}" for line, what in sorted(found)]


def test_the_scan_finds_each_kind_of_blas_call():
    src = ("a @ b\nx @= y\nnp.linalg.norm(v)\nnp.dot(a, b)\nnp.einsum('ij,jk', a, b, optimize=True)\n"
           "np.einsum('ij,j', a, b)\nresponder.inner")
    assert [f.split(": ")[1] for f in blas_calls(ast.parse(src))] == ["@", "@", ".linalg", ".dot",
                                                                      "einsum(optimize=...)"]


def test_candor_calls_no_blas_routine():
    found = {str(p.relative_to(ROOT)): calls for p in sorted((ROOT / "candor_eval").rglob("*.py"))
             if (calls := blas_calls(ast.parse(p.read_text(encoding="utf-8"))))}
    assert found == {}, f"a BLAS call: revisit candor_eval/common/blas.py (one OpenBLAS thread) first: {found}"
