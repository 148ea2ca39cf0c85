"""The python provider against real worker processes: the up-front import check (exit 2 whatever the import does),
what the callable is given and how its result is recorded, retries and the deadline, and every hostile behaviour of
the code (exit, ``os._exit``, a signal, ``KeyboardInterrupt``, a raising ``__str__`` or ``transient``, a deep or huge
result, ``chdir``, a printed key) recorded per call while the stage, its directory and its console are untouched."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError, run_main
from candor_eval.lots.client import Policy
from candor_eval.lots.live import ReplyError
from candor_eval.lots.params import PythonProvider
from candor_eval.lots.production import PythonResponder, check_entry_point, python_responder
from candor_eval.lots.recording import load_recording
from tests.conftest import TESTS

FIXTURE = TESTS / "data" / "lots"
KEY = "sk-PRODUCTION-SENTINEL-5521"
PNG = "data:image/png;base64,iVBORw0KGgo="
CONTEXT = {"id": "T001", "kind": "lot", "run": 1, "category_library": {}, "default_library": True}
WHERE = "params.yaml:identify.providers.x.python"

HOSTILE = """\
import os, signal, sys, time

CALLS = []


class Flaky(Exception):
    transient = True


class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no message")


class BadTransient(Exception):
    @property
    def transient(self):
        raise KeyboardInterrupt


def analyze(images, context):
    CALLS.append(context["id"])
    what = context["id"]
    if what == "exit0":
        sys.exit(0)
    if what == "exit3":
        sys.exit(3)
    if what == "_exit":
        os._exit(0)
    if what == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if what == "ctrl-c":
        raise KeyboardInterrupt
    if what == "bad-str":
        raise BadStr()
    if what == "bad-transient":
        raise BadTransient("marked badly")
    if what == "deep":
        d = {}
        for _ in range(100_000):
            d = {"a": d}
        return d
    if what == "huge":
        return {"blob": "x" * 100_000_000}
    if what == "chdir":
        os.chdir(os.environ["ELSEWHERE"])
        return {"cwd": os.getcwd()}
    if what == "print-key":
        print("the key is", os.environ.get("PROD_KEY"))
        return {"said": "key " + os.environ.get("PROD_KEY", "")}
    if what == "flaky" and CALLS.count("flaky") < 3:
        raise Flaky("rate limited, try later")
    if what == "slow":
        time.sleep(30)
    if what == "leak":
        raise RuntimeError("upstream said: bad key " + os.environ.get("PROD_KEY", "") + "\\n  File \\"x.py\\", line 1")
    return {"id": what, "calls": len(CALLS), "images": [[len(b), m] for b, m in images], "context": context,
            "cwd": os.getcwd()}
"""


@pytest.fixture
def code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` as the project's folder holding ``hostile_mod.py``; cwd set to it."""
    (tmp_path / "hostile_mod.py").write_text(HOSTILE)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def make(code: Path):
    """Build responders on ``hostile_mod``; each one's workers are stopped after the test."""
    with contextlib.ExitStack() as stack:
        def build(*, timeout_s: float = 10.0, retries: int = 0, secrets=()) -> PythonResponder:
            policy = Policy(timeout_s=timeout_s, retries=retries, backoff_s=0.0)
            env = dict(os.environ) | {"PROD_KEY": KEY, "ELSEWHERE": str(code / "elsewhere")}
            spec = PythonProvider(python="hostile_mod:analyze")
            return stack.enter_context(contextlib.closing(PythonResponder(spec, env=env, secrets=secrets,
                                                                          policy=policy, sleep=lambda s: None)))
        yield build


def ask(r: PythonResponder, ident: str, images=()) -> str:
    return r.reply(prompt="ignored", images=list(images), context=CONTEXT | {"id": ident}).text


def test_the_callable_gets_image_pairs_and_the_context_with_the_deadline(make):
    r = make(timeout_s=7.0)
    got = json.loads(ask(r, "plain", [PNG, PNG]))
    assert got["images"] == [[8, "image/png"], [8, "image/png"]]
    assert got["context"] == CONTEXT | {"id": "plain", "timeout_s": 7.0}
    assert (r.provider, r.model, r.endpoint) == ("python", "hostile_mod:analyze", None)
    assert json.loads(ask(r, "plain"))["calls"] == 2                    # one process: its globals persist


def test_load_checks_each_image(make):
    r = make()
    assert r.load([FIXTURE / "photos" / "t2.png"])[0].startswith("data:image/png;base64,")
    with pytest.raises(InputError, match="not a supported image"):
        r.load([FIXTURE / "lots.csv"])


@pytest.mark.parametrize("ident, message", [
    ("exit0", "SystemExit: 0"),
    ("exit3", "SystemExit: 3"),
    ("ctrl-c", "KeyboardInterrupt"),
    ("bad-str", "BadStr (its message could not be read: RuntimeError)"),
    ("bad-transient", "BadTransient: marked badly"),
    ("deep", "returned a result nested too deeply to serialise"),
    ("huge", "returned 95.4 MiB, more than an answer's cap of 16 MiB"),
])
def test_each_hostile_call_is_one_recorded_error_and_the_next_call_is_answered(make, ident, message):
    r = make(retries=2)
    before = os.getcwd()
    with pytest.raises(ReplyError) as err:
        ask(r, ident)
    assert str(err.value) == f"after 1 attempt(s): {message}"
    assert "Traceback" not in str(err.value) and os.getcwd() == before
    assert json.loads(ask(r, "plain"))["calls"] == 2                    # the same worker answers on


@pytest.mark.parametrize("ident, message", [
    ("_exit", "the process exited with status 0 before answering"),
    ("kill", "the process was killed by signal 9 before answering"),
])
def test_a_worker_that_ends_fails_its_call_and_a_new_one_answers_the_next(make, ident, message):
    r = make(retries=2)
    with pytest.raises(ReplyError, match=f"^after 1 attempt\\(s\\): {message}"):
        ask(r, ident)
    assert json.loads(ask(r, "plain"))["calls"] == 1                    # a fresh worker


def test_chdir_in_the_code_moves_neither_the_stage_nor_the_next_call(make, code):
    r = make()
    assert json.loads(ask(r, "chdir"))["cwd"] == str(code / "elsewhere")
    assert os.getcwd() == str(code) and json.loads(ask(r, "plain"))["cwd"] == str(code)


def test_a_transient_error_is_retried_by_the_same_worker_and_others_fail_at_once(make):
    r = make(retries=3)
    reply = r.reply(prompt="", images=[], context=CONTEXT | {"id": "flaky"})
    assert reply.attempts == 3 and json.loads(reply.text)["calls"] == 3
    with pytest.raises(ReplyError, match=r"^after 1 attempt\(s\): BadTransient"):
        ask(r, "bad-transient")                  # a transient property that raises is not a mark


def test_a_call_past_the_deadline_kills_the_worker_and_is_retried(make):
    r = make(timeout_s=0.5, retries=1)
    ask(r, "plain")                              # started: the deadline is the call's alone
    t0 = time.monotonic()
    with pytest.raises(ReplyError, match=r"^after 2 attempt\(s\): timed out after 0.5 s \(the process was killed\)"):
        ask(r, "slow")
    assert time.monotonic() - t0 < 5
    assert json.loads(ask(r, "plain"))["calls"] == 1


def test_the_key_is_redacted_from_answers_errors_and_what_the_code_prints(make):
    r = make(secrets=[KEY])
    assert json.loads(ask(r, "print-key")) == {"said": "key ***"}
    with pytest.raises(ReplyError) as err:
        ask(r, "leak")
    msg = str(err.value)
    assert msg.startswith("after 1 attempt(s): RuntimeError: upstream said: bad key ***") and KEY not in msg
    assert KEY not in "".join(traceback.format_exception(err.value))
    with pytest.raises(ReplyError) as err:
        ask(r, "_exit")                          # the crash message ends with the printed key, redacted
    assert "the key is ***" in str(err.value) and KEY not in str(err.value)


@pytest.mark.parametrize("source, spec, needle", [
    ("def analyze(images, context):\n    return 'hi'\nNOT = 3\n", "m_ok:missing", "m_ok has no callable missing"),
    ("def analyze(images, context):\n    return 'hi'\nNOT = 3\n", "m_ok:NOT", "m_ok has no callable NOT (got int)"),
    ("import a_module_that_is_not_installed\n", "m_bad:analyze", "cannot import m_bad: ModuleNotFoundError"),
    ("import sys\nsys.exit(3)\n", "m_exit:analyze", "cannot import m_exit: SystemExit: 3"),
    ("import sys\nsys.exit(0)\n", "m_exit0:analyze", "cannot import m_exit0: SystemExit: 0"),
    ("raise KeyboardInterrupt\n", "m_int:analyze", "cannot import m_int: KeyboardInterrupt"),
    ("import os\nprint('bye')\nos._exit(0)\n", "m_gone:analyze",
     "cannot import m_gone: the process exited with status 0 before answering; stderr: bye"),
    ("", "m_absent:analyze", "cannot import m_absent: ModuleNotFoundError"),
])
def test_an_entry_point_that_cannot_be_called_is_an_input_error_naming_the_key(tmp_path, monkeypatch, source, spec,
                                                                              needle):
    if source:
        (tmp_path / f"{spec.partition(':')[0]}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        python_responder(PythonProvider(python=spec), env=os.environ, policy=Policy(), secrets=[], where=WHERE)
    assert needle in err.value.message and WHERE in err.value.message and "Traceback" not in err.value.message
    assert os.getcwd() == str(tmp_path)


def test_an_import_that_does_not_finish_is_an_input_error(tmp_path, monkeypatch):
    (tmp_path / "m_hang.py").write_text("import time\nprint('loading')\ntime.sleep(60)\n")
    monkeypatch.chdir(tmp_path)
    t0 = time.monotonic()
    with pytest.raises(InputError, match="importing m_hang did not finish within 1 s; stderr: loading"):
        check_entry_point(PythonProvider(python="m_hang:analyze"), env=os.environ, where=WHERE, timeout_s=1.0)
    assert time.monotonic() - t0 < 10


def test_a_project_in_a_subfolder_imports_the_package_at_the_repository_top(tmp_path, monkeypatch):
    """DVC runs the stage in the project's folder (``eval/``); the team's package is at the repository's top."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "eval").mkdir()
    (tmp_path / "shop_top_pkg").mkdir()
    (tmp_path / "shop_top_pkg/__init__.py").write_text("")
    (tmp_path / "shop_top_pkg/analysis.py").write_text("def analyze(images, context):\n    return 'top'\n")
    (tmp_path / "eval/shop_eval_mod.py").write_text("def analyze(images, context):\n    return 'eval'\n")
    monkeypatch.chdir(tmp_path / "eval")
    for spec, text in [("shop_top_pkg.analysis:analyze", "top"), ("shop_eval_mod:analyze", "eval")]:
        r = python_responder(PythonProvider(python=spec), env=os.environ, policy=Policy(), secrets=[], where="w")
        try:
            assert r.reply(prompt="", images=[], context=CONTEXT).text == text
        finally:
            r.close()


def test_nothing_above_the_repository_top_is_imported(tmp_path, monkeypatch):
    (tmp_path / "shop_above_mod.py").write_text("def analyze(images, context):\n    return 'above'\n")
    (tmp_path / "repo/.git").mkdir(parents=True)
    (tmp_path / "repo/eval").mkdir()
    monkeypatch.chdir(tmp_path / "repo/eval")
    with pytest.raises(InputError, match="cannot import shop_above_mod: ModuleNotFoundError"):
        check_entry_point(PythonProvider(python="shop_above_mod:analyze"), env=os.environ, where="w")


def test_the_identify_stage_records_every_hostile_call_keeps_the_others_and_stays_put(tmp_path, monkeypatch,
                                                                                    capsys, caplog, user_code):
    """The issue's examples through the stage: each is one recorded error, the third run of every item is
    answered, exit 1, no traceback, the key nowhere, nothing written outside the repository. (``user_code``: the
    stage puts the project's folder on ``sys.path`` to find the module's file; restored after.)"""
    import candor_eval.stages.identify as identify
    from tests.stages.test_identify import make_work, write_params

    work = make_work(tmp_path, monkeypatch)
    (work / "prodcode").mkdir()
    (work / "prodcode/__init__.py").write_text("")
    plan = {("T001", 1): "exit0", ("T001", 2): "_exit", ("T002", 1): "chdir", ("T002", 2): "huge",
            ("drill", 1): "bad-str", ("drill", 2): "deep"}
    (work / "prodcode/analysis.py").write_text(HOSTILE.replace("    what = context[\"id\"]\n", (
        f"    what = {{tuple(k.split('/')): v for k, v in {json.dumps({f'{i}/{r}': v for (i, r), v in plan.items()})}"
        ".items()}.get((context['id'], str(context['run'])), 'print-key')\n")))
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("ELSEWHERE", str(outside))
    monkeypatch.setenv("CANDOR_TEST_KEY", KEY)
    monkeypatch.setenv("PROD_KEY", KEY)
    write_params(work, mode="live", runs=3, retries=0, timeout_s=20,
                 providers={"p": {"python": "prodcode.analysis:analyze"}})
    before = sorted(p for p in tmp_path.rglob("*") if not p.is_relative_to(work))
    assert run_main(identify.main, ["--candidate", "p"]) == 1
    out = capsys.readouterr()
    assert os.getcwd() == str(work)
    assert sorted(p for p in tmp_path.rglob("*") if not p.is_relative_to(work)) == before
    rec = {(x.case, x.run): x for x in load_recording(work / "build/live/p.jsonl")}
    assert len(rec) == 9
    errors = {k: x.error for k, x in rec.items() if x.error}
    assert set(errors) == set(plan) - {("T002", 1)}
    assert errors[("T001", 1)] == "after 1 attempt(s): SystemExit: 0"
    assert errors[("T001", 2)].startswith("after 1 attempt(s): the process exited with status 0 before answering")
    assert errors[("T002", 2)] == "after 1 attempt(s): returned 95.4 MiB, more than an answer's cap of 16 MiB"
    assert errors[("drill", 2)] == "after 1 attempt(s): returned a result nested too deeply to serialise"
    assert rec[("T002", 1)].parsed == {"cwd": str(outside)}              # the worker moved, the stage did not
    assert {json.loads(rec[(i, 3)].raw)["said"] for i in ("T001", "T002", "drill")} == {"key ***"}
    everything = out.out + out.err + caplog.text + (work / "build/live/p.jsonl").read_text()
    assert KEY not in everything and "Traceback" not in everything
    assert max(len(x) for x in everything.splitlines()) < 5000           # nothing of the 100 MB result
    assert sys.modules.get("prodcode.analysis") is None                   # never imported by the stage
