"""Shared test helpers: run a stage's main in-process, and a loopback HTTP file server."""
from __future__ import annotations

import functools
import http.server
import os
import re
import shlex
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"                                 # the shared fixtures live in TESTS / "data"
VOCABULARY = ROOT / "data" / "lots" / "vocabulary"    # the committed word lists (candor_eval/lots/vocabulary.py)
CANDOR = [sys.executable, "-m", "candor_eval"]        # the candor command of this interpreter, for subprocesses


def committed_token_rules():
    """The token rules the pipeline uses: the committed ``tokens.yaml`` and params.yaml's ``lots.min_number_digits``."""
    from candor_eval.common.params import section
    from candor_eval.lots.params import LotsParams
    from candor_eval.lots.vocabulary import read_token_rules

    lots = section(LotsParams, "lots", path=ROOT / "params.yaml")
    return read_token_rules(VOCABULARY / "tokens.yaml", min_number_digits=lots.min_number_digits)


def hint_argv(message: str, *, stage: str) -> list[str]:
    """The arguments of the one command in backticks in the hint of the error ``message`` (what a stage prints
    after ``hint: ``), split as a POSIX shell would; it must be ``candor <stage> ...``."""
    [command] = re.findall(r"`([^`]+)`", message.split("\nhint: ", 1)[1])
    argv = shlex.split(command)
    assert argv[:2] == ["candor", stage], command
    return argv[2:]


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A real ``http.server`` on 127.0.0.1 serving a temporary folder: yields (folder, base URL)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def user_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``tmp_path`` as the folder of a user's production code: imports from it (the python provider puts the
    working directory and its parents up to the repository top on ``sys.path``) are forgotten after the test,
    and ``sys.path`` is restored."""

    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.fixture(scope="session")
def reproduced_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One fresh clone of this working tree (``tests/test_readme.clone``) on which the README's quick start,
    ``make repro``, has run from scratch (the whole pipeline, then the figures), and what it printed: made
    once per test session and shared by the pytest-xdist workers (the first to ask makes it under a file
    lock, the others wait and read it). Never changed: a module works on its own copy
    (:func:`reproduced_copy`)."""
    from filelock import FileLock

    from tests.test_readme import clone, run

    if "PYTEST_XDIST_WORKER" not in os.environ:
        base = tmp_path_factory.mktemp("reproduced")
        return (repo := clone(base)), run(repo, "make repro")
    shared = tmp_path_factory.getbasetemp().parent / "reproduced"      # the workers' common parent
    with FileLock(f"{shared}.lock"):
        if not (shared / "printed.txt").is_file():
            shutil.rmtree(shared, ignore_errors=True)                  # a worker that failed half-way
            shared.mkdir()
            printed = run(clone(shared), "make repro")
            (shared / "printed.txt").write_text(printed, encoding="utf-8")
    return shared / "candor", (shared / "printed.txt").read_text(encoding="utf-8")


def reproduced_copy(reproduced: tuple[Path, str], parent: Path) -> Path:
    """A copy of the reproduced clone under ``parent`` (symlinks, modes and times kept, so its install
    inputs stay older than the venv's stamp and its ``.venv`` link still finds the venv), for a module to
    change as it likes."""
    return Path(shutil.copytree(reproduced[0], parent / "candor", symlinks=True))


from tests.adoption import installed  # noqa: E402,F401 - the session fixture of the adoption tests


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist's ``--dist loadgroup`` (``make check``, ``make test``), the slow tests of one module
    run on one worker, one after another, so that a module's clone or reproduced pipeline (a module fixture)
    is made once; the tests of the wheel-installed candor (the session fixture ``installed``, a wheel built
    and installed into a fresh venv) share one group for the same reason. Groups and fast tests spread over
    both workers. No slow test changes the shared venv: the clones that run ``make`` link it with their
    requirement files dated before its install stamp (``tests/test_readme.py``, ``tests/test_pipeline.py``).

    ``tryfirst``: pytest-xdist reads the ``xdist_group`` marks in its own ``pytest_collection_modifyitems``,
    which otherwise runs before this one and sees none of them (every slow module's fixtures were then made
    on both workers); ``tests/test_groups.py`` runs a two-worker session to check the grouping holds."""
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    wheel = {item.nodeid.split("::")[0] for item in slow if "installed" in getattr(item, "fixturenames", ())}
    for item in slow:
        module = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group("installed" if module in wheel else module))
