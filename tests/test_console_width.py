"""Every console output of candor fits 100 columns: each command's ``--help`` (on a terminal 200 wide,
where argparse alone would use the width), and every command that runs offline on the demo from the
committed files (outputs to a temporary folder): ``gate check``, ``compare``, ``sweep-table``, the three
statistics helpers, ``identify`` (replay), ``fetch verify`` and ``verify-inference``. A command whose
output is longer than this is a defect of that command, named with its widest line."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from candor_eval import cli
from tests.conftest import ROOT, TESTS

WIDTH = 100
SUBCOMMANDS = [("fetch", "verify"), ("fetch", "manifest"), ("gate", "run"), ("gate", "check"), ("add", "set"),
               ("add", "model")]


def widest(text: str) -> str:
    return max(text.splitlines() or [""], key=len)


@pytest.mark.parametrize("argv", [["--help"], *([name, "--help"] for name in cli.COMMANDS),
                                  *([*pair, "--help"] for pair in SUBCOMMANDS)], ids=" ".join)
def test_every_help_fits_100_columns_and_is_plain(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    try:
        code = cli.main(argv)
    except SystemExit as done:          # argparse's help exits 0
        code = done.code
    out = capsys.readouterr().out
    assert code == 0 and out
    assert len(widest(out)) <= WIDTH, widest(out)
    for markup in ("``", ":mod:`", ":func:`", ":class:`", ":data:`", ":meth:`"):
        assert markup not in out


def run(*argv: str) -> str:
    """A stage module run as its own process in the repository (its own ``__main__``: no lock check, so it
    runs on a branch whose code is ahead of ``candor.lock``), stdout and stderr together."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout            # 1: a failed gate, a report that says so
    return done.stdout


def test_the_commands_that_run_on_the_demo_fit_100_columns():
    tmp_path = Path(tempfile.mkdtemp(prefix="cw"))      # a short path: the outputs name it
    outputs = {
        "gate check": run("candor_eval.stages.gate", "check"),
        "compare HEAD": run("candor_eval.stages.compare", "HEAD"),
        "compare HEAD --all": run("candor_eval.stages.compare", "HEAD", "--all"),
        "sweep-table": run("candor_eval.stages.sweep_table", "--param", "thresholds.deer", "--sort",
                           "detection.detector.demo-v2.dev.f1", "--from", str(TESTS / "data" / "sweep" / "exps.json")),
        "wilson": run("candor_eval.stages.stats", "wilson", "15", "17"),
        "mcnemar": run("candor_eval.stages.stats", "mcnemar", "3", "9"),
        "plan": run("candor_eval.stages.stats", "plan", "--discordance", "0.2", "--improvement", "0.1"),
        "identify": run("candor_eval.stages.identify", "--candidate", "prompt-b", "--answers",
                        str(tmp_path / "answers.jsonl")),
        "fetch verify": run("candor_eval.stages.fetch", "verify", "--out", str(tmp_path / "verified")),
        "verify-inference": run("candor_eval.stages.verify_inference", "--verified", str(tmp_path / "verified")),
    }
    assert "release gate" in outputs["gate check"] and "re-inference agrees" in outputs["verify-inference"]
    too_wide = {name: widest(out) for name, out in outputs.items() if len(widest(out)) > WIDTH}
    assert too_wide == {}
    shutil.rmtree(tmp_path)
