"""stages/compare.py, the command: its argv, exit codes and outputs, on outcome tables in tmp_path.

``REV_B`` defaults to the workspace, and ``workspace`` is also a valid ``REV_A``: comparing the files
on disk with themselves needs no git, so most cases here run on a plain folder (the comparisons
between commits are in tests/review/test_compare.py). Exit 0 for any report; 2, with a message naming
the flag, the params key or the revision and table, for bad input; argparse's own 2 for bad argv.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages.compare import main

# L1 and L3 hit, L2 wrong; count_exact applies to L1 (right) and L2 (wrong) only
LOTS = ("lot,tier,candidate,run,outcome,count_exact\n"
        "L1,held,prompt-a,1,hit,1\nL2,held,prompt-a,1,wrong,0\nL3,held,prompt-a,1,hit,\n")
# f1 error-free; f2 has 2 false positives and 1 miss
FRAMES = "frame,split,session,zoom,model,tp,fp,fn\nf1,test,s,1,demo-v1,1,0,0\nf2,test,s,1,demo-v1,0,2,1\n"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    out = tmp_path / "metrics" / "outcomes"
    (out / "demo").mkdir(parents=True)
    (out / "identification.csv").write_text(LOTS)
    (out / "demo" / "detection-frames.csv").write_text(FRAMES)
    return tmp_path


def test_the_workspace_against_itself_as_json(repo, capsys):
    assert main(["workspace", "--repo", str(repo), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert list(got) == ["a", "b", "a_commit", "b_commit", "alpha", "confidence", "absent", "rows", "error_kinds"]
    assert (got["a"], got["b"], got["alpha"], got["confidence"]) == ("workspace", "workspace", 0.05, 0.95)  # defaults
    rows = {r["metric"]: r["paired"] for r in got["rows"]}
    by_hand = {"identification.hit": (2, 3), "identification.not_wrong": (2, 3), "identification.count_exact": (1, 2),
               "detection.demo.test.frame_error_free": (1, 2), "detection.demo.test.false_positives": (2, 2)}
    assert {m: (rows[m]["a"]["k"], rows[m]["a"]["n"]) for m in by_hand} == by_hand
    assert all((p["a_only"], p["b_only"], p["verdict"]) == (0, 0, "no detectable difference") for p in rows.values())
    # nothing dropped silently: every table absent on a side is listed, for A and for B
    assert sorted(n.split(" ")[0] for n in got["absent"]) == sorted(
        2 * ["metrics/outcomes/fields.csv", "metrics/outcomes/valuation.csv",
             "metrics/outcomes/demo/detection-labels.csv"])
    assert got["error_kinds"] == [{"set": "demo", "model": "demo-v1", "a": {"fp": 2, "fn": 1}, "b": {"fp": 2, "fn": 1}}]


def test_text_to_a_file_folds_the_unchanged_rows_unless_all(repo, capsys):
    report = repo / "out" / "review.txt"
    assert main(["workspace", "workspace", "--repo", str(repo), "--out", str(report)]) == 0
    assert capsys.readouterr().out == ""
    text = report.read_text()
    assert text.startswith("A = workspace, B = workspace; 95% intervals")
    assert "note: metrics/outcomes/fields.csv is absent in A (workspace)" in text
    assert "identification.hit  [prompt-a]" not in text and "--all lists them" in text
    assert "| demo | demo-v1 | fp | 2 | 2 | +0 |" in text
    assert main(["workspace", "--repo", str(repo), "--all", "--markdown"]) == 0
    assert "| identification.hit | prompt-a |" in capsys.readouterr().out


def test_params_and_flags_set_alpha_and_confidence(repo, capsys):
    (repo / "params.yaml").write_text("stats: {alpha: 0.1, confidence: 0.9}\n")
    assert main(["workspace", "--repo", str(repo), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["alpha"], got["confidence"]) == (0.1, 0.9)
    other = repo / "elsewhere.yaml"
    other.write_text("stats: {alpha: 0.2}\n")
    assert main(["workspace", "--repo", str(repo), "--json", "--params", str(other), "--confidence", "0.8"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["alpha"], got["confidence"]) == (0.2, 0.8)


@pytest.mark.parametrize("argv, params, message", [
    (["--alpha", "1.5"], None, "error: --alpha: must be strictly between 0 and 1 (got 1.5)"),
    (["--confidence", "0"], None, "error: --confidence: must be strictly between 0 and 1 (got 0.0)"),
    ([], "stats: {alpha: 2}\n", "params.yaml:stats.alpha: Input should be less than 1"),
    ([], "stats: {alpah: 0.1}\n", "params.yaml:stats.alpah: Extra inputs are not permitted (did you mean 'alpha'?)"),
])
def test_a_bad_alpha_or_confidence_exits_2_naming_it(repo, capsys, argv, params, message):
    if params is not None:
        (repo / "params.yaml").write_text(params)
    assert run_main(main, ["workspace", "--repo", str(repo), *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


@pytest.mark.parametrize("table, message", [
    ("lot,tier,candidate,run,count_exact\nL1,held,prompt-a,1,1\n",
     "workspace:metrics/outcomes/identification.csv:row 1: missing column(s) outcome"),
    ("lot,tier,candidate,run,outcome,count_exact\nL1,held,prompt-a,x,hit,1\n",
     "workspace:metrics/outcomes/identification.csv:row 2.run: bad value (expected a non-negative integer, got 'x')"),
])
def test_a_bad_table_exits_2_naming_revision_file_row_and_column(repo, capsys, table, message):
    (repo / "metrics" / "outcomes" / "identification.csv").write_text(table)
    report = repo / "review.md"
    assert run_main(main, ["workspace", "--repo", str(repo), "--out", str(report)]) == 2
    assert message in capsys.readouterr().err and not report.exists()


def test_an_unknown_revision_exits_2_with_the_fix(repo, capsys):
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    assert run_main(main, ["no-such-rev", "--repo", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "error: no-such-rev: not a git revision or DVC experiment name" in err and "git log --oneline" in err


def test_outcomes_elsewhere(repo, capsys):
    (repo / "metrics" / "outcomes").rename(repo / "old")
    assert main(["workspace", "--repo", str(repo), "--outcomes", "old/", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert "old/fields.csv is absent in A (workspace)" in got["absent"] and len(got["rows"]) == 6


@pytest.mark.parametrize("argv, message", [
    ([], "the following arguments are required: REV_A"),
    (["HEAD", "--json", "--markdown"], "argument --markdown: not allowed with argument --json"),
    (["HEAD", "--alpha", "small"], "argument --alpha: invalid float value: 'small'"),
])
def test_bad_argv_is_argparse_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_params_file_that_does_not_exist_exits_2(repo, capsys):
    """Without --params a missing params.yaml is the defaults; a named one that is missing is an error."""
    assert run_main(main, ["workspace", "--repo", str(repo), "--params", "nosuch.yaml"]) == 2
    assert "nosuch.yaml: file not found" in capsys.readouterr().err


def test_by_set_names_a_set_of_detector_sets(repo, capsys):
    (repo / "params.yaml").write_text("detector: {sets: {demo: [demo-v1]}}\n"
                                      "stats: {cluster: {by_set: {dmo: session}}}\n")
    assert run_main(main, ["workspace", "--repo", str(repo)]) == 2
    assert "params.yaml:stats.cluster.by_set.dmo: not a set of detector.sets (expected one of: demo" in \
        capsys.readouterr().err


def test_a_session_in_both_splits_is_an_error_when_clustering_by_session(repo, capsys):
    (repo / "metrics/outcomes/demo/detection-frames.csv").write_text(FRAMES + "f3,dev,s,1,demo-v1,1,0,0\n")
    (repo / "params.yaml").write_text("detector: {sets: {demo: [demo-v1]}}\nstats: {cluster: {detection: session}}\n")
    assert run_main(main, ["workspace", "--repo", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "metrics/outcomes/demo/detection-frames.csv: session 's' lies in two splits: dev frames f3; test frames " \
           "f1, f2" in err
    (repo / "params.yaml").write_text("detector: {sets: {demo: [demo-v1]}}\n")       # by frame: not checked
    assert run_main(main, ["workspace", "--repo", str(repo)]) == 0


def test_too_few_sessions_for_alpha_are_an_error_before_anything_is_printed(repo, capsys):
    """Clustered by session, the one session of the test split cannot give an exact test at alpha:
    exit 2 naming the table, split and the number needed (which follows --alpha), nothing printed."""
    (repo / "params.yaml").write_text("detector: {sets: {demo: [demo-v1]}}\nstats: {cluster: {detection: session}}\n")
    assert run_main(main, ["workspace", "--repo", str(repo)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert "metrics/outcomes/demo/detection-frames.csv (split test): too few capture sessions for an exact test at " \
           "alpha 0.05 (expected >= 6 sessions, got 1: s)" in out.err
    assert run_main(main, ["workspace", "--repo", str(repo), "--alpha", "0.01"]) == 2
    assert "(expected >= 8 sessions, got 1: s)" in capsys.readouterr().err
