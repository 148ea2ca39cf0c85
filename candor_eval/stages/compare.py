"""Compare two revisions case by case: both rates with intervals, discordant counts, exact p.

    candor compare REV_A [REV_B] [--markdown | --json] [--out FILE]

``REV_A`` and ``REV_B`` are git revisions (``main``, ``HEAD~1``, a tag, a SHA) or DVC
experiment names (:mod:`candor_eval.review.revisions`). ``REV_B`` defaults to the workspace (the files
on disk). Nothing is rerun: the committed per-case outcome tables under ``--outcomes`` (default
``metrics/outcomes``; the detection tables of every set folder found there) of both sides are read, validated,
reduced to paired units and compared
per metric and candidate (:mod:`candor_eval.review.compare`; A = ``REV_A``, B = ``REV_B``). Verdicts:
``B better``, ``B worse`` (p <= alpha, from params ``stats.alpha`` unless ``--alpha``; within a
family of tests such as the per-class table, the Holm-adjusted p), or ``no detectable difference``
with what the bench could have seen. Every test is the exact sign-flip test over the clusters
params ``stats.cluster`` declares (frames, sessions, cases); per-frame false-positive counts
(a test of the count, not of precision) are compared the same way. Only what changed is listed;
``--all`` lists the unchanged rows too. The plain table (100 columns) leads with the rows that the
params diff between A and B touched (a changed ``thresholds.deer``: the rows of ``deer``), then
groups the rest by track and measure (label rate, per frame, ...), each group headed once by what
its B - A is and sorted by the size of B - A. Then, descriptively,
what kind of error changed: the test-split totals of each set's and model's FP kinds, aimed and
missed FNs and strict TPs in A and B and their difference (:mod:`candor_eval.review.error_kinds`; JSON:
``error_kinds``).

Nothing is dropped silently: cases present in one revision only are counted and listed, and a
table, metric or candidate present on one side only is reported as such. Output: a plain table
(default), ``--markdown`` (for a review comment) or ``--json`` (``rows[].paired`` in the one
paired-comparison shape, :class:`candor_eval.stats.paired.Paired`); ``--out`` writes it to a file
instead of stdout. Exit 0 (this is a report, not a gate); 2 for an unknown revision or a bad table.

The params file (``--params``, relative to ``--repo``) is read from disk: without ``--params``,
``params.yaml`` when it exists (else the defaults); a ``--params`` that does not exist is exit 2.
A set clustered by session must keep each session in one split on both sides, name every frame's
session, and have at least as many sessions per split as an exact test at alpha needs
(:func:`candor_eval.stats.clusters.min_clusters`; docs/stats.md): else exit 2, nothing printed.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from candor_eval.common.atomic import dumps_json, write_text
from candor_eval.common.errors import run_main
from candor_eval.common.params import DEFAULT_PARAMS, check_probability, section
from candor_eval.detection.config import DetectorParams
from candor_eval.review.collect import check_sessions
from candor_eval.review.compare import compare_units, params_changes, render_markdown, render_text
from candor_eval.review.error_kinds import frame_totals, render_totals
from candor_eval.review.params import StatsParams
from candor_eval.review.revisions import WORKSPACE, folders_at, read_at, resolve_revision
from candor_eval.stages.cli_help import StageParser
from candor_eval.stats.outcomes import parse_tables, table_paths
from candor_eval.stats.units import units_from_tables


def build_parser() -> argparse.ArgumentParser:
    """The CLI (see the module docstring)."""
    ap = StageParser(prog="candor compare", description=__doc__)
    ap.add_argument("rev_a", metavar="REV_A", help="git revision or DVC experiment name (A)")
    ap.add_argument("rev_b", metavar="REV_B", nargs="?", default=WORKSPACE,
                    help="git revision or DVC experiment name (B); default: the workspace")
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table for a review comment")
    fmt.add_argument("--json", action="store_true", help="JSON for machines")
    ap.add_argument("--out", help="write the report here instead of stdout")
    ap.add_argument("--all", action="store_true", help="also list the rows that did not change")
    ap.add_argument("--outcomes", default="metrics/outcomes", help="outcome tables, relative to the repo")
    ap.add_argument("--repo", default=".", help="repository root (default: current folder)")
    ap.add_argument("--params", help="params file for stats.alpha / confidence / cluster (default: params.yaml "
                                     "when it exists, else the defaults)")
    ap.add_argument("--alpha", type=float, help="override stats.alpha")
    ap.add_argument("--confidence", type=float, help="override stats.confidence")
    return ap


def params_at(revs: Sequence[str], path: str | None, *, repo: Path) -> dict[str, tuple[Any, Any]]:
    """What changed in the params file ``path`` (relative to ``repo``) between the two revisions
    (:func:`candor_eval.review.compare.params_changes`); nothing when there is no such file on either side
    or one side's is not YAML (the report leads with the rows a change touched, nothing more)."""
    if path is None:
        return {}
    trees = []
    for rev in revs:
        text = read_at(rev, path, repo=repo)
        try:
            trees.append(yaml.safe_load(text) if text is not None else None)
        except yaml.YAMLError:
            return {}
    return params_changes(*trees) if all(isinstance(t, dict) for t in trees) else {}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = build_parser().parse_args(argv)
    repo = Path(args.repo)
    given = Path(args.params or DEFAULT_PARAMS)
    params_path = given if given.is_absolute() else repo / given
    params = StatsParams()
    if args.params is not None or params_path.is_file():
        params = section(StatsParams, "stats", path=params_path)          # a missing --params: InputError
        params.cluster.check_sets(section(DetectorParams, "detector", path=params_path).sets, where=str(params_path))
    alpha = params.alpha if args.alpha is None else args.alpha
    confidence = params.confidence if args.confidence is None else args.confidence
    for name, v in (("--alpha", alpha), ("--confidence", confidence)):
        check_probability(v, where=name)

    revs = [resolve_revision(rev, repo=repo) for rev in (args.rev_a, args.rev_b)]
    absent: list[str] = []
    units, errors = [], []
    root = args.outcomes.rstrip("/")
    sets = sorted({d for rev in revs for d in folders_at(rev, root, repo=repo)})    # a set on one side only: absent
    paths = {name: f"{root}/{name}" for name in table_paths(sets)}

    def located(rev: str) -> Callable[[str], str]:
        """Table name -> where it was read from (``<rev>:<path>``), for error messages."""
        return lambda name: f"{rev}:{paths[name]}"

    for rev, label in zip(revs, ("A", "B")):
        texts = {name: read_at(rev, path, repo=repo) for name, path in paths.items()}
        absent += [f"{paths[name]} is absent in {label} ({rev})" for name, text in texts.items() if text is None]
        tables = parse_tables(texts, where=located(rev))
        check_sessions(tables, {d: params.cluster.detection_of(d) for d in sets}, alpha=alpha, where=located(rev))
        units.append(units_from_tables(tables, clusters={d: params.cluster.detection_of(d) for d in sets}))
        errors.append(frame_totals(tables))
    rows = compare_units(units[0], units[1], alpha=alpha, confidence=confidence)
    if args.json:
        text = dumps_json({"a": args.rev_a, "b": args.rev_b, "a_commit": revs[0], "b_commit": revs[1],
                           "alpha": alpha, "confidence": confidence, "absent": absent,
                           "rows": [r.as_json() for r in rows],
                           "error_kinds": [{"set": s, "model": m,
                                            "a": errors[0].get((s, m)), "b": errors[1].get((s, m))}
                                           for s, m in sorted(set(errors[0]) | set(errors[1]))]})
    else:
        kw = {"rev_a": args.rev_a, "rev_b": args.rev_b, "confidence": confidence, "alpha": alpha, "absent": absent,
              "everything": args.all}
        if args.markdown:
            text = render_markdown(rows, **kw)
        else:
            rel = params_path.relative_to(repo).as_posix() if params_path.is_relative_to(repo) else None
            text = render_text(rows, **kw, changes=params_at(revs, rel, repo=repo))
        text += "\n" + render_totals(errors[0], errors[1])
    if args.out:
        write_text(args.out, text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
