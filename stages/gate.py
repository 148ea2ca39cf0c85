"""gate stage: evaluate the predeclared release gate (criteria: :mod:`candor.stats.gate`).

    python -m stages.gate run --outcomes metrics/outcomes --detection metrics/detection \\
        --out metrics/gate.json [--latency metrics/latency]
    python -m stages.gate check [--gate metrics/gate.json]    # print it; exit 1 when it failed

``run`` reads params ``gate`` (the criteria, declared before scoring), ``stats.confidence``
and ``match.critical`` / ``match.min_support``; the per-frame and per-label detection outcome
tables (an absent table is logged, and the criteria that need it fail); each model's
wrong action targets from the detection metrics; and, only when ``--latency`` is given
(``make gate``; the pipeline's stage never passes it, latency being machine-specific), the
candidate's latency diagnostic, used only when it was measured on the candidate's current
ONNX file. It writes one file and always exits 0 on valid input, so that ``dvc repro``
records a failed gate instead of stopping; ``check`` is the command CI calls.
"""
from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from candor.common.atomic import write_json
from candor.common.errors import fail, run_main
from candor.stats.gate import GateParams, evaluate_gate, find_wrong_targets, latency_p95
from candor.detection.match_defaults import MIN_SUPPORT
from candor.detection.model_card import load_card
from candor.stats.outcomes import TABLES, parse_table
from candor.common.params import section
from candor.stats.rates import CONFIDENCE

log = logging.getLogger("candor.gate")


class StatsView(BaseModel):
    """The key of ``params.yaml: stats`` (owned by the stats stage) the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    confidence: float = Field(default=CONFIDENCE, gt=0.0, lt=1.0)


class MatchView(BaseModel):
    """The two keys of ``params.yaml: match`` (owned by the score stage) the gate reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    critical: list[str] = []
    min_support: int = Field(default=MIN_SUPPORT, ge=0)


def _detection_doc(path: Path, model: str) -> Any | None:
    """A model's detection metrics: ``<dir>/<model>.json``, or ``<file>[model]``."""
    if path.is_dir():
        f = path / f"{model}.json"
        return json.loads(f.read_text(encoding="utf-8")) if f.is_file() else None
    if path.is_file():
        doc = json.loads(path.read_text(encoding="utf-8"))
        return doc.get(model) if isinstance(doc, dict) else None
    return None


def _run(args: argparse.Namespace) -> int:
    gp = section(GateParams, "gate", path=args.params)
    sp = section(StatsView, "stats", path=args.params)
    mp = section(MatchView, "match", path=args.params)
    outcomes = Path(args.outcomes)
    tables: dict[str, list[dict[str, object]] | None] = {}
    for name in ("detection-frames.csv", "detection-labels.csv"):
        f = outcomes / name
        tables[name] = parse_table(TABLES[name], f.read_text(encoding="utf-8"), where=f.as_posix()) \
            if f.is_file() else None
        if tables[name] is None:
            log.warning("%s is absent: gate criteria that need it fail", f)
    wrong = {}
    for model in (gp.reference, gp.candidate):
        try:
            doc = _detection_doc(Path(args.detection), model)
        except json.JSONDecodeError as err:
            raise fail(args.detection, f"not valid JSON: {err}") from None
        wrong[model] = None if doc is None else find_wrong_targets(doc, split=gp.split)
    latency_file = Path(args.latency) / f"{gp.candidate}.json" if args.latency else None
    p95 = None
    if latency_file is not None and latency_file.is_file():
        try:
            doc = json.loads(latency_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise fail(latency_file.as_posix(), f"not valid JSON: {err}", hint="rerun: make latency") from None
        card_file = Path(args.models) / f"{gp.candidate}.yaml"
        card_sha = load_card(card_file).sha256 if card_file.is_file() else None
        p95 = latency_p95(doc, where=latency_file.as_posix(), onnx_sha256=card_sha)
        if p95 is None:
            log.warning("%s was measured on another model file than %s: not used (rerun: make latency)",
                        latency_file, card_file)
    result = evaluate_gate(frames=tables["detection-frames.csv"], labels=tables["detection-labels.csv"],
                           wrong_targets=wrong, latency_p95_ms=p95, params=gp, critical=mp.critical,
                           min_support=mp.min_support, confidence=sp.confidence)
    write_json(args.out, result)
    log.info("gate %s -> %s (%s)", "PASSED" if result["passed"] else "FAILED", args.out,
             ", ".join(result["failed"]) or "all criteria met")
    return 0


def _check(args: argparse.Namespace) -> int:
    path = Path(args.gate)
    if not path.is_file():
        raise fail(path.as_posix(), "file not found", hint="run `dvc repro gate` first")
    result = json.loads(path.read_text(encoding="utf-8"))
    print(f"release gate (predeclared in params.yaml:gate): {result['candidate']} vs "
          f"{result['reference']} on {result['split']}")
    for name, c in result["criteria"].items():
        mark = "pass" if c["passed"] else "FAIL"
        detail = c.get("reason") or c.get("status") or ""
        print(f"  {mark}  {name} {detail}".rstrip())
    print("PASSED" if result["passed"] else "FAILED: " + ", ".join(result["failed"]))
    return 0 if result["passed"] else 1


def build_parser() -> argparse.ArgumentParser:
    """The CLI: ``run`` (the DVC stage) and ``check`` (make gate, CI)."""
    ap = argparse.ArgumentParser(prog="python -m stages.gate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("run", help="the gate stage: evaluate the predeclared release gate")
    g.add_argument("--outcomes", default="metrics/outcomes")
    g.add_argument("--detection", default="metrics/detection",
                   help="detection metrics: a folder of <model>.json or one file keyed by model")
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
