"""candor.lock (candor_eval/adopt/lockfile.py): its text, its reading, and the stale-stage check."""
from __future__ import annotations

import pytest

from candor_eval.adopt.lockfile import InitRecord, Lock, check_lock, read_lock, render, stages_of, stale_stages
from candor_eval.common.errors import InputError


def test_render_and_read_round_trip(tmp_path):
    lock = Lock(candor="1.2.3", init=InitRecord(track="detector", demo=False), code={"fetch": "a" * 64})
    (tmp_path / "candor.lock").write_text(render(lock))
    assert read_lock(tmp_path / "candor.lock") == lock


def test_the_tracks_stages():
    assert stages_of("lots") == ["fetch", "identify", "score-lots", "value", "score-valuation", "stats"]
    assert stages_of("both")[-1] == "latency" and len(stages_of("both")) == 9


def test_stale_stages_are_those_whose_fingerprint_differs():
    lock = Lock(candor="1", code={"fetch": "a", "detect": "b", "stats": "c"})
    assert stale_stages(lock, {"fetch": "a", "detect": "x", "stats": "c"}) == ["detect"]
    assert stale_stages(lock, {"fetch": "z"}, ["fetch"]) == ["fetch"]


def test_a_stale_lock_names_the_stages_both_versions_and_the_fix(tmp_path):
    (tmp_path / "candor.lock").write_text(render(Lock(candor="0.0.1", code={"detect": "0" * 64})))
    with pytest.raises(InputError) as err:
        check_lock(tmp_path / "candor.lock", "9.9.9")
    msg = err.value.message
    assert "code.detect" in msg and "candor 0.0.1" in msg and "candor 9.9.9" in msg and "candor lock" in msg


def test_a_malformed_lock_names_the_key(tmp_path):
    (tmp_path / "candor.lock").write_text("candor: 1\ncode: {fetch: 1}\nextra: 2\n")
    with pytest.raises(InputError, match="candor.lock.extra"):
        read_lock(tmp_path / "candor.lock")
