"""Concurrent live calls (:mod:`candor.lots.live` with ``identify.concurrency`` and
``identify.max_calls_per_minute``) through the identify stage, against a loopback server that
enforces a call-rate limit and answers 429 beyond it: every (id, run) recorded exactly once, the
achieved rate within 10% of the limit, the recording in (id, run) order and byte-identical to a
sequential run's, and resume after an interruption with several calls in flight."""
from __future__ import annotations

import threading

import pytest

import candor.lots.live as live
from candor.lots.recording import load_recording
from tests.chat_server import chat_server
from tests.stages.test_identify import (
    ANSWER,
    ENV,
    KEY,
    answers,
    run,
    work,  # noqa: F401 - a fixture
    write_params,
)

IDS = ("T001", "T002", "drill")
RECORD = "build/live/p.jsonl"


def achieved_per_minute(times: list[float]) -> float:
    """Calls per minute between the first and the last accepted call (start-up excluded)."""
    return (len(times) - 1) / (times[-1] - times[0]) * 60.0


def test_rate_limited_concurrent_run_loses_and_duplicates_nothing_at_the_limit(work, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    limit, runs = 600.0, 20                     # 60 calls, 0.1 s apart: about 6 s
    # each answer takes 0.25 s, so one thread could make at most 240 calls a minute: the limit needs 3+
    with chat_server([("ok", ANSWER)], rate_per_minute=limit, latency_s=0.25) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=runs, concurrency=4, max_calls_per_minute=limit,
                     retries=3)
        assert run() == 0
    rec = load_recording(work / RECORD)
    wanted = [(i, r) for i in IDS for r in range(1, runs + 1)]
    assert [(x.case, x.run) for x in rec] == wanted and all(x.error is None for x in rec)    # none lost, none twice
    assert len(srv.accepted) == len(wanted)          # each pair answered once by the server
    assert [(a["case"], a["run"]) for a in answers(work)] == wanted
    rate = achieved_per_minute(srv.accepted)
    assert abs(rate - limit) <= 0.10 * limit, (rate, srv.rejected)


def test_concurrent_recording_is_the_sequential_one_byte_for_byte(work, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    files = {}
    with chat_server([("ok", ANSWER)], latency_s=0.05) as srv:     # one endpoint: every line records it
        for concurrency in (1, 3):
            (work / RECORD).unlink(missing_ok=True)
            write_params(work, base_url=srv.url, mode="live", runs=3, concurrency=concurrency)
            assert run() == 0
            files[concurrency] = (work / RECORD).read_bytes()
    assert files[1] == files[3] and files[1].count(b"\n") == 9


def test_interrupted_concurrent_run_resumes_exactly_once(work, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    real = live.complete
    lock, calls = threading.Lock(), {"n": 0}

    def flaky(*args, **kw):
        with lock:
            calls["n"] += 1
            n = calls["n"]
        if n == 5:
            raise KeyboardInterrupt
        return real(*args, **kw)

    with chat_server([("ok", ANSWER)], latency_s=0.05) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=4, concurrency=3)
        monkeypatch.setattr(live, "complete", flaky)
        with pytest.raises(KeyboardInterrupt):
            run()
    first = load_recording(work / RECORD)
    assert 2 <= len(first) < 12 and len({(x.case, x.run) for x in first}) == len(first)
    monkeypatch.setattr(live, "complete", real)
    with chat_server([("ok", ANSWER)]) as srv2:        # calls left in flight by the interruption went to srv
        write_params(work, base_url=srv2.url, mode="live", runs=4, concurrency=3)
        assert run() == 0
    assert len(srv2.accepted) == 12 - len(first)        # only the missing pairs are asked again
    final = load_recording(work / RECORD)
    assert [(x.case, x.run) for x in final] == [(i, r) for i in IDS for r in range(1, 5)]
    kept = {(x.case, x.run): x.to_json() for x in final}
    assert all(kept[(x.case, x.run)] == x.to_json() for x in first)
