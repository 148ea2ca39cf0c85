"""stages/sweep_table.py, the command: its argv, where DVC's JSON comes from (``--from`` a file, or
``dvc exp show --json`` run with this interpreter), and its exits: 0 with the table on stdout; 2, naming
the file or the DVC command, when the JSON cannot be read or no experiment has the sort key; argparse's
own 2 for bad argv. The ranking itself is in tests/review/test_ranking.py.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages import sweep_table
from candor_eval.stages.sweep_table import main

KEY = "detection.detector.demo-v2.dev.f1"


def node(name: str | None, deer: float, f1: float, fp: float) -> dict:
    """One revision or experiment of ``dvc exp show --json``: thresholds.deer and the candidate's dev headline."""
    return {"rev": name or "workspace", "name": name, "data": {
        "params": {"params.yaml": {"data": {"thresholds": {"deer": deer}}}},
        "metrics": {"metrics/headline.json": {"data": {"detection": {"detector": {"demo-v2": {"dev": {
            "f1": f1, "fp_per_frame": fp}}}}}}}}}


def exp_show() -> list[dict]:
    """The workspace, then ``main`` with two experiments (DVC lists each experiment's revisions newest first)."""
    main_rev = node("main", 0.2, 0.5, 3.0) | {"experiments": [
        {"revs": [node("high-deer", 0.3, 0.6, 1.0)]}, {"revs": [node("low-deer", 0.1, 0.4, 5.0)]}]}
    return [node(None, 0.2, 0.5, 3.0) | {"experiments": None}, main_rev]


def table_rows(out: str) -> list[list[str]]:
    """The body of the table (no header, rule or the two footer lines), split into cells."""
    return [line.split() for line in out.splitlines()[2:-2]]


@pytest.fixture()
def exps(tmp_path: Path) -> Path:
    path = tmp_path / "exps.json"
    path.write_text(json.dumps(exp_show()))
    return path


def test_a_file_of_dvc_json_ranks_best_first(exps, capsys):
    assert main(["--param", "thresholds.deer", "--sort", KEY, "--from", str(exps)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["experiment", "thresholds.deer", "f1", "(sort)", "fp_per_frame"]
    assert table_rows(out) == [["high-deer", "0.3", "0.6", "1"], ["workspace", "0.2", "0.5", "3"],
                               ["main", "0.2", "0.5", "3"], ["low-deer", "0.1", "0.4", "5"]]
    assert out.splitlines()[-2:] == [f"ranked by {KEY} (dev split: tuned on dev, never on test)",   # two lines
                                     "a ranking is not a test: candor compare <A> <B> pairs two of them"]


def test_ascending_puts_the_lowest_first(exps, capsys):
    fp = "detection.detector.demo-v2.dev.fp_per_frame"
    assert main(["--param", "thresholds.deer", "--sort", fp, "--ascending", "--from", str(exps)]) == 0
    assert [row[0] for row in table_rows(capsys.readouterr().out)] == ["high-deer", "workspace", "main", "low-deer"]


def test_without_from_it_runs_dvc_exp_show_with_this_interpreter(monkeypatch, capsys):
    calls = []

    def dvc(args, **kwargs):
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, stdout=json.dumps(exp_show()), stderr="")
    monkeypatch.setattr(sweep_table.subprocess, "run", dvc)
    assert main(["--param", "thresholds.deer", "--sort", KEY]) == 0
    assert calls == [[sys.executable, "-m", "dvc", "exp", "show", "--json"]]
    assert table_rows(capsys.readouterr().out)[0][0] == "high-deer"


def test_a_failing_dvc_exits_2_with_its_error(monkeypatch, capsys):
    def dvc(args, **kwargs):
        return subprocess.CompletedProcess(args, 255, stdout="", stderr="ERROR: you are not inside of a DVC repository")
    monkeypatch.setattr(sweep_table.subprocess, "run", dvc)
    assert run_main(main, ["--param", "thresholds.deer", "--sort", KEY]) == 2
    assert ("error: dvc exp show --json: DVC could not list the experiments "
            "(got 'ERROR: you are not inside of a DVC repository')") in capsys.readouterr().err


@pytest.mark.parametrize("content, message", [
    (None, "exps.json: file not found"),
    (b"\xff[]", "exps.json: not UTF-8 text"),
    (b'{"rev": ', "exps.json: not JSON"),
    (b"[]", "exps.json: no revision or experiment has detection.detector.demo-v2.dev.f1"),
])
def test_an_unreadable_file_or_a_missing_key_exits_2_naming_the_file(tmp_path, capsys, content, message):
    path = tmp_path / "exps.json"
    if content is not None:
        path.write_bytes(content)
    assert run_main(main, ["--param", "thresholds.deer", "--sort", KEY, "--from", str(path)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err.replace(str(tmp_path) + "/", "") and captured.out == ""


def test_an_unknown_sort_key_names_an_example(exps, capsys):
    assert run_main(main, ["--param", "thresholds.deer", "--sort", "f1", "--from", str(exps)]) == 2
    err = capsys.readouterr().err
    assert "no revision or experiment has f1" in err and "hint: name a key of metrics/headline.json" in err


@pytest.mark.parametrize("argv, message", [
    (["--sort", KEY], "the following arguments are required: --param"),
    (["--param", "thresholds.deer"], "the following arguments are required: --sort"),
    (["--param", "x", "--sort", KEY, "--descending"], "unrecognized arguments: --descending"),
])
def test_bad_argv_is_argparse_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_failed_experiment_is_marked_and_never_shows_the_workspace_numbers(tmp_path, capsys):
    """``make sweep VALUES="abc 0.25"``: DVC lists the failed ``abc`` with the numbers of the commit it
    started from; the table puts it last, ``FAILED``, with no number, and names it below."""
    doc = exp_show()
    failed = node("abc-run", "abc", 0.5, 3.0) | {"error": {"msg": "Experiment run failed", "type": ""}}
    queued = node("later", 0.4, 0.5, 3.0)
    doc[1]["experiments"] += [{"revs": [failed], "executor": {"state": "failed"}, "name": "abc-run"},
                              {"revs": [queued], "executor": {"state": "queued"}, "name": "later"}]
    path = tmp_path / "exps.json"
    path.write_text(json.dumps(doc))
    assert main(["--param", "thresholds.deer", "--sort", KEY, "--from", str(path)]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out)[:-1]                       # the last body line names the failed ones
    assert [r[0] for r in rows] == ["high-deer", "workspace", "main", "low-deer", "abc-run", "later"]
    assert rows[-2] == ["abc-run", "abc", "FAILED", "-"] and rows[-1] == ["later", "0.4", "QUEUED", "-"]
    assert "FAILED: abc-run: no results of their own" in out
    assert max(map(len, out.splitlines())) <= 100
    only = [node("main", 0.2, 0.5, 3.0) | {"error": {"msg": "x"}}]
    path.write_text(json.dumps(only))
    assert run_main(main, ["--param", "thresholds.deer", "--sort", KEY, "--from", str(path)]) == 2
