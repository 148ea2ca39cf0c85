"""gate command: the predeclared release gate with its timings, and its check (:mod:`candor_eval.review.gate`).

    candor gate run --outcomes metrics/outcomes --detection metrics/detection \\
        --out build/gate-with-latency.json [--latency metrics/latency] [--refresh timings.csv]
        [--params params.yaml]
    candor gate check [--gate metrics/gate.json]    # print it; exit 1 unless it PASSED

The pipeline's ``stats`` stage evaluates the gate (``metrics/gate.json``) without timings, which
are machine-specific: its ``refresh_p95`` and ``inference_latency_no_increase`` are pending.
``run`` evaluates the same gate from the same files
(:func:`candor_eval.review.gate_files.gate_from_files`), plus both models' decoded-image
diagnostics when ``--latency`` is given (timed in one run on this machine by ``candor latency
--set SET --out metrics/latency/SET``) and the candidate's whole-refresh timings when
``--refresh`` is given (recorded on the serving runtime; :mod:`candor_eval.detection.refresh`).
It always exits 0 on valid input (a project without a detection set has no gate: it says so
and writes nothing); ``check`` prints every criterion (its status and name on one line, what it
says wrapped below, in 100 columns; colour on a terminal unless ``NO_COLOR`` is set) and exits 1
unless the gate PASSED (a FAILED or NOT EVALUATED gate: the command CI calls). With timings::

    dvc repro stats
    candor latency --set detector --out metrics/latency/detector
    candor gate run --latency metrics/latency --refresh refresh.csv --out build/gate-with-latency.json
    candor gate check --gate build/gate-with-latency.json

Exit codes: 0 ok (``run``; ``check`` of a passed gate); 1 ``check`` of a failed gate; 2 bad input or
configuration (the file or params key named; nothing written).
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.errors import fail, run_main
from candor_eval.common.tables import read_json
from candor_eval.review.gate_files import gate_from_files, write_gate
from candor_eval.review.gate_result import GateResult
from candor_eval.review.gate_views import render_console, wants_colour
from candor_eval.stages.cli_help import StageParser
from candor_eval.stages.cli_review import read_gate_settings

log = logging.getLogger("candor.gate")


def _run(args: argparse.Namespace) -> int:
    settings = read_gate_settings(args.params)
    if settings is None:
        log.warning("no detection set in %s:detector.sets: no release gate to evaluate, %s not written",
                    args.params, args.out)
        return 0
    result = gate_from_files(settings, outcomes=Path(args.outcomes), detection=Path(args.detection),
                             models=Path(args.models), latency=Path(args.latency) if args.latency else None,
                             refresh=Path(args.refresh) if args.refresh else None)
    write_gate(result, args.out)
    return 0


def _check(args: argparse.Namespace) -> int:
    path = Path(args.gate)
    if not path.is_file():
        raise fail(path.as_posix(), "file not found", hint="run `dvc repro stats` first")
    result = GateResult.from_json(read_json(path), where=path.as_posix())
    print(render_console(result, colour=wants_colour(sys.stdout, os.environ)), end="")
    return 0 if result.passed else 1


def build_parser() -> argparse.ArgumentParser:
    """The CLI: ``run`` (with latency: the gate on this machine) and ``check`` (CI)."""
    ap = StageParser(prog="candor gate", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("run", help="evaluate the predeclared release gate (with --latency, --refresh: timings)")
    g.add_argument("--outcomes", default="metrics/outcomes")
    g.add_argument("--detection", default="metrics/detection", help="detection metrics: a folder of <model>.json")
    g.add_argument("--latency", default=None,
                   help="folder of <set>/<model>.json latency diagnostics (candor latency); machine-specific, so "
                        "the pipeline's stats stage never reads it and this command does")
    g.add_argument("--refresh", default=None,
                   help="whole-refresh timings of the candidate on the serving runtime (CSV: refresh,model,host,"
                        "scope,ms; scope capture-to-handoff)")
    g.add_argument("--models", default="models", help="model cards: a latency figure counts only for the "
                   "candidate's current ONNX file")
    g.add_argument("--params", default="params.yaml")
    g.add_argument("--out", default="metrics/gate.json")
    g.set_defaults(func=_run)
    c = sub.add_parser("check", help="print the gate result; exit 1 when it failed")
    c.add_argument("--gate", default="metrics/gate.json")
    c.set_defaults(func=_check)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
