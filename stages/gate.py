"""gate stage: evaluate the predeclared release gate (criteria: :mod:`candor.stats.gate`).

    python -m stages.gate run --outcomes metrics/outcomes --detection metrics/detection \\
        --out metrics/gate.json [--latency metrics/latency]
    python -m stages.gate check [--gate metrics/gate.json]    # print it; exit 1 when it failed

``run`` reads params ``gate`` (the criteria, declared before scoring: the detection set
``gate.set``, whose models ``gate.reference`` and ``gate.candidate`` must be in ``detector.sets``,
and the ``gate.split``), ``stats.confidence`` and ``match.critical`` / ``match.min_support``; the
set's per-frame and per-label detection outcome tables ``<outcomes>/<set>/`` (an absent table is
logged, and the criteria that need it fail); each model's wrong action targets from
``<detection>/<set>/<model>.json``; and, only when ``--latency`` is given
(``make gate``; the pipeline's stage never passes it, latency being machine-specific), the
candidate's latency diagnostic ``<latency>/<set>/<candidate>.json``, used only when it was measured on the candidate's current
ONNX file. It writes one file (:class:`candor.stats.gate.GateResult`) and always exits 0 on
valid input, so that ``dvc repro`` records a failed gate instead of stopping; ``check`` is
the command CI calls.
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from candor.common.atomic import write_json
from candor.common.tables import read_json, read_text
from candor.common.errors import InputError, Problem, fail, run_main
from candor.common.params import section
from candor.detection.config import DetectorParams
from candor.detection.frames import SPLITS
from candor.detection.model_card import load_card
from candor.detection.sets import find_set
from candor.stats.gate import GateResult, evaluate_gate, find_wrong_targets, latency_p95
from candor.stats.outcomes import parse_tables
from candor.stats.gate_views import MatchView, StatsView
from candor.stats.params import GateParams
from candor.stats.report import render_check

log = logging.getLogger("candor.gate")

TABLES = ("detection-frames.csv", "detection-labels.csv")


def check_gate(gp: GateParams, det: DetectorParams, *, where: str) -> None:
    """The gate's set must be a detection set, its reference and candidate models of that set, and
    its split a split of the data (an unknown name is an input error, never a silently failed gate)."""
    dset = find_set(det, gp.set, where=where)
    problems = [Problem(f"{where}:gate.{key}", f"not a model of detection set {dset.name!r}",
                        expected="one of: " + ", ".join(dset.models), got=repr(name))
                for key, name in (("reference", gp.reference), ("candidate", gp.candidate)) if name not in dset.models]
    if gp.split not in SPLITS:
        problems.append(Problem(f"{where}:gate.split", "unknown split", expected=" or ".join(SPLITS),
                                got=repr(gp.split)))
    if problems:
        raise InputError(problems)


def _run(args: argparse.Namespace) -> int:
    gp = section(GateParams, "gate", path=args.params)
    sp = section(StatsView, "stats", path=args.params)
    mp = section(MatchView, "match", path=args.params)
    check_gate(gp, section(DetectorParams, "detector", path=args.params), where=args.params)
    outcomes = Path(args.outcomes) / gp.set
    texts = {n: read_text(outcomes / n, expected="an outcome table") if (outcomes / n).is_file() else None for n in TABLES}
    for name in (n for n, text in texts.items() if text is None):
        log.warning("%s is absent: gate criteria that need it fail", outcomes / name)
    tables = parse_tables(texts, where=lambda name: (outcomes / name).as_posix())
    wrong = {}
    for model in (gp.reference, gp.candidate):
        f = Path(args.detection) / gp.set / f"{model}.json"
        wrong[model] = find_wrong_targets(read_json(f), split=gp.split) if f.is_file() else None
    p95 = None
    latency_file = Path(args.latency) / gp.set / f"{gp.candidate}.json" if args.latency else None
    if latency_file is not None and latency_file.is_file():
        card_file = Path(args.models) / f"{gp.candidate}.yaml"
        card_sha = load_card(card_file).sha256 if card_file.is_file() else None
        p95 = latency_p95(read_json(latency_file, hint="rerun: make latency"), where=latency_file.as_posix(),
                          onnx_sha256=card_sha)
        if p95 is None:
            log.warning("%s was measured on another model file than %s: not used (rerun: make latency)",
                        latency_file, card_file)
    result = evaluate_gate(frames=tables.get(TABLES[0]), labels=tables.get(TABLES[1]), wrong_targets=wrong,
                           latency_p95_ms=p95, params=gp, critical=mp.critical, min_support=mp.min_support,
                           confidence=sp.confidence)
    write_json(args.out, result.as_json())
    log.info("gate %s -> %s (%s)", "PASSED" if result.passed else "FAILED", args.out,
             ", ".join(result.failed) or "all criteria met")
    return 0


def _check(args: argparse.Namespace) -> int:
    path = Path(args.gate)
    if not path.is_file():
        raise fail(path.as_posix(), "file not found", hint="run `dvc repro gate` first")
    result = GateResult.from_json(read_json(path), where=path.as_posix())
    print(render_check(result), end="")
    return 0 if result.passed else 1


def build_parser() -> argparse.ArgumentParser:
    """The CLI: ``run`` (the DVC stage) and ``check`` (make gate, CI)."""
    ap = argparse.ArgumentParser(prog="python -m stages.gate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("run", help="the gate stage: evaluate the predeclared release gate")
    g.add_argument("--outcomes", default="metrics/outcomes")
    g.add_argument("--detection", default="metrics/detection", help="detection metrics: a folder of <model>.json")
    g.add_argument("--latency", default=None,
                   help="folder of <model>.json latency diagnostics (make latency); machine-specific, so the "
                        "pipeline's gate stage never passes it and `make gate` does")
    g.add_argument("--models", default="models", help="model cards: a latency figure counts only for the "
                   "candidate's current ONNX file")
    g.add_argument("--params", default="params.yaml")
    g.add_argument("--out", default="metrics/gate.json")
    g.set_defaults(func=_run)
    c = sub.add_parser("check", help="print the gate result; exit 1 when it failed (make gate)")
    c.add_argument("--gate", default="metrics/gate.json")
    c.set_defaults(func=_check)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
