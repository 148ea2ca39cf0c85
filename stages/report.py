"""report stage: what a reviewer reads: the headline metrics and the human report of the stats and the gate.

    python -m stages.report [--stats metrics/stats.json] [--gate metrics/gate.json]
        [--metrics metrics/identification.json metrics/fields metrics/detection metrics/valuation.json]
        [--metrics-root metrics] [--params params.yaml] [--headline metrics/headline.json]
        [--out plots/report/report.md] [--forest plots/figures]

Reads the stats stage's ``metrics/stats.json`` and the gate's ``metrics/gate.json`` (optional)
through their record types, the metrics files (for the few headline numbers that are not rates:
F1, FP per frame, wrong targets, fields score, median ratio, worst error) and ``detector.sets``.
Writes ``--headline`` (:mod:`candor.stats.headline`: about ten numbers per candidate, the file
``dvc metrics diff`` and ``dvc exp show`` list), and the report of
:func:`candor.stats.report.render_report`: ``--out`` (a one-screen summary, the gate, links) and
one file per candidate under ``details/`` beside it (stale ones removed). The forest plots it
links (``--forest``/``forest-<group>.png``) are drawn by ``make figures`` (PNG bytes depend on
the matplotlib build, so they are not pipeline outputs).
"""
from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from candor.common.atomic import replace_dir_files, write_json, write_text
from candor.common.errors import fail, run_main
from candor.common.params import section
from candor.common.tables import read_json
from candor.detection.config import DetectorParams
from candor.stats.collect import read_metrics
from candor.stats.gate import GateResult
from candor.stats.headline import dig, headline
from candor.stats.report import candidates_of, render_report
from candor.stats.stats_file import StatsFile

log = logging.getLogger("candor.report")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = build_parser().parse_args(argv)
    stats_path = Path(args.stats)
    if not stats_path.is_file():
        raise fail(stats_path.as_posix(), "file not found", hint="run `dvc repro stats` first")
    stats = StatsFile.from_json(read_json(stats_path), where=stats_path.as_posix())
    gate_path = Path(args.gate) if args.gate else None
    gate = None
    if gate_path is not None and gate_path.is_file():
        gate = GateResult.from_json(read_json(gate_path), where=gate_path.as_posix())
    docs, _ = read_metrics([Path(m) for m in args.metrics], root=Path(args.metrics_root))
    sets = section(DetectorParams, "detector", path=args.params).sets if Path(args.params).is_file() else {}
    reference = stats.reference.get("identification", "")
    lots = sorted(set(dig(docs.get("identification", ("", None))[1], "identification") or {})
                  | set(candidates_of(stats, "lots")) | ({reference} if reference else set()))
    head = headline(stats, gate, docs, sets=sets, candidates=lots, reference=reference)
    out = Path(args.out)
    rel = os.path.relpath(args.forest, out.parent).replace(os.sep, "/") if args.forest else None
    text, details = render_report(stats, gate, forest=rel)
    replace_dir_files(out.parent / "details", {name: body.encode() for name, body in details.items()}, clean=True)
    write_text(out, text)
    if args.headline:
        write_json(args.headline, head)
    log.info("report -> %s (+ %d detail files)", out, len(details))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The CLI (see the module docstring)."""
    p = argparse.ArgumentParser(prog="python -m stages.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stats", default="metrics/stats.json", help="the stats stage's output")
    p.add_argument("--gate", default="metrics/gate.json", help="the gate stage's output (optional)")
    p.add_argument("--metrics", nargs="*", default=[], help="metrics JSON files or folders (headline numbers)")
    p.add_argument("--metrics-root", default="metrics", help="file keys are relative to this")
    p.add_argument("--params", default="params.yaml", help="params file (detector.sets)")
    p.add_argument("--headline", default=None, help="the headline metrics JSON to write (metrics/headline.json)")
    p.add_argument("--out", default="plots/report/report.md", help="the Markdown report (details/ beside it)")
    p.add_argument("--forest", default="plots/figures",
                   help="where `make figures` renders forest-<group>.png (linked from the report, not written here)")
    return p


if __name__ == "__main__":
    raise SystemExit(run_main(main))
