"""The suite's grouping under pytest-xdist holds: the slow tests of one module run on one worker and
their module fixture is made once (``tests/conftest.py``, ``pytest_collection_modifyitems``).

Nothing fails when the grouping breaks: every slow module's clone or sweep is simply made on both
workers, and the suite takes minutes longer. That happened twice, silently: the hook ran after
pytest-xdist's own, which had already read the marks, and pytest 9.2 made pytest-xdist 3.8 drop every
``xdist_group`` mark (``requirements-test.txt``). So a two-worker session of a tiny project that uses
the suite's own hook checks it with the pytest and pytest-xdist installed."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SLOW_MODULE = '''
import os
import pytest

pytestmark = pytest.mark.slow


def log(line):
    with open(os.environ["GROUPS_LOG"], "a", encoding="utf-8") as fh:
        fh.write(line + "\\n")


@pytest.fixture(scope="module")
def made():
    log("made " + os.environ["PYTEST_XDIST_WORKER"])


@pytest.mark.parametrize("i", range(6))
def test_slow(made, i):
    log("slow " + os.environ["PYTEST_XDIST_WORKER"])
'''

FAST_MODULE = '''
import os
import pytest


@pytest.mark.parametrize("i", range(12))
def test_fast(i):
    with open(os.environ["GROUPS_LOG"], "a", encoding="utf-8") as fh:
        fh.write("fast " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''


def test_a_modules_slow_tests_share_one_worker_and_one_fixture(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: end to end\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_collection_modifyitems  # noqa: F401 - the suite's own hook\n",
        encoding="utf-8")
    (tmp_path / "test_slow.py").write_text(SLOW_MODULE, encoding="utf-8")
    (tmp_path / "test_fast.py").write_text(FAST_MODULE, encoding="utf-8")
    log = tmp_path / "groups.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GROUPS_LOG": str(log)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                           "-q", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = log.read_text(encoding="utf-8").splitlines()
    made = [line for line in lines if line.startswith("made ")]
    slow = {line.split()[1] for line in lines if line.startswith("slow ")}
    assert len(made) == 1, lines                      # the module fixture made once ...
    assert slow == {made[0].split()[1]}, lines        # ... on the one worker that ran every slow test
    assert sum(line.startswith("fast ") for line in lines) == 12
