"""report stage: the human report of the stats and the gate (Markdown).

    python -m stages.report [--stats metrics/stats.json] [--gate metrics/gate.json]
                            [--out plots/report/report.md] [--forest plots/figures/forest.png]

Reads the stats stage's ``metrics/stats.json`` and the gate's ``metrics/gate.json`` (optional)
through their record types and writes the report of :func:`candor.stats.report.render_report`,
with a link to the forest plot (``--forest``), which ``make figures`` renders (PNG bytes depend
on the matplotlib build, so they are not pipeline outputs).
"""
from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from candor.common.atomic import write_text
from candor.common.tables import read_json
from candor.common.errors import fail, run_main
from candor.stats.gate import GateResult
from candor.stats.report import render_report
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
    out = Path(args.out)
    rel = os.path.relpath(args.forest, out.parent).replace(os.sep, "/") if args.forest else None
    write_text(out, render_report(stats, gate, forest=rel))
    log.info("report -> %s", out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The CLI (see the module docstring)."""
    p = argparse.ArgumentParser(prog="python -m stages.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stats", default="metrics/stats.json", help="the stats stage's output")
    p.add_argument("--gate", default="metrics/gate.json", help="the gate stage's output (optional)")
    p.add_argument("--out", default="plots/report/report.md", help="the Markdown report")
    p.add_argument("--forest", default="plots/figures/forest.png",
                   help="where `make figures` renders the forest plot (linked from the report, not written here)")
    return p


if __name__ == "__main__":
    raise SystemExit(run_main(main))
