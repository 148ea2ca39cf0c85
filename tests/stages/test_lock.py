"""``candor lock`` and ``candor check`` (candor_eval/stages/lock.py) on a lock written in tmp_path."""
from __future__ import annotations

import pytest

from candor_eval.adopt.fingerprint import stage_fingerprints
from candor_eval.adopt.lockfile import InitRecord, Lock, read_lock, render, seal
from candor_eval.common.errors import InputError
from candor_eval.stages.lock import main


def test_lock_rewrites_the_fingerprints_and_keeps_the_init_record(tmp_path, capsys):
    (tmp_path / "candor.lock").write_text(render(Lock(candor="0.0.1", init=InitRecord(track="detector"),
                                                      code={"detect": "0" * 64})))
    assert main(["lock", "--dir", str(tmp_path)]) == 0
    lock = read_lock(tmp_path / "candor.lock")
    assert lock.init.track == "detector"
    assert lock.code == {s: v for s, v in stage_fingerprints().items()
                         if s in ("fetch", "detect", "score-detection", "stats", "latency")}
    assert "stages whose code changed: fetch, detect, score-detection, stats, latency" in capsys.readouterr().out
    assert lock.package == seal(lock.code) and lock.package not in (None, seal({"detect": "0" * 64}))
    assert main(["check", "--dir", str(tmp_path)]) == 0


def test_lock_keeps_the_bench_shape_so_a_cases_bench_gets_no_valuation_fingerprints(tmp_path, capsys):
    (tmp_path / "candor.lock").write_text(render(Lock(candor="0.0.1", init=InitRecord(track="lots", bench="cases"),
                                                      code={"fetch": "0" * 64})))
    assert main(["lock", "--dir", str(tmp_path)]) == 0
    lock = read_lock(tmp_path / "candor.lock")
    assert lock.init.bench == "cases" and list(lock.code) == ["fetch", "identify", "score-lots", "stats"]


def test_check_exits_through_the_input_error_on_a_stale_lock(tmp_path):
    (tmp_path / "candor.lock").write_text(render(Lock(candor="0.0.1", code={"stats": "0" * 64})))
    with pytest.raises(InputError, match="code.stats"):
        main(["check", "--dir", str(tmp_path)])


def test_no_lock_says_candor_init(tmp_path):
    with pytest.raises(InputError, match="candor init"):
        main(["lock", "--dir", str(tmp_path)])
