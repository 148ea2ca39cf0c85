"""What a stage process loads at start: the two stages a threshold sweep reruns (``score-detection``,
``stats``) start without the libraries they do not use (issue 41: the project's processes at most 20%
of a sweep step; bench/RESULTS.md section 4 measures it).

Each check runs a fresh interpreter that resolves the command as ``candor <command>`` does
(:data:`candor_eval.cli.COMMANDS`, then importing its module) and lists what ``sys.modules`` holds.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

# command -> module prefixes it must not load at start, and why
NOT_AT_START = {
    "score-detection": {
        "scipy": "no interval or test is computed while scoring (stats.rates imports scipy.special lazily)",
        "matplotlib": "the PNG figures are `candor figures`, outside the pipeline",
        "tqdm": "progress bars are fetch's (common.verify imports tqdm lazily)",
        "candor_eval.lots": "the lots track is another stage's",
    },
    "stats": {
        "scipy.stats": "only a whole-refresh p95 bound needs it (stats.quantile imports it lazily)",
        "matplotlib": "the PNG figures are `candor figures`, outside the pipeline",
        "tqdm": "progress bars are fetch's (common.verify imports tqdm lazily)",
        "candor_eval.detection.scoring": "stats reads the scoring stage's files, never its code",
    },
}

LOADED = """
import importlib, json, sys
from candor_eval.cli import COMMANDS
importlib.import_module(COMMANDS[sys.argv[1]].module)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_at_start(command: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", LOADED, command], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def heavy(loaded: list[str], prefixes: list[str]) -> list[str]:
    """The modules of ``loaded`` that are one of ``prefixes`` or inside one.

    >>> heavy(["scipy", "scipy.special", "scipyx", "numpy"], ["scipy"])
    ['scipy', 'scipy.special']
    """
    return [m for m in loaded if any(m == p or m.startswith(p + ".") for p in prefixes)]


@pytest.mark.parametrize("command", sorted(NOT_AT_START))
def test_a_sweep_stage_starts_without_what_it_does_not_use(command):
    loaded = loaded_at_start(command)
    assert f"candor_eval.stages.{command.replace('-', '_')}" in loaded          # the check saw the stage itself
    for prefix, why in NOT_AT_START[command].items():
        assert heavy(loaded, [prefix]) == [], f"candor {command} loads {prefix} at start: {why}"


def test_the_check_sees_a_library_a_stage_does_load():
    """The same check finds what a stage does import (numpy in both; scipy.special in stats: it computes
    intervals on every run), so an empty list above is not a check that sees nothing."""
    assert heavy(loaded_at_start("score-detection"), ["numpy"])
    assert "scipy.special" in heavy(loaded_at_start("stats"), ["scipy"])
