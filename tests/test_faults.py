"""Faults: a provider failing in every way, kill -9 of a live run, and a stage interrupted mid-write.

Every stage here is a real process (``python -m candor_eval.stages.<module>`` in a copy of the
reliability workspace, :mod:`tests.bad_inputs.workspace`); the provider is the
loopback chat server of :mod:`tests.chat_server`. Unit-level retry behaviour is
in tests/lots/test_chat.py and the in-process resume in tests/stages/test_identify.py; these
tests check the stage end to end: the recording, the answers, the exit code.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from candor_eval.lots.recording import load_recording
from tests.bad_inputs import workspace as W
from tests.chat_server import chat_server

KEY = "sk-FAULTS-SENTINEL-5d1c0b7e"
HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
PAIRS = [(i, r) for i in ("T001", "T002", "drill") for r in (1, 2)]
RECORD = "build/live/p.jsonl"


def live(ws: Path, url: str, **extra) -> None:
    W.set_params(ws, identify={"mode": "live", "base_url": url, "retries": 1, "backoff_s": 0, "pause_s": 0,
                               "timeout_s": 0.5, **extra})


def run_live(ws: Path) -> W.Result:
    return W.run_stage(ws, "identify", extra_env={W.KEY_ENV: KEY})


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assert_no_key(ws: Path, *texts: str) -> None:
    for p in ws.rglob("*"):
        if p.is_file():
            assert KEY.encode() not in p.read_bytes(), p
    for t in texts:
        assert KEY not in t


def test_provider_failing_every_way_records_each_run_keeps_the_rest_and_exits_1(tmp_path: Path):
    ws = W.copy_base(tmp_path / "ws")
    # retries=1 (two attempts); pairs in order T001/1, T001/2, T002/1, T002/2, drill/1, drill/2
    script = [("status", 429, 0), ("status", 429, 0),            # T001/1: rate limited twice
              ("status", 500), ("status", 503),                   # T001/2: 5xx until retries are exhausted
              ("sleep", 1.0, W.ANSWER), ("sleep", 1.0, W.ANSWER),  # T002/1: past the 0.5 s timeout twice
              ("body", 502, HTML), ("body", 502, HTML),           # T002/2: a proxy's HTML error page
              ("malformed", b'{"choices": [{"message": '),        # drill/1: cut-off JSON (not retried)
              ("ok", W.ANSWER)]                                   # drill/2: fine
    with chat_server(script) as srv:
        live(ws, srv.url)
        res = run_live(ws)
    assert res.code == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert len(srv.requests) == 10
    rec = {(ln.case, ln.run): ln for ln in load_recording(ws / RECORD)}
    assert sorted(rec) == sorted(PAIRS)
    expected = {("T001", 1): "after 2 attempt(s): HTTP 429", ("T001", 2): "after 2 attempt(s): HTTP 503",
                ("T002", 1): "after 2 attempt(s): timed out after 0.5 s",
                ("T002", 2): "after 2 attempt(s): HTTP 502 Bad Gateway: <!DOCTYPE html>",
                ("drill", 1): "after 1 attempt(s): malformed response: response is not JSON"}
    for pair, start in expected.items():
        assert rec[pair].error is not None and rec[pair].error.startswith(start), (pair, rec[pair].error)
    assert rec[("drill", 2)].error is None and rec[("drill", 2)].parsed is not None
    answers = [json.loads(x) for x in (ws / "build/answers/p.jsonl").read_text().splitlines()]
    assert [(a["case"], a["run"], a["status"]) for a in answers] == [
        (c, r, "ok" if (c, r) == ("drill", 2) else "error") for c, r in PAIRS]
    assert "5 run(s) failed" in res.stderr
    assert_no_key(ws, res.stdout, res.stderr)

    # the rerun calls exactly the five failed pairs again and keeps the good one
    with chat_server([("ok", W.ANSWER)]) as srv2:
        live(ws, srv2.url)
        res2 = run_live(ws)
    assert res2.code == 0, res2.stderr
    assert len(srv2.requests) == 5
    rec2 = load_recording(ws / RECORD)
    assert [(x.case, x.run) for x in rec2] == PAIRS and all(x.error is None for x in rec2)   # in (id, run) order
    assert rec2[-1].to_json() == rec[("drill", 2)].to_json()     # the kept run is the same line


def test_trickling_server_and_redirects_are_recorded_provider_failures_in_bounded_time(tmp_path: Path):
    ws = W.copy_base(tmp_path / "ws")
    with chat_server([("ok", W.ANSWER)]) as other:            # the host a redirect points to
        # one byte every 50 ms (a body of about 10 s per call), then redirects elsewhere
        script = [("trickle", 0.05, W.ANSWER)] * 4 + [("redirect", 307, other.url + "/chat/completions"),
                                                       ("redirect", 302, other.url + "/chat/completions")]
        with chat_server(script) as srv:
            live(ws, srv.url, retries=0, timeout_s=0.5, concurrency=2)
            t0 = time.monotonic()
            res = run_live(ws)
            elapsed = time.monotonic() - t0
    assert res.code == 1 and "Traceback" not in res.stderr, res.stderr
    assert elapsed < 8, elapsed                                # 2 rounds of 0.5 s calls, plus start-up
    assert other.requests == []                                # no redirect followed: the key went nowhere else
    errors = sorted(x.error for x in load_recording(ws / RECORD))
    assert errors[:2] == [f"after 1 attempt(s): HTTP {c} {r}: redirect to {other.url.removesuffix('/v1')}"
                          f" not followed (identify.base_url must name the endpoint itself)"
                          for c, r in ((302, "Found"), (307, "Temporary Redirect"))]
    assert errors[2:] == ["after 1 attempt(s): timed out after 0.5 s"] * 4
    assert_no_key(ws, res.stdout, res.stderr)


def test_connection_refused_records_every_run_and_exits_1(tmp_path: Path):
    ws = W.copy_base(tmp_path / "ws")
    live(ws, f"http://127.0.0.1:{closed_port()}/v1")
    res = run_live(ws)
    assert res.code == 1 and "Traceback" not in res.stderr, res.stderr
    rec = load_recording(ws / RECORD)
    assert sorted((x.case, x.run) for x in rec) == sorted(PAIRS)
    assert all(x.error.startswith("after 2 attempt(s): connection failed") for x in rec)
    assert_no_key(ws, res.stdout, res.stderr)


def test_kill_9_mid_run_then_rerun_loses_and_duplicates_nothing(tmp_path: Path):
    ws = W.copy_base(tmp_path / "ws")
    record = ws / RECORD
    with chat_server([("sleep", 0.3, W.ANSWER)]) as srv:
        live(ws, srv.url, timeout_s=5)
        cmd = [sys.executable, "-m", *W.STAGES["identify"]]
        proc = subprocess.Popen(cmd, cwd=ws, env=W.env(**{W.KEY_ENV: KEY}), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if record.exists() and record.read_text().count("\n") >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
        called_before = len(srv.requests)
    # what the kill left: valid JSONL (a cut-off last line is the one thing allowed), no duplicates
    text = record.read_text()
    whole = load_recording(record, allow_partial_tail=True)
    assert 3 <= len(whole) < 6 and len({(x.case, x.run) for x in whole}) == len(whole)
    assert (ws / "build/answers/p.jsonl").read_bytes() == (W.shared_base() / "build/answers/p.jsonl").read_bytes()
    assert called_before >= len(whole)

    with chat_server([("ok", W.ANSWER)]) as srv2:
        live(ws, srv2.url)
        res = run_live(ws)
    assert res.code == 0, res.stderr
    assert len(srv2.requests) == 6 - len(whole), text      # only the missing runs are called again
    final = load_recording(record)                          # strict: every line whole
    assert sorted((x.case, x.run) for x in final) == sorted(PAIRS)
    assert [x.to_json() for x in final[:len(whole)]] == [x.to_json() for x in whole]   # kept as they were
    assert record.read_text().endswith("\n")
    answers = [json.loads(x) for x in (ws / "build/answers/p.jsonl").read_text().splitlines()]
    assert [(a["case"], a["run"]) for a in answers] == PAIRS and all(a["status"] == "ok" for a in answers)


SLOW_FSYNC = """
import os, runpy, sys, time
real = os.fsync
def slow(fd):
    time.sleep(float(os.environ["SLOW_FSYNC_S"]))
    return real(fd)
os.fsync = slow
sys.argv = [sys.argv[1], *sys.argv[2:]]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def outputs(ws: Path) -> dict[str, bytes]:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for d in ("metrics", "plots") for p in (ws / d).rglob("*")
            if p.is_file()}


def test_stage_killed_mid_write_leaves_old_or_new_files_never_partial(tmp_path: Path, kill_after_tmp: int = 3):
    """SIGKILL score-detection while it is writing (fsync slowed): each output is whole, old or new."""
    old = W.copy_base(tmp_path / "old")
    W.set_params(old, thresholds={"default": 0.5, "deer": 0.45})      # the new run's outputs all differ
    new = W.copy_base(tmp_path / "new")
    W.set_params(new, thresholds={"default": 0.5, "deer": 0.45})
    assert W.run_stage(new, "score-detection").code == 0
    before, after = outputs(old), outputs(new)
    assert before != after

    cmd = [sys.executable, "-c", SLOW_FSYNC, *W.STAGES["score-detection"]]
    proc = subprocess.Popen(cmd, cwd=old, env=W.env(SLOW_FSYNC_S="0.25"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    seen: set[str] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and len(seen) < kill_after_tmp:
        seen |= {p.name for p in (old / ".candor-tmp").glob("*.tmp")}     # candor_eval.common.atomic.TMP_DIR
        time.sleep(0.01)
    assert proc.poll() is None, "the stage finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    finals = got = outputs(old)
    assert set(got) == set(before), "an output appeared or vanished (or a temporary file is in one)"
    mixed = {k: ("old" if v == before[k] else "new" if v == after.get(k) else "PARTIAL") for k, v in finals.items()}
    assert "PARTIAL" not in mixed.values(), mixed
    assert 1 <= list(mixed.values()).count("new") <= kill_after_tmp - 1, mixed   # killed during the third write
    for k, v in finals.items():
        if k.endswith(".json"):
            json.loads(v)
    # SIGKILL cannot clean up: its temporary files stay in the temporary folder, outside every output
    assert list((old / ".candor-tmp").glob("*.tmp"))

    # the rerun converges on the new outputs exactly, and sweeps the temporary files
    assert W.run_stage(old, "score-detection").code == 0
    assert outputs(old) == after and not (old / ".candor-tmp").exists()


def test_stage_failing_mid_write_leaves_no_temp_file_and_whole_outputs(tmp_path: Path):
    """An exception part-way through the writes (disk full on the third file): no temp file, no partial file."""
    ws = W.copy_base(tmp_path / "ws")
    W.set_params(ws, thresholds={"default": 0.5, "deer": 0.45})
    new = W.copy_base(tmp_path / "new")
    W.set_params(new, thresholds={"default": 0.5, "deer": 0.45})
    assert W.run_stage(new, "score-detection").code == 0
    before, after = outputs(ws), outputs(new)
    script = """
import runpy, sys
import candor_eval.common.atomic as atomic
real, calls = atomic.os.replace, [0]
def replace(a, b):
    calls[0] += 1
    if calls[0] == 3:
        raise OSError(28, "No space left on device")
    return real(a, b)
atomic.os.replace = replace
sys.argv = [sys.argv[1], *sys.argv[2:]]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""
    proc = subprocess.run([sys.executable, "-c", script, *W.STAGES["score-detection"]], cwd=ws, env=W.env(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1 and "No space left on device" in proc.stderr
    got = outputs(ws)
    assert not [k for k in got if k.endswith(".tmp")]
    assert set(got) == set(before)
    changed = [k for k in got if got[k] != before[k]]
    assert len(changed) == 2, changed         # the two files moved into place before the failure
    assert all(got[k] == after[k] for k in changed)   # each whole: exactly the new content
