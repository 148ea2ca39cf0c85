"""sweep-table command: the experiments of a sweep ranked by one headline metric, in 100 columns.

    candor sweep-table --param thresholds.deer --sort detection.<set>.<model>.dev.f1 [--ascending]
        [--from exps.json] [--params params.yaml]

Reads ``dvc exp show --json`` (run here, or the file given with ``--from``) and prints one row
per revision and experiment that has the sort key: its name, the swept param, the sort key, then
as many of the same candidate's headline numbers as fit (:mod:`candor_eval.review.ranking`): the
last step of a sweep (``dvc exp run --queue -S ...``, ``dvc queue start``). An experiment that failed
(or has not finished) is listed last, marked ``FAILED`` (or its state), without numbers: DVC shows it
with the numbers of the commit it started from. A detection sweep ranks on a ``dev`` figure of the
headline only (``detection.<set>.<model>.dev.<metric>``): thresholds are tuned on dev, never on
the test split, which gives the verdict. Exit 0; 2 when the key is a test-split figure, DVC's
output cannot be read or no finished revision or experiment has the key.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence

from candor_eval.common.errors import fail, run_main
from candor_eval.common.tables import read_text
from candor_eval.review.ranking import ranking, render, tuning_problem
from candor_eval.stages.cli_help import StageParser


def build_parser() -> argparse.ArgumentParser:
    """The CLI (see the module docstring)."""
    ap = StageParser(prog="candor sweep-table", description=__doc__)
    ap.add_argument("--param", required=True, help="the swept param, a dotted key of the params file")
    ap.add_argument("--params", default="params.yaml",
                    help="the params file, as dvc exp show names it (default: params.yaml)")
    ap.add_argument("--sort", required=True, help="a dotted key of metrics/headline.json (the ranking's key; "
                    "a detection key must be a dev figure: detection.<set>.<model>.dev.f1)")
    ap.add_argument("--ascending", action="store_true", help="lower is better for the sort key")
    ap.add_argument("--from", dest="source", help="read this dvc exp show --json output instead of running DVC")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = build_parser().parse_args(argv)
    where = args.source or "dvc exp show --json"
    if args.source:
        text = read_text(args.source, expected="the output of dvc exp show --json")
    else:
        done = subprocess.run([sys.executable, "-m", "dvc", "exp", "show", "--json"], capture_output=True, text=True)
        if done.returncode != 0:
            raise fail(where, "DVC could not list the experiments", got=done.stderr.strip()[-300:])
        text = done.stdout
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise fail(where, "not JSON", got=str(err)) from None
    sort = args.sort.removeprefix("metrics/headline.json:")
    if (why := tuning_problem(sort)) is not None:
        raise fail("--sort", why, hint="thresholds are tuned on the dev split, never on the final-test sessions")
    entries = ranking(doc, param=args.param, sort_key=sort, ascending=args.ascending, params_file=args.params,
                      where=where)
    if not any(e.state is None for e in entries):
        raise fail(where, f"no revision or experiment has {sort}",
                   hint="name a key of metrics/headline.json, e.g. detection.<set>.<model>.dev.f1")
    print(render(entries, param=args.param, sort_key=sort), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
