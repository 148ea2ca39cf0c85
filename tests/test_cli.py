"""The ``candor`` command line (candor_eval/cli.py): dispatch, exit codes, lazy imports, the console script."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from candor_eval.cli import COMMANDS, main


def test_a_subcommand_runs_its_module_with_the_words_it_stands_for(capsys):
    assert main(["wilson", "15", "17"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["k"], out["n"], out["lo"]) == (15, 17, 0.656636)     # the README's example


def test_every_command_names_a_module_with_a_main():
    import importlib.util

    for name, cmd in COMMANDS.items():
        assert importlib.util.find_spec(cmd.module) is not None, name


def test_unknown_command_exits_2_with_the_nearest(capsys):
    assert main(["scroe-lots"]) == 2
    assert "did you mean 'score-lots'?" in capsys.readouterr().err


def test_no_command_prints_usage_and_exits_2(capsys):
    assert main([]) == 2
    assert "score-detection" in capsys.readouterr().out
    assert main(["--help"]) == 0


def test_bad_input_exits_2_through_the_stage_error_path(capsys):
    assert main(["wilson", "18", "17"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@pytest.mark.parametrize("argv", [["--version"], ["wilson", "1", "2"]])
def test_python_dash_m_and_the_console_script_agree(argv):
    a = subprocess.run([sys.executable, "-m", "candor_eval", *argv], capture_output=True, text=True)
    assert a.returncode == 0 and a.stdout
    if argv == ["--version"]:
        assert a.stdout.startswith("candor ")


HEAVY = ("onnxruntime", "matplotlib", "candor_eval.lots", "candor_eval.detection.scoring",
         "candor_eval.detection.inference")


def test_a_light_command_imports_no_heavy_library():
    """``candor wilson`` loads the stats stage only: not onnxruntime, matplotlib, the lots track or detector code."""
    code = ("import sys, contextlib, io\nfrom candor_eval.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['wilson', '1', '2'])\n"
            f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
