"""Compare two revisions case by case: both rates with intervals, discordant counts, exact p.

    python -m stages.compare REV_A [REV_B] [--markdown | --json] [--out FILE]

``REV_A`` and ``REV_B`` are git revisions (``main``, ``HEAD~1``, a tag, a SHA) or DVC
experiment names (resolved through the git refs DVC keeps, ``refs/exps/.../<name>``).
``REV_B`` defaults to the workspace (the files on disk). Nothing is rerun: the
committed per-case outcome tables under ``--outcomes`` (default ``metrics/outcomes``)
of both sides are read (``git show REV:path``), validated, reduced to the paired units
of :mod:`candor.stats.rates`, and for every paired metric and candidate present on both sides
the cases common to both are compared with the exact McNemar test (A = ``REV_A``,
B = ``REV_B``). Verdicts: ``B better``, ``B worse`` (p <= alpha, from params
``stats.alpha`` unless ``--alpha``), or ``no detectable difference (could not have seen
less than ...)``: the smallest k-0 split that would have reached alpha on that many cases.

Nothing is dropped silently: cases present in one revision only are counted and listed,
and a table, metric or candidate present on one side only is reported as such.
Output: a plain table (default), ``--markdown`` (for a review comment) or ``--json``;
``--out`` writes it to a file instead of stdout. Exit 0 (this is a report, not a gate);
2 for an unknown revision or a bad table.
"""
from __future__ import annotations

import argparse
import logging
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from candor.common.atomic import dumps_json, write_text
from candor.common.errors import InputError, Problem, fail, run_main
from candor.common.params import section
from candor.stats.rates import Case, Paired, Units, compare_paired
from candor.stats.outcomes import TABLES, parse_table
from stages.stats import StatsParams, p6, r6, units_from_tables

log = logging.getLogger("candor.compare")

WORKSPACE = "workspace"


# ---------------------------------------------------------------------------------------
# pure: compare two sets of units


@dataclass(frozen=True)
class Row:
    """One (metric, candidate) across the two revisions.

    ``status``: ``compared``, or ``only in A`` / ``only in B`` when the metric or the
    candidate exists on one side only (``result`` is then ``None``).
    """

    metric: str
    candidate: str
    status: str
    result: Paired | None


def compare_units(a: Mapping[str, Units], b: Mapping[str, Units], *, alpha: float,
                  confidence: float) -> list[Row]:
    """Pair every (metric, candidate) of revision A with the same of revision B."""
    flat_a = {(m, c): cases for units in a.values() for m, by in units.items() for c, cases in by.items()}
    flat_b = {(m, c): cases for units in b.values() for m, by in units.items() for c, cases in by.items()}
    rows = []
    for key in sorted(set(flat_a) | set(flat_b)):
        metric, cand = key
        if key not in flat_b:
            rows.append(Row(metric, cand, "only in A", None))
        elif key not in flat_a:
            rows.append(Row(metric, cand, "only in B", None))
        else:
            rows.append(Row(metric, cand, "compared",
                            compare_paired(flat_a[key], flat_b[key], alpha=alpha, confidence=confidence)))
    return rows


def _case(c: Case) -> str:
    return "/".join(c)


def row_json(row: Row) -> dict[str, Any]:
    """A row for ``--json``: rates, intervals, discordant counts, p, verdict, unpaired cases."""
    out: dict[str, Any] = {"metric": row.metric, "candidate": row.candidate, "status": row.status}
    r = row.result
    if r is not None:
        out |= {
            "n": r.n,
            "a": {"rate": r6(r.a.rate), "lo": r6(r.a.lo), "hi": r6(r.a.hi), "k": r.a.k},
            "b": {"rate": r6(r.b.rate), "lo": r6(r.b.lo), "hi": r6(r.b.hi), "k": r.b.k},
            "a_only": r.a_only, "b_only": r.b_only, "p": p6(r.p), "min_k0": r.min_k0,
            "verdict": r.verdict, "explanation": r.explanation,
            "only_in_a": [_case(c) for c in r.only_in_a], "only_in_b": [_case(c) for c in r.only_in_b],
        }
    return out


def _fmt_rate(rate: Any) -> str:
    if rate.rate is None:
        return "n/a (0 cases)"
    return f"{rate.k}/{rate.n} = {rate.rate:.3f} [{rate.lo:.3f}, {rate.hi:.3f}]"


def _unpaired(r: Paired, limit: int = 8) -> str:
    parts = []
    for side, cases in (("A", r.only_in_a), ("B", r.only_in_b)):
        if cases:
            shown = ", ".join(_case(c) for c in cases[:limit])
            more = f" (+{len(cases) - limit} more)" if len(cases) > limit else ""
            parts.append(f"{len(cases)} only in {side}: {shown}{more}")
    return "; ".join(parts)


def render_text(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                absent: Sequence[str]) -> str:
    """Plain report: one block per (metric, candidate)."""
    lines = [f"A = {rev_a}, B = {rev_b}; Wilson {confidence:.0%} intervals; exact McNemar, alpha {alpha:g}"]
    for note in absent:
        lines.append(f"note: {note}")
    for row in rows:
        lines.append("")
        lines.append(f"{row.metric}  [{row.candidate}]")
        if row.result is None:
            lines.append(f"  {row.status}: not compared")
            continue
        r = row.result
        lines.append(f"  A  {_fmt_rate(r.a)}")
        lines.append(f"  B  {_fmt_rate(r.b)}")
        lines.append(f"  discordant: A only {r.a_only}, B only {r.b_only}; p = {r.p:.4g}")
        lines.append(f"  {r.explanation}")
        if r.only_in_a or r.only_in_b:
            lines.append(f"  unpaired: {_unpaired(r)}")
    return "\n".join(lines) + "\n"


def render_markdown(rows: Sequence[Row], *, rev_a: str, rev_b: str, confidence: float, alpha: float,
                    absent: Sequence[str]) -> str:
    """A Markdown table fit for a review comment."""
    out = [f"**{rev_a}** (A) vs **{rev_b}** (B): paired per case; Wilson {confidence:.0%} intervals; "
           f"exact McNemar on discordant cases, alpha {alpha:g}.", ""]
    out += [f"> {note}" for note in absent]
    if absent:
        out.append("")
    out += ["| metric | candidate | A | B | A only | B only | p | verdict | unpaired |",
            "|---|---|---|---|---:|---:|---:|---|---|"]
    for row in rows:
        if row.result is None:
            out.append(f"| {row.metric} | {row.candidate} | | | | | | {row.status}: not compared | |")
            continue
        r = row.result
        out.append(f"| {row.metric} | {row.candidate} | {_fmt_rate(r.a)} | {_fmt_rate(r.b)} | "
                   f"{r.a_only} | {r.b_only} | {r.p:.4g} | {r.explanation} | {_unpaired(r)} |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------
# reading a revision


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def resolve_revision(rev: str, *, repo: Path) -> str:
    """A commit SHA for a git revision or a DVC experiment name (``refs/exps/.../<name>``)."""
    got = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo)
    if got.returncode == 0:
        return got.stdout.strip()
    refs = _git(["for-each-ref", "--format=%(refname)", "refs/exps"], repo).stdout.split()
    matches = sorted(r for r in refs if r.rsplit("/", 1)[-1] == rev)
    if len(matches) == 1:
        return _git(["rev-parse", matches[0]], repo).stdout.strip()
    if len(matches) > 1:
        raise fail(rev, "experiment name is ambiguous", expected="one experiment ref",
                   got=", ".join(matches), hint="pass the experiment's commit SHA instead")
    raise fail(rev, "not a git revision or DVC experiment name",
               hint="see `git log --oneline` and `dvc exp show`")


def read_at(rev: str, path: str, *, repo: Path) -> str | None:
    """The text of ``path`` at ``rev`` (``None`` when absent there); ``workspace`` reads the disk."""
    if rev == WORKSPACE:
        p = repo / path
        return p.read_text(encoding="utf-8") if p.is_file() else None
    got = _git(["show", f"{rev}:{path}"], repo)
    return got.stdout if got.returncode == 0 else None


def load_units(rev: str, label: str, *, repo: Path, outcomes: str,
               absent: list[str]) -> dict[str, Units]:
    """Parse every outcome table at ``rev`` and reduce it to paired units."""
    tables = {}
    problems: list[Problem] = []
    for name, spec in TABLES.items():
        path = f"{outcomes.rstrip('/')}/{name}"
        text = read_at(rev, path, repo=repo)
        if text is None:
            absent.append(f"{path} is absent in {label} ({rev})")
            continue
        try:
            tables[name] = parse_table(spec, text, where=f"{rev}:{path}")
        except InputError as err:
            problems.extend(err.problems)
    if problems:
        raise InputError(problems)
    return units_from_tables(tables)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m stages.compare", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev_a", metavar="REV_A", help="git revision or DVC experiment name (A)")
    ap.add_argument("rev_b", metavar="REV_B", nargs="?", default=WORKSPACE,
                    help="git revision or DVC experiment name (B); default: the workspace")
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table for a review comment")
    fmt.add_argument("--json", action="store_true", help="JSON for machines")
    ap.add_argument("--out", help="write the report here instead of stdout")
    ap.add_argument("--outcomes", default="metrics/outcomes", help="outcome tables, relative to the repo")
    ap.add_argument("--repo", default=".", help="repository root (default: current folder)")
    ap.add_argument("--params", default="params.yaml", help="params file for stats.alpha / confidence")
    ap.add_argument("--alpha", type=float, help="override stats.alpha")
    ap.add_argument("--confidence", type=float, help="override stats.confidence")
    args = ap.parse_args(argv)

    repo = Path(args.repo)
    params_path = Path(args.params) if Path(args.params).is_absolute() else repo / args.params
    params = section(StatsParams, "stats", path=params_path) if params_path.is_file() else StatsParams()
    alpha = params.alpha if args.alpha is None else args.alpha
    confidence = params.confidence if args.confidence is None else args.confidence
    for name, v in (("--alpha", alpha), ("--confidence", confidence)):
        if not 0 < v < 1:
            raise fail(name, "must be strictly between 0 and 1", got=v)

    revs = []
    for rev in (args.rev_a, args.rev_b):
        revs.append(rev if rev == WORKSPACE else resolve_revision(rev, repo=repo))
    absent: list[str] = []
    units_a = load_units(revs[0], "A", repo=repo, outcomes=args.outcomes, absent=absent)
    units_b = load_units(revs[1], "B", repo=repo, outcomes=args.outcomes, absent=absent)
    rows = compare_units(units_a, units_b, alpha=alpha, confidence=confidence)
    label_a = args.rev_a
    label_b = args.rev_b
    if args.json:
        text = dumps_json({"a": label_a, "b": label_b, "a_commit": revs[0], "b_commit": revs[1],
                           "alpha": alpha, "confidence": confidence, "absent": absent,
                           "rows": [row_json(r) for r in rows]})
    else:
        render = render_markdown if args.markdown else render_text
        text = render(rows, rev_a=label_a, rev_b=label_b, confidence=confidence, alpha=alpha, absent=absent)
    if args.out:
        write_text(args.out, text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
