"""candor.lock (candor_eval/adopt/lockfile.py): its text, its reading, and the stale-stage check."""
from __future__ import annotations

import pytest

from candor_eval.adopt.lockfile import (
    InitRecord,
    Lock,
    bench_of,
    check_lock,
    read_lock,
    render,
    stages_of,
    stale_stages,
)
from candor_eval.common.errors import InputError


def test_render_and_read_round_trip(tmp_path):
    lock = Lock(candor="1.2.3", init=InitRecord(track="detector", demo=False), code={"fetch": "a" * 64})
    (tmp_path / "candor.lock").write_text(render(lock))
    assert read_lock(tmp_path / "candor.lock") == lock
    lots = Lock(candor="1.2.3", init=InitRecord(track="lots", bench="lots"), code={"fetch": "a" * 64})
    (tmp_path / "candor.lock").write_text(render(lots))
    assert read_lock(tmp_path / "candor.lock") == lots


def test_the_tracks_stages():
    assert stages_of("lots") == ["fetch", "identify", "score-lots", "value", "score-valuation", "stats"]
    assert stages_of("both")[-1] == "latency" and len(stages_of("both")) == 9


def test_a_bench_without_comps_has_no_valuation_stages():
    assert stages_of("lots", "cases") == stages_of("lots", "lots") == ["fetch", "identify", "score-lots", "stats"]
    assert stages_of("lots", "valuation") == stages_of("lots")
    assert stages_of("both", "cases") == [s for s in stages_of("both") if s not in ("value", "score-valuation")]
    assert stages_of("detector", "cases") == stages_of("detector")


def test_the_bench_is_recorded_for_a_lots_project_only_when_given():
    lots = Lock(candor="1", init=InitRecord(track="lots", bench="cases"), code={})
    assert "  bench: cases\n" in render(lots)
    assert "bench" not in render(Lock(candor="1", init=InitRecord(track="both"), code={}))
    assert bench_of("lots", None) == bench_of("both", None) == "valuation"     # before --bench: the full shape
    assert bench_of("detector", "cases") is None


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


def test_an_unknown_bench_shape_names_the_key_and_the_shapes(tmp_path):
    (tmp_path / "candor.lock").write_text("candor: '1'\ninit:\n  track: lots\n  bench: photos\ncode: {}\n")
    with pytest.raises(InputError) as err:
        read_lock(tmp_path / "candor.lock")
    assert "candor.lock.init.bench" in err.value.message and "'cases', 'lots' or 'valuation'" in err.value.message
