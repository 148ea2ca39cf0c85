"""The exec provider against real child processes (tests/exec_child.py, and a Node one when ``node`` is on PATH):
the request it writes, the process kept alive, and every failure mode recorded as a failed call with the process
restarted: a crash, an exit 0 mid-run, a garbage line, silence past the deadline, a flood on stderr, a line over
the cap, a secret echoed in the answer."""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

import candor_eval.lots.child as child
from candor_eval.common.errors import InputError
from candor_eval.lots.child import ExecResponder, answer_of, exec_responder
from candor_eval.lots.client import CallError, Policy, Retryable
from candor_eval.lots.live import ReplyError
from candor_eval.lots.params import ExecProvider, IdentifyParams
from tests.conftest import ROOT, TESTS

SCRIPT = TESTS / "exec_child.py"
SECRET = "Bearer tok-EXEC-SENTINEL-7731"
LIBRARY = {"functional": ["Tools"], "specific": None, "itemType": None}
IMG = "data:image/png;base64,iVBORw0KGgo="


def ctx(ident: str, run: int = 1) -> dict:
    return {"id": ident, "kind": "lot", "run": run, "category_library": LIBRARY, "default_library": True}


@pytest.fixture
def make():
    made: list[ExecResponder] = []

    def build(*, timeout_s: float = 5.0, retries: int = 0, env: dict | None = None, secrets=(),
              argv=None) -> ExecResponder:
        r = ExecResponder(argv or [sys.executable, str(SCRIPT)], env=env or {}, secrets=secrets,
                          policy=Policy(timeout_s=timeout_s, retries=retries, backoff_s=0.0), sleep=lambda s: None)
        made.append(r)
        return r

    yield build
    for r in made:
        r.close()


def pid_of(reply) -> int:
    return int(json.loads(reply.text)["imageNotes"].split()[1])


def test_one_request_line_with_the_context_the_images_and_the_deadline_and_the_version_recorded(make):
    r = make(timeout_s=4.0)
    reply = r.reply(prompt="ignored", images=[IMG, IMG], context=ctx("echo", 2))
    assert json.loads(reply.text) == {"id": "echo", "kind": "lot", "run": 2, "category_library": LIBRARY,
                                      "default_library": True, "timeout_s": 4.0, "images": 2,
                                      "pid": json.loads(reply.text)["pid"]}
    assert (reply.version, reply.attempts) == ("tiny 1.0", 1)
    assert r.provider == "exec" and r.endpoint is None


def test_one_process_answers_every_call_of_a_thread_and_one_per_thread(make):
    r = make()
    pids = {pid_of(r.reply(prompt="", images=[IMG], context=ctx("a", n))) for n in (1, 2, 3)}
    assert len(pids) == 1
    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(pid_of(r.reply(prompt="", images=[], context=ctx("b")))))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 2 and not set(seen) & pids          # one process per worker thread


@pytest.mark.parametrize("ident, needle", [
    ("crash", "after 1 attempt(s): the process exited with status 3 before answering; stderr: boom"),
    ("exit0", "after 1 attempt(s): the process exited with status 0 before answering"),
    ("garbage", "after 1 attempt(s): malformed response: not a JSON line (Expecting value): "
                "'Loading model weights... done'"),
    ("fatal", "after 1 attempt(s): no nameplate"),
])
def test_a_failed_call_is_recorded_verbatim_not_retried_and_the_next_call_is_answered(make, ident, needle):
    r = make(retries=2)
    before = pid_of(r.reply(prompt="", images=[], context=ctx("a")))
    with pytest.raises(ReplyError) as err:
        r.reply(prompt="", images=[], context=ctx(ident))
    assert str(err.value) == needle and err.value.__suppress_context__
    after = pid_of(r.reply(prompt="", images=[], context=ctx("a")))
    assert (after == before) == (ident == "fatal")             # an error it reports keeps the process


def test_silence_past_the_deadline_kills_the_process_and_a_new_one_answers(make):
    r = make(timeout_s=1.5, retries=1)
    before = pid_of(r.reply(prompt="", images=[], context=ctx("a")))
    t0 = time.monotonic()
    with pytest.raises(ReplyError, match=r"^after 2 attempt\(s\): timed out after 1.5 s \(the process was killed\)$"):
        r.reply(prompt="", images=[], context=ctx("silent"))
    assert time.monotonic() - t0 < 10.0                         # two attempts of 1.5 s, not a minute
    after = pid_of(r.reply(prompt="", images=[], context=ctx("a")))
    assert after != before
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)


SLOW_START = ("import json, sys, time\ntime.sleep(1.5)\nfor line in sys.stdin:\n"
              "    print(json.dumps({'answer': json.loads(line)['id']}), flush=True)\n")


@pytest.mark.parametrize("startup_s, first", [(0.0, None), (5.0, "a")])
def test_the_first_call_of_a_process_is_given_startup_s_more(startup_s, first):
    r = ExecResponder([sys.executable, "-c", SLOW_START], env={}, policy=Policy(timeout_s=0.5, retries=0),
                      startup_s=startup_s)
    try:
        if first is None:
            with pytest.raises(ReplyError, match=r"timed out after 0.5 s"):
                r.reply(prompt="", images=[], context=ctx("a"))
        else:
            assert r.reply(prompt="", images=[], context=ctx("a")).text == first
            assert r.reply(prompt="", images=[], context=ctx("b")).text == "b"     # started: 0.5 s is enough
    finally:
        r.close()


def test_a_transient_error_is_retried_by_the_same_process(make):
    r = make(retries=1)
    reply = r.reply(prompt="", images=[], context=ctx("transient"))
    assert (reply.text, reply.attempts) == ("fine", 2)


def test_a_flood_on_stderr_never_blocks_nor_reaches_the_console_and_only_a_bounded_tail_is_kept(make, capfd):
    r = make(timeout_s=20.0)
    reply = r.reply(prompt="", images=[], context=ctx("flood"))
    assert json.loads(reply.text)["type"] == "item"
    with r._lock:
        (proc,) = r._children.values()
    deadline = time.monotonic() + 10
    while not proc.stderr_tail().endswith("flood done") and time.monotonic() < deadline:
        time.sleep(0.01)                                         # stderr is drained apart from stdout
    assert len(proc._tail) <= child.STDERR_KEPT and proc.stderr_tail().endswith("flood done")
    assert len(proc.stderr_tail()) <= child.STDERR_SHOWN
    out = capfd.readouterr()
    assert out.out == "" and out.err == ""


def test_a_line_over_the_cap_is_malformed_and_the_process_is_replaced(make, monkeypatch):
    monkeypatch.setattr(child, "MAX_LINE", 1000)
    r = make()
    with pytest.raises(ReplyError, match="malformed response: a line larger than"):
        r.reply(prompt="", images=[], context=ctx("huge"))
    assert json.loads(r.reply(prompt="", images=[], context=ctx("a")).text)["type"] == "item"


def test_a_second_line_for_one_request_fails_the_next_call_and_desyncs_nothing(make):
    r = make()
    assert r.reply(prompt="", images=[], context=ctx("twolines")).text == "one"
    with r._lock:
        (proc,) = r._children.values()
    deadline = time.monotonic() + 10
    while proc.lines.empty() and time.monotonic() < deadline:   # the second line, read by the stdout thread
        time.sleep(0.01)
    with pytest.raises(ReplyError, match="wrote a line before this request"):
        r.reply(prompt="", images=[], context=ctx("a"))
    assert json.loads(r.reply(prompt="", images=[], context=ctx("a")).text)["imageNotes"].startswith("a ")


def test_a_secret_echoed_is_redacted_from_answer_version_error_and_stderr(make):
    r = make(env={"EXEC_SECRET": SECRET}, secrets=[SECRET])
    reply = r.reply(prompt="", images=[], context=ctx("secret"))
    assert json.loads(reply.text) == {"note": "token *** word ***"} and reply.version == "v ***"
    with pytest.raises(ReplyError) as err:
        r.reply(prompt="", images=[], context=ctx("secret-error"))
    assert str(err.value) == "after 1 attempt(s): refused ***"
    r2 = make(env={"EXEC_SECRET": SECRET}, secrets=[SECRET],          # a crash's stderr tail is redacted too
              argv=[sys.executable, "-c", "import os,sys; sys.stderr.write(os.environ['EXEC_SECRET']); sys.exit(5)"])
    with pytest.raises(ReplyError) as err:
        r2.reply(prompt="", images=[], context=ctx("c"))
    assert str(err.value) == "after 1 attempt(s): the process exited with status 5 before answering; stderr: ***"


def test_close_stops_every_process(make):
    r = make()
    pid = pid_of(r.reply(prompt="", images=[], context=ctx("a")))
    r.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert pid_of(r.reply(prompt="", images=[], context=ctx("a"))) != pid   # a new run starts a new one


@pytest.mark.parametrize("line, needle", [
    (b'{"answer": {"a": 1}, "version": 2}', "version must be a string"),
    (b'{"answer": [1]}', "the answer returned list"),
    (b'{"answer": "x", "error": {"message": "m"}}', "expected {"),
    (b'{"error": "m"}', "error must be"),
    (b'[1]', "expected a JSON object, got list"),
    (b'\xff\n', "not UTF-8 (byte 0)"),
    (b'{"answer": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply to read"),
])
def test_malformed_lines(line, needle):
    with pytest.raises(ValueError, match=re.escape(needle)):
        answer_of(line)


def test_answer_and_error_lines():
    assert answer_of(b'{"answer": {"b": 1, "a": "\\u00e9"}, "version": "v"}\n') == ('{"b": 1, "a": "é"}', "v")
    assert answer_of(b'{"answer": "text"}') == ("text", None)
    with pytest.raises(Retryable, match="busy"):
        answer_of(b'{"error": {"message": "busy", "transient": true}}')
    with pytest.raises(CallError, match="gone"):
        answer_of(b'{"error": {"message": "gone"}}')
    with pytest.raises(CallError) as err:
        answer_of(json.dumps({"error": {"message": "z" * 5000}}).encode())
    assert str(err.value) == "z" * 2000 + " ..."


def test_the_declared_environment_only_and_the_program_found_on_path(make, monkeypatch):
    spec = ExecProvider(exec=["python3", str(SCRIPT)], env=["EXEC_PLAIN", "EXEC_UNSET"], secrets=["EXEC_SECRET"])
    environ = {"PATH": str(Path(sys.executable).parent), "EXEC_PLAIN": "x", "EXEC_SECRET": SECRET,
               "CANDOR_UNDECLARED": "leak-0123456789"}
    r = exec_responder(spec, environ=environ, policy=Policy(timeout_s=5, retries=0), where="identify.providers.w")
    try:
        names = json.loads(r.reply(prompt="", images=[], context=ctx("env")).text)["env"]
        assert {"EXEC_PLAIN", "EXEC_SECRET"} <= set(names)
        assert not {"CANDOR_UNDECLARED", "PATH", "EXEC_UNSET"} & set(names)
        assert r.model == f"python3 {SCRIPT}"              # the declared argv, not the resolved program
    finally:
        r.close()


@pytest.mark.parametrize("environ, needle", [
    ({"PATH": "/nowhere"}, "identify.providers.w.exec[0]: program 'python3' not found on PATH"),
    ({"PATH": str(Path(sys.executable).parent)}, "variable EXEC_SECRET (identify.providers.w.secrets) is not set"),
    ({"PATH": str(Path(sys.executable).parent), "EXEC_SECRET": "short"}, "shorter than 8"),
])
def test_bad_environment_is_exit_2_naming_the_variable(environ, needle):
    spec = ExecProvider(exec=["python3", "x.py"], secrets=["EXEC_SECRET"])
    with pytest.raises(InputError) as err:
        exec_responder(spec, environ=environ, policy=Policy(), where="identify.providers.w")
    assert needle in str(err.value)


@pytest.mark.parametrize("spec, needle", [
    ({"exec": "node analyze.mjs"}, "exec is an argv list ([program, arg, ...]), never a shell string"),
    ({"exec": []}, "at least 1 item"),
    ({"exec": [""]}, "at least 1 character"),
    ({"exec": ["node"], "env": ["not a name"]}, "String should match pattern"),
    ({"exec": ["node"], "shell": True}, "Extra inputs are not permitted"),
])
def test_bad_exec_declarations_are_refused(spec, needle):
    with pytest.raises(ValueError, match=re.escape(needle)):
        ExecProvider(**spec)


def test_an_exec_candidate_needs_a_source():
    with pytest.raises(ValueError, match=r"the exec candidate\(s\) w need a source"):
        IdentifyParams(candidates=["w"], providers={"w": {"exec": ["node", "a.mjs"]}})
    p = IdentifyParams(candidates=["w"], providers={"w": {"exec": ["node", "a.mjs"]}}, sources={"w": "a.mjs"})
    assert isinstance(p.provider("w"), ExecProvider)


NODE_EXAMPLE = re.compile(r"<!-- exec-example: (?P<name>\S+) -->\n```js\n(?P<code>.*?)```", re.S)


def node_example() -> tuple[str, str]:
    m = NODE_EXAMPLE.search((ROOT / "docs" / "lots.md").read_text(encoding="utf-8"))
    assert m, "docs/lots.md holds the Node example of the exec provider"
    return m["name"], m["code"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_the_node_example_of_the_docs_speaks_the_protocol(tmp_path, make):
    name, code = node_example()
    (tmp_path / name).parent.mkdir(parents=True)
    (tmp_path / name).write_text(code)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "analyze.mjs").write_text(
        "export async function analyzeImages(images, ctx) {\n"
        "  if (ctx.id === 'bad') throw new Error('no nameplate');\n"
        "  return {type: 'item', item: {itemModel: 'OptiPlex 7090'}, imageNotes: `${ctx.kind} ${images.length}`};\n"
        "}\n")
    r = make(argv=[shutil.which("node") or "node", str(tmp_path / name), "--version", "v2"])
    reply = r.reply(prompt="", images=[IMG, IMG], context=ctx("L1"))
    assert json.loads(reply.text)["imageNotes"] == "lot 2" and reply.version == "v2"
    with pytest.raises(ReplyError, match=r"^after 1 attempt\(s\): no nameplate$"):
        r.reply(prompt="", images=[], context=ctx("bad"))
    assert json.loads(r.reply(prompt="", images=[], context=ctx("L2")).text)["type"] == "item"
