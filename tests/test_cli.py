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


# a command of its own for the checks of `entry`: it registers an exit handler, writes much to stdout, keeps an
# object whose finaliser reports the interpreter's teardown, and returns the code it is given
ENTRY = """
import atexit, os, sys, types
from candor_eval import cli

class Torn:
    def __del__(self, write=os.write):
        write(2, b"torn down")

def main(argv):
    atexit.register(lambda: sys.stdout.write("|handler ran"))
    sys.stdout.write("x" * 200_000)
    if argv[0] == "raise":
        raise RuntimeError("boom")
    return int(argv[0])

command = types.ModuleType("fake_command")
command.main, command.kept = main, Torn()
sys.modules["fake_command"] = command
cli.COMMANDS["fake"] = cli.Command("fake_command", (), "a test command")
sys.argv = ["candor", "fake", *sys.argv[1:]]
if os.environ.get("PLAIN_MAIN"):
    sys.exit(cli.main())
cli.entry()
"""


def _run_entry(arg: str, *, plain: bool = False) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PLAIN_MAIN": "1"} if plain else {k: v for k, v in os.environ.items() if k != "PLAIN_MAIN"}
    return subprocess.run([sys.executable, "-c", ENTRY, arg], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("code", [0, 1, 2])
def test_entry_exits_with_mains_code_after_the_handlers_and_skips_the_teardown(code):
    r = _run_entry(str(code))
    assert r.returncode == code
    assert r.stdout == "x" * 200_000 + "|handler ran"       # everything written and flushed, the handler's last
    assert "torn down" not in r.stderr


def test_without_entry_the_teardown_runs():
    """The control: the same command through ``sys.exit(main())`` is torn down (else the check above shows nothing)."""
    r = _run_entry("0", plain=True)
    assert r.returncode == 0 and r.stdout.endswith("|handler ran") and "torn down" in r.stderr


def test_when_main_raises_the_interpreter_exits_as_usual():
    r = _run_entry("raise")
    assert r.returncode == 1 and "RuntimeError: boom" in r.stderr and r.stdout.endswith("|handler ran")


class _Ended(Exception):
    pass


def test_end_flushes_then_exits_with_the_code_or_120_when_a_flush_fails(monkeypatch):
    import io

    from candor_eval import cli

    def fake_exit(code):
        raise _Ended(code)

    class Broken(io.StringIO):
        def flush(self):
            raise BrokenPipeError("reader gone")

    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    assert cli._end([]) is None                              # main raised: nothing done here
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    with pytest.raises(_Ended) as ended:
        cli._end([2])
    assert ended.value.args == (2,)
    out.close()                                              # a closed stream is left alone
    with pytest.raises(_Ended) as ended:
        cli._end([0])
    assert ended.value.args == (0,)
    monkeypatch.setattr(sys, "stdout", Broken())
    with pytest.raises(_Ended) as ended:
        cli._end([0])
    assert ended.value.args == (120,)
