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

# score-detection's workers (issue 41): bare forks with a pipe (common.parallel), no process pool
NOT_AT_START["score-detection"].update({
    "concurrent": "fork_map forks its workers itself (os.fork and a pipe): no executor, queues or threads",
    "multiprocessing.queues": "the same",
})

# module a sweep stage imports in its run (a section it reads) -> module prefixes that import must not load
NOT_WITH = {
    "candor_eval.lots.params": {   # the stats stage reads identify.candidates
        "candor_eval.lots.comps": "the matching rules are made by CompsParams.rules, for the valuation stages",
        "candor_eval.lots.tokens": "the same",
        "candor_eval.lots.ceiling": "the ceiling rules are made by CompsParams.ceiling_rules",
        "candor_eval.lots.redact": "only a chat call redacts (lots.chat imports it there; it loads html)",
    },
}

# the modules of the params sections and model cards a sweep stage reads: their models are built on first use
DEFERRED = ("candor_eval.detection.config", "candor_eval.detection.model_card", "candor_eval.lots.params",
            "candor_eval.review.params", "candor_eval.review.gate_views")

LOADED = """
import importlib, json, sys
from candor_eval.cli import COMMANDS
importlib.import_module(COMMANDS[sys.argv[1]].module if sys.argv[1] in COMMANDS else sys.argv[1])
print(json.dumps(sorted(sys.modules)))
"""


def loaded_at_start(command: str) -> list[str]:
    """What a fresh interpreter holds after importing ``command``'s module (or the module ``command``)."""
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


@pytest.mark.parametrize("module", sorted(NOT_WITH))
def test_a_section_a_sweep_stage_reads_loads_only_its_own_code(module):
    loaded = loaded_at_start(module)
    assert module in loaded
    for prefix, why in NOT_WITH[module].items():
        assert heavy(loaded, [prefix]) == [], f"{module} loads {prefix}: {why}"


@pytest.mark.parametrize("module", DEFERRED)
def test_params_models_build_their_validators_on_first_use(module):
    """``defer_build``: importing a section's module builds no validator of a model the process never uses."""
    import importlib

    from pydantic import BaseModel

    mod = importlib.import_module(module)
    models = [m for m in vars(mod).values()
              if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == module
              and "[" not in m.__name__]          # not pydantic's own parametrized bases (``RootModel[dict]``)
    assert models
    assert [m.__name__ for m in models if not m.model_config.get("defer_build")] == []
