"""The live loop's guarantees that need real processes or a whole run: one writer per recording (two real
processes), the call context a production responder gets, the log filter that keeps secrets off the console,
and concurrent calls under a call-rate limit (each (id, run) once, the recording byte-identical to a
sequential run's, resume after an interruption)."""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

import candor_eval.lots.live as live
from candor_eval.common.errors import InputError
from candor_eval.lots.golden import load_golden
from candor_eval.lots.live import RedactingFilter, call_context, hold, redacted_logs
from candor_eval.lots.recording import load_recording
from candor_eval.lots.redact import Redactor
from candor_eval.lots.vocabulary import read_category_library
from tests.chat_server import chat_server
from tests.conftest import CANDOR, ROOT, TESTS, VOCABULARY
from tests.stages import test_identify as identify_test

FIXTURE = TESTS / "data" / "lots"
ENV = "CANDOR_TEST_KEY"
KEY = "sk-LIVE-SENTINEL-60219"
ANSWER = json.dumps({"type": "item", "item": {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090"}})


def workspace(root: Path, url: str) -> Path:
    shutil.copytree(FIXTURE, root / "data" / "lots")
    shutil.copytree(VOCABULARY, root / "data" / "lots" / "vocabulary")
    (root / "params.yaml").write_text(json.dumps({"identify": {
        "mode": "live", "candidates": ["p"], "runs": 2, "pause_s": 0, "timeout_s": 5, "retries": 0,
        "base_url": url, "model": "m", "api_key_env": ENV}}))
    return root


def stage() -> list[str]:
    return [*CANDOR, "identify", "--candidate", "p", "--lots", "data/lots"]


def test_a_second_run_on_the_same_recording_exits_2_naming_the_holder_and_nothing_is_paid_twice(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{ENV: KEY})
    with chat_server([("ok", ANSWER)], latency_s=1.0) as srv:
        ws = workspace(tmp_path / "ws", srv.url)
        first = subprocess.Popen(stage(), cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lock = ws / "build/live/p.jsonl.lock"
        deadline = time.monotonic() + 20
        while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        second = subprocess.run(stage(), cwd=ws, env=env, capture_output=True, text=True, timeout=60)
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert second.returncode == 2 and "Traceback" not in second.stderr
    assert "build/live/p.jsonl: another live run is recording here" in second.stderr
    assert f'"pid": {first.pid}' in second.stderr
    assert len(srv.requests) == 6                                    # six (id, run) pairs, each paid once
    lines = load_recording(ws / "build/live/p.jsonl")
    assert sorted((x.case, x.run) for x in lines) == [(i, r) for i in ("T001", "T002", "drill") for r in (1, 2)]
    assert not lock.exists()                                         # released and removed at the end


def test_the_lock_is_released_for_the_next_run_and_on_error(tmp_path):
    record = tmp_path / "r.jsonl"
    with hold(record):
        with pytest.raises(InputError, match="another live run is recording here"):
            with hold(record):
                pass
    with pytest.raises(RuntimeError):
        with hold(record):
            raise RuntimeError
    with hold(record):                                               # free again
        assert json.loads((tmp_path / "r.jsonl.lock").read_text())["pid"] == os.getpid()


def test_call_context_names_the_kind_and_the_library():
    golden = load_golden(FIXTURE)
    default = read_category_library(VOCABULARY / "category-library.yaml")
    lot, case = (call_context(golden, "T001", 2, default_library=default),
                 call_context(golden, "drill", 1, default_library=default))
    assert (lot["kind"], lot["run"], lot["default_library"]) == ("lot", 2, True)
    assert "Computers" in lot["category_library"]["functional"]
    assert (case["kind"], case["default_library"]) == ("case", False)
    assert case["category_library"]["itemType"] == ["Drill"]
    json.dumps([lot, case])                                          # JSON-able, as the http provider sends it


def test_the_log_filter_redacts_and_strips_surrogates():
    f = RedactingFilter(Redactor.of([KEY]))
    rec = logging.LogRecord("httpx", logging.INFO, "x", 1, "POST %s?k=%s " + chr(0xD800), ("http://h", KEY), None)
    assert f.filter(rec) and rec.getMessage() == "POST http://h?k=*** \ufffd"


def test_redacted_logs_filter_every_root_handler_while_the_block_runs():
    """Inside the block a root handler's records are redacted; after it the filter is gone."""
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Keep()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with redacted_logs(Redactor.of([KEY])):
            logging.getLogger("prod.client").warning("calling with %s", KEY)
        logging.getLogger("prod.client").warning("after %s", "x")
    finally:
        root.removeHandler(handler)
    assert seen == ["calling with ***", "after x"] and not handler.filters



def test_the_log_filter_redacts_a_traceback_and_stack_of_a_record():
    f = RedactingFilter(Redactor.of([KEY]))
    try:
        raise ValueError(f"bad key {json.dumps(KEY)}")
    except ValueError as err:
        rec = logging.LogRecord("prod", logging.ERROR, "x", 1, "failed", (), (type(err), err, err.__traceback__))
    rec.stack_info = f"Stack (most recent call last): key={KEY}"
    assert f.filter(rec)
    text = logging.Formatter().format(rec)
    assert KEY not in text and 'ValueError: bad key "***"' in text and "key=***" in text



def test_an_exception_leaving_a_redacted_block_leaves_redacted():
    with pytest.raises(KeyboardInterrupt) as caught, live.redacted_exceptions(Redactor.of([KEY])):
        raise KeyboardInterrupt(f"stopped while sending {KEY}")
    assert caught.value.args == ("stopped while sending ***",)

SECRET = 'sk-LIVE"q/b\\s<&>-TAIL60219'     # quote, slash, backslash, <, & (visible ASCII: a key can be)


class Echo:
    """A responder that echoes ``SECRET`` the way an app's route would and redacts nothing itself."""

    provider, model, endpoint = "http", "/route", None

    def load(self, images):
        return images

    def reply(self, *, prompt, images, context):
        if context["id"] == "T002":
            raise live.ReplyError("HTTP 401: " + json.dumps({"error": f"bad token {SECRET}"}))
        body = json.dumps({"type": "item", "imageNotes": f"auth was Bearer {SECRET}"}).replace("/", "\\/")
        return live.Reply(text=body, version=f"app 1 ({SECRET})")


def test_the_run_redacts_every_text_it_records_or_logs_with_the_run_secrets(tmp_path: Path, caplog):
    record = tmp_path / "live.jsonl"
    caplog.set_level(logging.INFO)
    lines = live.run_live(load_golden(FIXTURE), ids=["T001", "T002"], runs=1, gallery="all", pause_s=0,
                          template=None, sha="0" * 64, record=record, responder=Echo(),
                          default_library=read_category_library(VOCABULARY / "category-library.yaml"),
                          redact=Redactor.of([SECRET]))
    written = record.read_text()
    assert "TAIL60219" not in written + caplog.text
    assert lines[0].parsed == {"type": "item", "imageNotes": "auth was Bearer ***"}
    assert lines[0].version == "app 1 (***)"
    assert lines[1].error == 'HTTP 401: {"error": "bad token ***"}'


def test_a_line_whose_json_escaping_shows_a_secret_is_written_masked():
    """``\\n`` then ``abcdefgh`` in the serialised line is the secret ``nabcdefgh``: the text showing it is masked."""
    redact = Redactor.of(["nabcdefgh"])
    line = live.RecordLine(case="T001", run=1, raw="x\nabcdefgh", parsed=None, provider="p", model="m",
                           prompt_sha256="0" * 64, gallery="all", version="v1",
                           parse_error="not JSON: Expecting value at line 1 column 1")
    assert "nabcdefgh" not in line.raw and "nabcdefgh" in line.to_json()
    clean = live.redacted_line(line, redact)
    assert (clean.raw, clean.parsed, clean.version) == ("***", None, "v1") and not redact.leaks(clean.to_json())
    error = line.model_copy(update={"raw": None, "parse_error": None, "error": "e\nabcdefgh"})
    assert live.redacted_line(error, redact).error == "***"
    ok = line.model_copy(update={"raw": "fine"})
    assert live.redacted_line(ok, redact) is ok

# ---------------------------------------------------------------- concurrency and the call-rate limit
# Concurrent live calls (identify.concurrency, identify.max_calls_per_minute) through the identify stage,
# against a loopback server that enforces a call-rate limit and answers 429 beyond it: every (id, run)
# recorded exactly once, the achieved rate within 10% of the limit, the recording in (id, run) order and
# byte-identical to a sequential run's, and resume after an interruption with several calls in flight.

RATE_IDS = ("T001", "T002", "drill")
RECORD = "build/live/p.jsonl"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The identify stage's workspace (:func:`tests.stages.test_identify.make_work`), cwd set to it."""
    return identify_test.make_work(tmp_path, monkeypatch)


def achieved_per_minute(times: list[float]) -> float:
    """Calls per minute between the first and the last accepted call (start-up excluded)."""
    return (len(times) - 1) / (times[-1] - times[0]) * 60.0


def test_rate_limited_concurrent_run_loses_and_duplicates_nothing_at_the_limit(work, monkeypatch):
    monkeypatch.setenv(identify_test.ENV, identify_test.KEY)
    limit, runs = 600.0, 20                     # 60 calls, 0.1 s apart: about 6 s
    # each answer takes 0.25 s, so one thread could make at most 240 calls a minute: the limit needs 3+
    with chat_server([("ok", identify_test.ANSWER)], rate_per_minute=limit, latency_s=0.25) as srv:
        identify_test.write_params(work, base_url=srv.url, mode="live", runs=runs, concurrency=4,
                                   max_calls_per_minute=limit,
                     retries=3)
        assert identify_test.run() == 0
    rec = load_recording(work / RECORD)
    wanted = [(i, r) for i in RATE_IDS for r in range(1, runs + 1)]
    assert [(x.case, x.run) for x in rec] == wanted and all(x.error is None for x in rec)    # none lost, none twice
    assert len(srv.accepted) == len(wanted)          # each pair answered once by the server
    assert [(a["case"], a["run"]) for a in identify_test.answers(work)] == wanted
    rate = achieved_per_minute(srv.accepted)
    assert abs(rate - limit) <= 0.10 * limit, (rate, srv.rejected)


def test_concurrent_recording_is_the_sequential_one_byte_for_byte(work, monkeypatch):
    monkeypatch.setenv(identify_test.ENV, identify_test.KEY)
    files = {}
    with chat_server([("ok", identify_test.ANSWER)], latency_s=0.05) as srv:     # one endpoint: every line records it
        for concurrency in (1, 3):
            (work / RECORD).unlink(missing_ok=True)
            identify_test.write_params(work, base_url=srv.url, mode="live", runs=3, concurrency=concurrency)
            assert identify_test.run() == 0
            files[concurrency] = (work / RECORD).read_bytes()
    assert files[1] == files[3] and files[1].count(b"\n") == 9


def test_interrupted_concurrent_run_resumes_exactly_once(work, monkeypatch):
    monkeypatch.setenv(identify_test.ENV, identify_test.KEY)
    real = live.complete
    lock, calls = threading.Lock(), {"n": 0}

    def flaky(*args, **kw):
        with lock:
            calls["n"] += 1
            n = calls["n"]
        if n == 5:
            raise KeyboardInterrupt
        return real(*args, **kw)

    with chat_server([("ok", identify_test.ANSWER)], latency_s=0.05) as srv:
        identify_test.write_params(work, base_url=srv.url, mode="live", runs=4, concurrency=3)
        monkeypatch.setattr(live, "complete", flaky)
        with pytest.raises(KeyboardInterrupt):
            identify_test.run()
    first = load_recording(work / RECORD)
    assert 2 <= len(first) < 12 and len({(x.case, x.run) for x in first}) == len(first)
    monkeypatch.setattr(live, "complete", real)
    with chat_server([("ok", identify_test.ANSWER)]) as srv2:    # calls left in flight by the interruption went to srv
        identify_test.write_params(work, base_url=srv2.url, mode="live", runs=4, concurrency=3)
        assert identify_test.run() == 0
    assert len(srv2.accepted) == 12 - len(first)        # only the missing pairs are asked again
    final = load_recording(work / RECORD)
    assert [(x.case, x.run) for x in final] == [(i, r) for i in RATE_IDS for r in range(1, 5)]
    kept = {(x.case, x.run): x.to_json() for x in final}
    assert all(kept[(x.case, x.run)] == x.to_json() for x in first)
