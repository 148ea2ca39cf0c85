"""The ``candor`` command line: one subcommand per stage and command, each importing only its own module.

``candor <subcommand> [args]`` runs ``main(args)`` of the module :data:`COMMANDS` names, with the
exit codes of every stage (0 ok, 1 a run finished with recorded failures, 2 bad input or
configuration). A subcommand that is a subcommand of a module (``candor wilson 15 17`` is
``candor stats wilson 15 17``) carries the words it stands for. Nothing but the chosen module is
imported, so ``candor <stage>`` starts as fast as the module alone. Every help text is plain and
wrapped to at most 100 columns (every command's parser is a
:class:`candor_eval.stages.cli_help.StageParser`).

The installed command is :func:`entry`: :func:`main`, then the process ends as soon as its exit
handlers ran, without the interpreter's teardown. That teardown frees every module and object one by
one: about 0.1 s of a stage process that loaded numpy and SciPy, a tenth of what a threshold sweep
step spends in candor's processes (bench/RESULTS.md, section 4). Nothing is lost by skipping it:
every file candor writes is closed before ``main`` returns (ruff's SIM115 holds the package to
context managers), the exit handlers (logging's flush, a process pool's shutdown, temporary
folders' removal) still run, and stdout and stderr are flushed last, as the interpreter would.
"""
from __future__ import annotations

import atexit
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import NamedTuple, NoReturn

from candor_eval.common.streams import flush_std_streams


class Command(NamedTuple):
    """A subcommand: the module whose ``main(argv)`` runs it, the argv words put before the user's, and its summary."""

    module: str
    prefix: tuple[str, ...]
    summary: str


def _stage(name: str, summary: str, *prefix: str) -> Command:
    return Command(f"candor_eval.stages.{name}", prefix, summary)


COMMANDS: dict[str, Command] = {
    # the project
    "init": _stage("init", "write candor's dvc.yaml, params and candor.lock into a repository"),
    "add": _stage("add", "bring a detection set (add set) or an ONNX model (add model) into the project"),
    "lock": _stage("lock", "rewrite candor.lock for the installed candor", "lock"),
    "check": _stage("lock", "exit 2 when candor.lock is not the installed candor's", "check"),
    # the pipeline's stages
    "fetch": _stage("fetch", "verify (and fetch) every manifest and model card by SHA-256"),
    "identify": _stage("identify", "lots: the model step of one candidate (replay or live)"),
    "record": _stage("record", "lots: record a candidate live and promote it (dvc repro scores it)"),
    "score-lots": _stage("score_lots", "lots: identification, count and field expectations"),
    "value": _stage("value", "lots: comps -> value -> bid ceiling -> verdict of one candidate"),
    "score-valuation": _stage("score_valuation", "lots: value ratio, band, comps fit, audit"),
    "detect": _stage("detect", "detector: raw boxes of a set's models"),
    "score-detection": _stage("score_detection", "detector: thresholds, NMS, matching, metrics, plots"),
    "stats": _stage("stats", "intervals, paired tests, the gate, the report"),
    # commands around the pipeline
    "gate": _stage("gate", "evaluate or check the predeclared release gate"),
    "compare": _stage("compare", "two revisions, paired: what changed"),
    "figures": _stage("figures", "draw the PNG figures"),
    "plots": _stage("plots", "the DVC plots as one offline page (dvc plots show, Vega vendored)"),
    "coco-eval": _stage("coco_eval", "COCO AP of a results file"),
    "suggest-thresholds": _stage("suggest_thresholds", "per-class thresholds from dev frames"),
    "verify-inference": _stage("verify_inference", "rerun every model, check the committed raw boxes"),
    "latency": _stage("latency", "the machine-specific latency diagnostic"),
    "sweep-table": _stage("sweep_table", "rank a sweep's experiments"),
    "wilson": _stage("stats", "Wilson interval of k successes in n units", "wilson"),
    "mcnemar": _stage("stats", "exact McNemar test of discordant counts", "mcnemar"),
    "plan": _stage("stats", "units needed to detect an improvement", "plan"),
}


def version() -> str:
    """The installed distribution's version (``0+unknown`` when run from a checkout that is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("candor-eval")
    except PackageNotFoundError:
        return "0+unknown"


def usage() -> str:
    """``candor --help``: every command with its summary, in at most 100 columns."""
    import textwrap

    width = max(map(len, COMMANDS))
    lines = [textwrap.fill(cmd.summary, 100, initial_indent=f"  {name:<{width}}  ",
                           subsequent_indent=" " * (width + 4)) for name, cmd in COMMANDS.items()]
    return ("usage: candor <command> [args]   (candor <command> --help for its arguments)\n\n"
            "commands:\n" + "\n".join(lines) + "\n\n  --version  the installed candor-eval version\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), end="")
        return 0 if args else 2
    if args[0] == "--version":
        print(f"candor {version()}")
        return 0
    cmd = COMMANDS.get(args[0])
    if cmd is None:
        import difflib

        close = difflib.get_close_matches(args[0], COMMANDS, n=1)
        print(f"error: candor: unknown command {args[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
              + "; candor --help lists them", file=sys.stderr)
        return 2
    module = load(cmd)
    from candor_eval.common.errors import run_main

    sys.argv[0] = f"candor {args[0]}"
    return run_main(locked(args[0], module.main), [*cmd.prefix, *args[1:]])


def entry() -> NoReturn:
    """The ``candor`` command (and ``python -m candor_eval``): :func:`main`'s exit code, without the
    interpreter's teardown (module docstring)."""
    codes: list[int] = []
    atexit.register(_end, codes)     # the first handler registered runs last: after every one the command adds
    codes.append(main())
    sys.exit(codes[0])


def _end(codes: list[int]) -> None:
    """At exit: with ``main``'s code, flush stdout and stderr and end the process with it (with 120 when a
    flush fails, as the interpreter does); without one (``main`` raised), the interpreter's own exit."""
    if not codes:
        return
    os._exit(codes[0] if flush_std_streams() else 120)


def load(cmd: Command) -> ModuleType:
    """``cmd``'s module, imported with one OpenBLAS thread (:mod:`candor_eval.common.blas`: candor calls no BLAS)."""
    from candor_eval.common.blas import one_blas_thread

    with one_blas_thread():
        return importlib.import_module(cmd.module)


def locked(name: str, stage_main: Callable[[Sequence[str] | None], int | None]) -> Callable[[Sequence[str] | None],
                                                                                          int | None]:
    """``stage_main``, first checking a pipeline stage's fingerprint against ``candor.lock`` in the working
    directory (where DVC runs a stage of that folder's ``dvc.yaml``); without a lock, no check."""
    from pathlib import Path

    from candor_eval.adopt.fingerprint import STAGE_MODULES

    def run(argv: Sequence[str] | None) -> int | None:
        if name in STAGE_MODULES and "-h" not in (argv or ()) and "--help" not in (argv or ()):
            from candor_eval.adopt.lockfile import LOCK_NAME, check_lock

            if (lock := Path(LOCK_NAME)).is_file():
                check_lock(lock, version(), [name])
        return stage_main(argv)

    return run
