"""candor record: record an exec candidate live (tests/exec_child.py), promote it with its manifest entry, leave it
when up to date, extend it when runs are missing, refuse to replace a recording of other code without --force,
and promote nothing when a run failed."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import candor_eval.stages.record as record
from candor_eval.common.errors import run_main
from candor_eval.common.manifest import load_manifest, sha256_file
from candor_eval.common.verify import rewrite_manifest
from candor_eval.lots.recording import load_recording
from candor_eval.lots.source_identity import source_sha256
from tests.conftest import TESTS, VOCABULARY

IDS = ["T001", "T002", "drill"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bench with a manifest, an exec candidate ``p`` (its code in ``prodcode/``), cwd set to it."""
    root = tmp_path / "repo"
    shutil.copytree(TESTS / "data/lots", root / "data/lots")
    shutil.copytree(VOCABULARY, root / "data/lots/vocabulary")
    (root / "data/lots/prompts/p.txt").unlink()
    (root / "prodcode").mkdir()
    shutil.copy(TESTS / "exec_child.py", root / "prodcode/analyze.py")
    monkeypatch.chdir(root)
    monkeypatch.delenv("EXEC_PLAN", raising=False)
    params(root, runs=2)
    text, _ = rewrite_manifest(root / "data/lots")
    (root / "data/lots/manifest.csv").write_text(text)
    return root


def params(root: Path, **kw) -> None:
    ident = {"candidates": ["p"], "runs": 2, "pause_s": 0, "timeout_s": 20, "retries": 0, "backoff_s": 0,
             "providers": {"p": {"exec": [sys.executable, "prodcode/analyze.py"], "env": ["EXEC_PLAN"]}},
             "sources": {"p": "prodcode"}} | kw
    (root / "params.yaml").write_text(json.dumps({"identify": ident}))


def rec(root: Path) -> Path:
    return root / "data/lots/recordings/p.jsonl"


def test_record_promotes_with_the_manifest_entry_then_is_up_to_date(work: Path, capsys):
    before = {e.path: e for e in load_manifest(work / "data/lots/manifest.csv").entries}
    assert run_main(record.main, ["p"]) == 0
    out = capsys.readouterr().out
    lines = load_recording(rec(work))
    code = source_sha256(Path("prodcode"), where="w")
    assert [(x.case, x.run) for x in lines] == [(i, r) for i in IDS for r in (1, 2)]
    assert {(x.provider, x.prompt_sha256, x.error) for x in lines} == {("exec", code, None)}
    assert f"promoted build/live/p-{code[:8]}.jsonl -> data/lots/recordings/p.jsonl (6 lines)" in out
    after = {e.path: e for e in load_manifest(work / "data/lots/manifest.csv").entries}
    assert after.pop("recordings/p.jsonl").sha256 == sha256_file(rec(work))
    assert after == before                                             # every other row as it was
    assert not (work / "build/answers").exists()                       # the pipeline's outputs untouched
    first = rec(work).read_bytes()
    assert run_main(record.main, ["p"]) == 0
    assert "up to date" in capsys.readouterr().out and rec(work).read_bytes() == first


def test_missing_runs_are_added_and_recorded_ones_kept(work: Path):
    assert run_main(record.main, ["p"]) == 0
    first = load_recording(rec(work))
    params(work, runs=3)
    assert run_main(record.main, ["p"]) == 0
    now = load_recording(rec(work))
    assert [x for x in now if x.run < 3] == first                     # the same answers (the child's pid in them)
    assert [(x.case, x.run) for x in now if x.run == 3] == [(i, 3) for i in IDS]
    assert len({x.parsed["imageNotes"].split()[1] for x in now}) == 2  # two live runs, two processes


def test_a_recording_of_other_code_is_replaced_only_with_force(work: Path, capsys):
    assert run_main(record.main, ["p"]) == 0
    old = rec(work).read_bytes()
    with open(work / "prodcode/analyze.py", "a") as fh:
        fh.write("# v2\n")
    capsys.readouterr()
    assert run_main(record.main, ["p"]) == 2
    err = capsys.readouterr().err
    assert "data/lots/recordings/p.jsonl: recorded with other code" in err and "candor record p --force" in err
    assert rec(work).read_bytes() == old and "Traceback" not in err
    assert run_main(record.main, ["p", "--force"]) == 0
    new = source_sha256(Path("prodcode"), where="w")
    assert {x.prompt_sha256 for x in load_recording(rec(work))} == {new}


def test_a_failed_run_promotes_nothing_and_exits_1(work: Path, monkeypatch, caplog):
    monkeypatch.setenv("EXEC_PLAN", json.dumps({"T002/1": "fatal"}))
    assert run_main(record.main, ["p"]) == 1
    assert not rec(work).exists() and "not promoted (identify exited 1)" in caplog.text
    monkeypatch.delenv("EXEC_PLAN")
    assert run_main(record.main, ["p"]) == 0                          # again: the failed run only
    assert [(x.case, x.run) for x in load_recording(rec(work))] == [(i, r) for i in IDS for r in (1, 2)]


@pytest.mark.parametrize("argv, needle", [(["a/b"], "CANDIDATE"), (["q"], "identify.candidates: q is not a candidate")])
def test_bad_input_exits_2_writing_nothing(work: Path, capsys, argv, needle):
    assert run_main(record.main, argv) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and not rec(work).exists()


def test_code_changed_during_the_live_run_promotes_nothing(work: Path, monkeypatch, capsys):
    real = record.identify_live

    def edit_meanwhile(args, live):
        code = real(args, live)
        with open(work / "prodcode/analyze.py", "a") as fh:
            fh.write("# edited while recording\n")
        return code

    monkeypatch.setattr(record, "identify_live", edit_meanwhile)
    assert run_main(record.main, ["p"]) == 2
    err = capsys.readouterr().err
    assert "params.yaml:identify.sources.p: changed during the live run: nothing promoted" in err
    assert not rec(work).exists() and "Traceback" not in err
