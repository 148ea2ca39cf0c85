"""The python provider's worker: what it records of a result, how it describes any exception (one whose ``str()``
or ``transient`` raises included), what it refuses (not JSON, too deep, over the cap), and, as a real process, that
a print cannot reach the protocol's stdout nor a read of stdin take a request."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import candor_eval.lots.python_worker as worker
from candor_eval.lots.client import MAX_BODY
from candor_eval.lots.python_worker import answer, describe, images_of, is_transient, result_text

PNG = "data:image/png;base64,iVBORw0KGgo="


def request(ident: str = "T001", images=(PNG,)) -> bytes:
    return json.dumps({"id": ident, "kind": "lot", "run": 1, "category_library": {}, "default_library": True,
                       "timeout_s": 5.0, "images": list(images)}).encode() + b"\n"


def reply(fn, line: bytes | None = None) -> dict:
    return json.loads(answer(fn, line or request()))


@pytest.mark.parametrize("result, text", [
    ({"type": "item", "n": 1}, '{"type": "item", "n": 1}'),
    ({"b": 1, "a": "é"}, '{"b": 1, "a": "é"}'),                  # keys in the order given, text as is
    ("not json at all", "not json at all"),
])
def test_result_text_records_a_dict_as_json_and_a_string_as_is(result, text):
    assert result_text(result) == text
    assert reply(lambda images, context: result) == {"answer": text}


@pytest.mark.parametrize("result, needle", [
    (None, "returned NoneType, expected a dict or a str"),
    ([1], "returned list"),
    ({"x": float("nan")}, "not JSON"),
    ({"x": object()}, "not JSON"),
])
def test_other_results_fail_the_call(result, needle):
    with pytest.raises(ValueError, match=needle):
        result_text(result)
    got = reply(lambda images, context: result)["error"]
    assert needle in got["message"] and got["transient"] is False


def test_the_callable_gets_image_pairs_and_every_other_key_as_its_context():
    seen = {}

    def analyze(images, context):
        seen.update(images=images, context=context)
        return "ok"

    assert reply(analyze) == {"answer": "ok"}
    assert seen["images"] == [(b"\x89PNG\r\n\x1a\n", "image/png")]
    assert seen["context"] == {"id": "T001", "kind": "lot", "run": 1, "category_library": {},
                               "default_library": True, "timeout_s": 5.0}
    assert images_of([]) == []
    for bad in ("not a list", ["http://x/y.png"], ["data:image/png;base64,@@"]):
        with pytest.raises(ValueError):
            images_of(bad)
    assert "could not be read" in reply(analyze, b"[1]\n")["error"]["message"]


class Flaky(Exception):
    transient = True


class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


class BadTransient(Exception):
    @property
    def transient(self):
        raise SystemExit(9)


def raising(exc):
    def analyze(images, context):
        raise exc
    return analyze


@pytest.mark.parametrize("exc, message, transient", [
    (KeyError("itemModel"), "KeyError: 'itemModel'", False),
    (Flaky("rate limited"), "Flaky: rate limited", True),
    (SystemExit(0), "SystemExit: 0", False),
    (SystemExit(), "SystemExit", False),
    (KeyboardInterrupt(), "KeyboardInterrupt", False),              # an SDK's Ctrl-C stand-in
    (GeneratorExit(), "GeneratorExit", False),
    (BadStr(), "BadStr (its message could not be read: RuntimeError)", False),
    (BadTransient("x"), "BadTransient: x", False),
])
def test_every_exception_is_the_call_s_error_described_and_marked_safely(exc, message, transient):
    assert reply(raising(exc)) == {"error": {"message": message, "transient": transient}}


def test_describe_cuts_long_messages_and_a_truthy_transient_is_not_a_mark():
    assert describe(ValueError("x" * 3000)).endswith("x ...") and len(describe(ValueError("x" * 3000))) < 2020
    class SdkError(ValueError):
        transient: object = None

    err = SdkError("y")
    err.transient = "yes"                                        # an SDK's own attribute, not the mark
    assert not is_transient(err)
    err.transient = True
    assert is_transient(err)


def test_a_result_too_deep_or_too_large_is_refused_whole():
    deep: dict = {}
    for _ in range(100_000):
        deep = {"a": deep}
    assert reply(lambda i, c: deep) == {"error": {"message": "returned a result nested too deeply to serialise",
                                                  "transient": False}}
    assert worker.MAX_LINE == MAX_BODY
    big = reply(lambda i, c: "x" * (MAX_BODY + 1))["error"]["message"]
    assert big == "returned 16.0 MiB, more than an answer's cap of 16 MiB"
    assert "answer" in reply(lambda i, c: "x" * (MAX_BODY - 100))


def test_a_lone_surrogate_is_sent_escaped():
    assert json.loads(answer(lambda i, c: "a\udc80b", request())) == {"answer": "a\udc80b"}


def run_worker(*args: str, stdin: bytes, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "candor_eval.lots.python_worker", *args], input=stdin, cwd=cwd,
                          capture_output=True, timeout=60, check=False)


def test_as_a_process_prints_and_stdin_reads_never_touch_the_protocol_and_the_directory_is_restored(tmp_path):
    (tmp_path / "noisy_mod.py").write_text(
        "import os, sys\nprint('printed at import')\n\n\ndef analyze(images, context):\n"
        "    print('printed in the call')\n    os.write(1, b'written on fd 1\\n')\n"
        "    extra = sys.stdin.read()\n    os.chdir('/')\n"
        "    return {'cwd_before': context['id'], 'stdin': extra}\n")
    done = run_worker("noisy_mod:analyze", stdin=request("a") + request("b"), cwd=tmp_path)
    assert done.returncode == 0
    lines = [json.loads(x) for x in done.stdout.decode().splitlines()]
    assert [json.loads(x["answer"]) for x in lines] == [{"cwd_before": "a", "stdin": ""},
                                                        {"cwd_before": "b", "stdin": ""}]
    assert "printed at import" in done.stderr.decode() and "written on fd 1" in done.stderr.decode()


def test_check_mode_answers_once_whatever_the_import_does(tmp_path):
    (tmp_path / "fine_mod.py").write_text("def analyze(images, context):\n    return 'hi'\nNOT = 3\n")
    (tmp_path / "exits_mod.py").write_text("import sys\nsys.exit(3)\n")
    for spec, want in [("fine_mod:analyze", {"answer": "ok"}),
                       ("fine_mod:NOT", "fine_mod has no callable NOT (got int)"),
                       ("fine_mod:absent", "fine_mod has no callable absent"),
                       ("exits_mod:analyze", "cannot import exits_mod: SystemExit: 3"),
                       ("nowhere_mod:analyze", "cannot import nowhere_mod: ModuleNotFoundError")]:
        done = run_worker("--check", spec, stdin=b"", cwd=tmp_path)
        got = json.loads(done.stdout)
        assert done.returncode == 0 and (got == want if isinstance(want, dict) else want in got["error"]["message"])
    served = run_worker("exits_mod:analyze", stdin=request(), cwd=tmp_path)      # changed after the check
    assert "cannot import exits_mod: SystemExit: 3" in json.loads(served.stdout)["error"]["message"]
    assert run_worker("no-colon", stdin=b"", cwd=tmp_path).returncode == 2
