"""The live loop's guarantees that need real processes or a whole run: one writer per recording (two real
processes), the call context a production responder gets, and the log filter that keeps secrets off the console."""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from candor.common.errors import InputError
from candor.lots.golden import load_golden
from candor.lots.live import RedactingFilter, call_context, hold
from candor.lots.recording import load_recording
from candor.lots.redact import Redactor
from candor.lots.vocabulary import read_category_library
from tests.chat_server import chat_server
from tests.conftest import ROOT, TESTS, VOCABULARY

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
    return [sys.executable, "-m", "stages.identify", "--candidate", "p", "--lots", "data/lots"]


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
