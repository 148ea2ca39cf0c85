"""The python provider: how the entry point is found, what it is given, how its result is recorded, which of
its errors are retried, its deadline, and that no traceback or key reaches a recorded error."""
from __future__ import annotations

import sys
import threading
import time
import traceback

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.client import Policy
from candor_eval.lots.live import ReplyError
from candor_eval.lots.params import PythonProvider
from candor_eval.lots.production import PythonResponder, call_with_deadline, describe, load_entry_point, result_text
from tests.conftest import TESTS

FIXTURE = TESTS / "data" / "lots"
KEY = "sk-PRODUCTION-SENTINEL-5521"
CONTEXT = {"id": "T001", "kind": "lot", "run": 1, "category_library": {}, "default_library": True}


class Flaky(Exception):
    transient = True


def responder(fn, *, sleep=lambda s: None, secrets=(), **policy) -> PythonResponder:
    return PythonResponder(fn=fn, name="m:f", policy=Policy(**({"timeout_s": 2.0, "retries": 2, "backoff_s": 0.0}
                                                               | policy)), secrets=secrets, sleep=sleep)


@pytest.mark.parametrize("result, text", [
    ({"type": "item", "n": 1}, '{"type": "item", "n": 1}'),
    ({"b": 1, "a": "é"}, '{"b": 1, "a": "é"}'),                  # keys in the order given, text as is
    ("not json at all", "not json at all"),
])
def test_result_text_records_a_dict_as_json_and_a_string_as_is(result, text):
    assert result_text(result) == text


@pytest.mark.parametrize("result, needle", [
    (None, "returned NoneType, expected a dict or a str"),
    ([1], "returned list"),
    ({"x": float("nan")}, "not JSON"),
    ({"x": object()}, "not JSON"),
])
def test_other_results_fail_the_run(result, needle):
    with pytest.raises(ValueError, match=needle):
        result_text(result)
    with pytest.raises(ReplyError, match=f"after 1 attempt\\(s\\): .*{needle.split()[0]}"):
        responder(lambda images, context: result).reply(prompt="", images=[], context=CONTEXT)


def test_the_callable_gets_image_pairs_and_the_context_with_the_deadline():
    seen = {}

    def analyze(images, context):
        seen.update(images=images, context=context)
        return {"ok": True}

    reply = responder(analyze, timeout_s=7.0).reply(prompt="ignored", images=[(b"\x89PNG", "image/png")],
                                                    context=CONTEXT)
    assert reply.text == '{"ok": true}' and reply.attempts == 1
    assert seen["images"] == [(b"\x89PNG", "image/png")]
    assert seen["context"] == CONTEXT | {"timeout_s": 7.0}


def test_load_checks_each_image_and_pairs_bytes_with_the_sniffed_type():
    r = responder(lambda i, c: "")
    t2 = FIXTURE / "photos" / "t2.png"
    assert r.load([t2]) == [(t2.read_bytes(), "image/png")]
    bad = FIXTURE / "lots.csv"
    with pytest.raises(InputError, match="not a supported image"):
        r.load([bad])


def test_a_transient_error_is_retried_and_others_fail_at_once():
    calls = []

    def analyze(images, context):
        calls.append(1)
        if len(calls) < 3:
            raise Flaky("rate limited, try later")
        return "third time"

    waits: list[float] = []
    reply = responder(analyze, backoff_s=0.5, sleep=waits.append).reply(prompt="", images=[], context=CONTEXT)
    assert (reply.text, reply.attempts, waits) == ("third time", 3, [0.5, 1.0])

    def marked(images, context):
        err = ConnectionError("reset by peer")
        err.transient = True                      # marked on the instance
        raise err

    with pytest.raises(ReplyError, match=r"^after 3 attempt\(s\): ConnectionError: reset by peer$"):
        responder(marked).reply(prompt="", images=[], context=CONTEXT)

    calls.clear()

    def broken(images, context):
        calls.append(1)
        raise KeyError("itemModel")

    with pytest.raises(ReplyError, match=r"^after 1 attempt\(s\): KeyError: 'itemModel'$"):
        responder(broken).reply(prompt="", images=[], context=CONTEXT)
    assert len(calls) == 1                        # not marked: not retried


def test_a_truthy_but_not_true_transient_is_not_a_mark():
    class Odd(Exception):
        transient = "yes"

    calls = []

    def analyze(images, context):
        calls.append(1)
        raise Odd("x")

    with pytest.raises(ReplyError):
        responder(analyze).reply(prompt="", images=[], context=CONTEXT)
    assert len(calls) == 1


def test_a_call_past_the_deadline_fails_as_timed_out_and_is_retried():
    release = threading.Event()

    def slow(images, context):
        release.wait(5)
        return "late"

    t0 = time.monotonic()
    with pytest.raises(ReplyError, match=r"^after 2 attempt\(s\): timed out after 0.2 s$"):
        responder(slow, timeout_s=0.2, retries=1).reply(prompt="", images=[], context=CONTEXT)
    assert time.monotonic() - t0 < 1.5
    release.set()


def test_call_with_deadline_returns_or_reraises():
    assert call_with_deadline(lambda: 3, 1.0) == 3
    with pytest.raises(ZeroDivisionError):
        call_with_deadline(lambda: 1 / 0, 1.0)


def test_errors_are_type_and_message_never_a_traceback_and_the_key_is_redacted():
    def leaky(images, context):
        raise RuntimeError(f"upstream said: bad key {KEY}\n  File \"x.py\", line 1")

    with pytest.raises(ReplyError) as err:
        responder(leaky, secrets=[KEY]).reply(prompt="", images=[], context=CONTEXT)
    msg = str(err.value)
    assert msg.startswith("after 1 attempt(s): RuntimeError: upstream said: bad key ***") and KEY not in msg
    assert "Traceback" not in msg and KEY not in "".join(traceback.format_exception(err.value))
    echo = responder(lambda i, c: {"note": KEY}, secrets=[KEY]).reply(prompt="", images=[], context=CONTEXT)
    assert echo.text == '{"note": "***"}'
    assert describe(ValueError("x" * 3000)).endswith("x ...") and describe(KeyboardInterrupt()) == "KeyboardInterrupt"


def test_load_entry_point_imports_from_the_working_directory(tmp_path, monkeypatch, user_code):
    (tmp_path / "prod_mod_ok.py").write_text("def analyze(images, context):\n    return 'hi'\nNOT = 3\n")
    (tmp_path / "prod_mod_bad.py").write_text("import a_module_that_is_not_installed\n")
    monkeypatch.chdir(tmp_path)
    fn = load_entry_point(PythonProvider(python="prod_mod_ok:analyze"), where="identify.providers.x.python")
    assert fn([], {}) == "hi"
    for spec, needle in [("prod_mod_ok:missing", "prod_mod_ok has no callable missing"),
                         ("prod_mod_ok:NOT", "has no callable NOT"),
                         ("prod_mod_bad:analyze", "cannot import prod_mod_bad: ModuleNotFoundError"),
                         ("prod_mod_absent:analyze", "cannot import prod_mod_absent")]:
        with pytest.raises(InputError) as err:
            load_entry_point(PythonProvider(python=spec), where="identify.providers.x.python")
        assert needle in err.value.message and "identify.providers.x.python" in err.value.message


def test_a_project_in_a_subfolder_imports_the_package_at_the_repository_top(tmp_path, monkeypatch, user_code):
    """DVC runs the stage in the project's folder (``eval/``); the team's package is at the repository's top."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "eval").mkdir()
    (tmp_path / "shop_top_pkg").mkdir()
    (tmp_path / "shop_top_pkg/__init__.py").write_text("")
    (tmp_path / "shop_top_pkg/analysis.py").write_text("def analyze(images, context):\n    return 'top'\n")
    (tmp_path / "eval/shop_eval_mod.py").write_text("def analyze(images, context):\n    return 'eval'\n")
    monkeypatch.chdir(tmp_path / "eval")
    sys.path.append(str(tmp_path))                  # already on the path, later: moved to its place
    fn = load_entry_point(PythonProvider(python="shop_top_pkg.analysis:analyze"), where="w")
    assert fn([], {}) == "top"
    assert load_entry_point(PythonProvider(python="shop_eval_mod:analyze"), where="w")([], {}) == "eval"
    assert sys.path[:2] == [str(tmp_path / "eval"), str(tmp_path)] and sys.path.count(str(tmp_path)) == 1


def test_nothing_above_the_repository_top_is_imported(tmp_path, monkeypatch, user_code):
    (tmp_path / "shop_above_mod.py").write_text("def analyze(images, context):\n    return 'above'\n")
    (tmp_path / "repo/.git").mkdir(parents=True)
    (tmp_path / "repo/eval").mkdir()
    monkeypatch.chdir(tmp_path / "repo/eval")
    with pytest.raises(InputError, match="cannot import shop_above_mod: ModuleNotFoundError"):
        load_entry_point(PythonProvider(python="shop_above_mod:analyze"), where="w")
