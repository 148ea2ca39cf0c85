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
    seal,
    sealed_code,
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
    sealed = Lock(candor="1.2.3", code={"fetch": "a" * 64}, package="b" * 64)
    (tmp_path / "candor.lock").write_text(render(sealed))
    assert read_lock(tmp_path / "candor.lock") == sealed
    assert render(sealed).endswith(f"  fetch: '{'a' * 64}'\npackage: '{'b' * 64}'\n")
    assert "package" not in render(lock)


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
    (tmp_path / "candor.lock").write_text("candor: '1'\ncode: {fetch: 'a'}\npackage: [1]\n")
    with pytest.raises(InputError, match="candor.lock.package"):
        read_lock(tmp_path / "candor.lock")


def test_an_unknown_bench_shape_names_the_key_and_the_shapes(tmp_path):
    (tmp_path / "candor.lock").write_text("candor: '1'\ninit:\n  track: lots\n  bench: photos\ncode: {}\n")
    with pytest.raises(InputError) as err:
        read_lock(tmp_path / "candor.lock")
    assert "candor.lock.init.bench" in err.value.message and "'cases', 'lots' or 'valuation'" in err.value.message


PACKAGE = {"__init__.py": "", "common/__init__.py": "", "common/x.py": "X = 1\n", "common/unused.py": "",
           "stages/__init__.py": "", "stages/detect.py": "from candor_eval.common.x import X\n",
           "stages/stats.py": "import json\n"}


def package(root, files):
    pkg = root / "candor_eval"
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    return pkg


@pytest.fixture
def closures(monkeypatch):
    """Every stage fingerprint a check computes (the slow path), by stage."""
    import candor_eval.adopt.fingerprint as fp

    calls: list[str] = []
    real = fp.stage_fingerprint
    monkeypatch.setattr(fp, "stage_fingerprint", lambda stage, root=None: calls.append(stage) or real(stage, root))
    return calls


def test_the_seal_covers_the_package_and_every_fingerprint(tmp_path):
    pkg = package(tmp_path, PACKAGE)
    code, sealed = sealed_code(["detect", "stats"], pkg)
    assert sealed == seal(code, pkg) == seal(dict(reversed(code.items())), pkg)     # the stages sorted
    assert seal({**code, "stats": "0" * 64}, pkg) != sealed
    assert seal({"detect": code["detect"]}, pkg) != sealed
    (pkg / "common/unused.py").write_text("# a byte\n")
    assert seal(code, pkg) != sealed


def test_a_sealed_lock_of_the_installed_package_is_checked_without_any_closure(tmp_path, closures):
    pkg = package(tmp_path, PACKAGE)
    code, sealed = sealed_code(["detect", "stats"], pkg)
    closures.clear()
    (tmp_path / "candor.lock").write_text(render(Lock(candor="1", code=code, package=sealed)))
    check_lock(tmp_path / "candor.lock", "1", ["detect"], root=pkg)
    check_lock(tmp_path / "candor.lock", "1", root=pkg)
    assert closures == []


def test_a_changed_package_is_checked_stage_by_stage_with_the_same_errors(tmp_path, closures):
    pkg = package(tmp_path, PACKAGE)
    code, sealed = sealed_code(["detect", "stats"], pkg)
    (tmp_path / "candor.lock").write_text(render(Lock(candor="0.0.1", code=code, package=sealed)))
    (pkg / "common/unused.py").write_text("# loaded by no stage\n")
    closures.clear()
    check_lock(tmp_path / "candor.lock", "1", ["detect"], root=pkg)      # the seal differs; detect's code does not
    assert closures == ["detect"]
    (pkg / "common/x.py").write_text("X = 2\n")
    check_lock(tmp_path / "candor.lock", "1", ["stats"], root=pkg)       # a change outside stats' closure
    with pytest.raises(InputError) as err:
        check_lock(tmp_path / "candor.lock", "9.9.9", ["detect"], root=pkg)
    msg = err.value.message
    assert "code.detect" in msg and "code.stats" not in msg and "candor 0.0.1" in msg and "candor lock" in msg


def test_a_fingerprint_edited_under_a_seal_is_not_trusted(tmp_path, closures):
    pkg = package(tmp_path, PACKAGE)
    code, sealed = sealed_code(["detect", "stats"], pkg)
    (tmp_path / "candor.lock").write_text(render(Lock(candor="1", code={**code, "stats": "0" * 64}, package=sealed)))
    closures.clear()
    with pytest.raises(InputError, match="code.stats"):
        check_lock(tmp_path / "candor.lock", "1", root=pkg)
    assert closures == ["detect", "stats"]
