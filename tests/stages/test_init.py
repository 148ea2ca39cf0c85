"""``candor init`` (candor_eval/stages/init.py) in real Git + DVC repositories made in tmp_path."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from candor_eval.common.errors import InputError
from candor_eval.stages.init import main


def repo(path: Path, *, dvc: bool = True) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if dvc:
        (path / ".dvc").mkdir()          # what `dvc init` makes, as far as init looks
    return path


def test_outside_git_it_says_git_init_and_dvc_init(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        main([])
    assert "git init && dvc init" in err.value.message
    assert not list(tmp_path.iterdir())


def test_without_dvc_it_names_both_dvc_inits(tmp_path, monkeypatch):
    monkeypatch.chdir(repo(tmp_path, dvc=False))
    with pytest.raises(InputError) as err:
        main(["--track", "detector"])
    assert "dvc init" in err.value.message and "dvc init --subdir" in err.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git"]


def test_beside_the_users_own_pipeline_it_writes_into_eval(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(repo(tmp_path))
    (tmp_path / "dvc.yaml").write_text("stages:\n  train:\n    cmd: python -m stages.train\n")
    (tmp_path / "params.yaml").write_text("train:\n  epochs: 3\n")
    assert main(["--track", "detector"]) == 0
    assert (tmp_path / "params.yaml").read_text() == "train:\n  epochs: 3\n"             # untouched
    assert yaml.safe_load((tmp_path / "eval" / "candor.lock").read_text())["init"]["track"] == "detector"
    out = capsys.readouterr().out
    assert "candor add set val --from data.yaml --dir eval" in out and "dvc repro eval/dvc.yaml" in out


def test_files_in_the_way_are_listed_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(repo(tmp_path))
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    with pytest.raises(InputError) as err:
        main([".", "--track", "lots"])
    assert "dvc.yaml: exists with other content" in err.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dvc", ".git", "dvc.yaml"]
    with pytest.raises(InputError, match="not candor's to overwrite"):
        main([".", "--track", "lots", "--force"])


def test_force_rewrites_what_candor_wrote(tmp_path, monkeypatch):
    monkeypatch.chdir(repo(tmp_path))
    assert main(["--track", "detector"]) == 0
    (tmp_path / "params.yaml").write_text("thresholds: {default: 0.5}\n")
    with pytest.raises(InputError):
        main(["--track", "detector"])
    assert main(["--track", "detector", "--force"]) == 0
    assert "gate:" in (tmp_path / "params.yaml").read_text()


def test_the_lots_track_writes_a_bench_of_cases_and_force_keeps_the_recorded_shape(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(repo(tmp_path))
    assert main(["--track", "lots"]) == 0
    lock = yaml.safe_load((tmp_path / "candor.lock").read_text())
    assert lock["init"] == {"track": "lots", "demo": False, "bench": "cases"}
    assert list(lock["code"]) == ["fetch", "identify", "score-lots", "stats"]
    assert "value" not in yaml.safe_load((tmp_path / "dvc.yaml").read_text())["stages"]
    out = capsys.readouterr().out
    assert "put the bench into data/ (lots/cases/*.json), then: candor fetch manifest data/lots\n" in out
    assert "then: candor record CANDIDATE\n  dvc repro\n" in out
    assert main(["--track", "lots", "--force"]) == 0                               # nothing changes
    assert yaml.safe_load((tmp_path / "candor.lock").read_text())["init"]["bench"] == "cases"
    params = tmp_path / "params.yaml"
    edited = params.read_text().replace("  candidates: []", "  candidates: [v1]  # ours")
    params.write_text(edited)
    assert main(["--track", "lots", "--bench", "valuation", "--force"]) == 0       # the bench grew
    assert "value" in yaml.safe_load((tmp_path / "dvc.yaml").read_text())["stages"]
    grown = params.read_text()
    assert grown.startswith(edited) and yaml.safe_load(grown)["comps"]["min_comps"] == 3      # the edit kept
    assert main(["--track", "lots", "--force"]) == 0
    assert yaml.safe_load((tmp_path / "candor.lock").read_text())["init"]["bench"] == "valuation"


def test_bench_is_refused_without_a_lots_track_and_with_the_demo(tmp_path, monkeypatch):
    monkeypatch.chdir(repo(tmp_path))
    with pytest.raises(InputError, match="no lots bench"):
        main(["--track", "detector", "--bench", "cases"])
    with pytest.raises(InputError, match="the demo's bench is valuation"):
        main(["--demo", "--bench", "cases"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dvc", ".git"]


def test_the_bench_shape_defaults():
    from candor_eval.adopt.lockfile import InitRecord, Lock
    from candor_eval.stages.init import bench_shape

    old_lots = Lock(candor="1", init=InitRecord(track="lots"), code={})        # written before --bench
    assert bench_shape(None, "lots", None) == "cases" and bench_shape(None, "both", None) is None
    assert bench_shape(None, "lots", old_lots) == "valuation" and bench_shape("lots", "lots", old_lots) == "lots"
    assert bench_shape(None, "both", Lock(candor="1", init=InitRecord(track="both"), code={})) is None
