"""stats stage: intervals over independent clusters on every counted rate, the exact sign-flip
test per candidate vs reference, then the release gate and what a reviewer reads (one process:
they always rerun together).

    candor stats run --outcomes metrics/outcomes --metrics metrics/identification.json \\
        metrics/fields metrics/detection metrics/valuation.json --out metrics/stats.json \\
        [--gate metrics/gate.json --detection metrics/detection] \\
        [--report plots/report/report.md --headline metrics/headline.json --forest plots/figures]
    candor stats wilson K N [--confidence 0.95]     # prints JSON
    candor stats mcnemar B C [--alpha 0.05]         # prints JSON
    candor stats plan --discordance D (--improvement X | --units N) [--alpha --power]
    candor stats plan --discordance D --cluster-size M (--improvement X | --clusters G) [--together R]

``plan`` is the power of the paired test (:mod:`candor_eval.stats.power`): for independent units
(lots), exactly, the units needed to detect an improvement at a discordance, or the least
improvement ``--units`` detect; for a clustered design (``--cluster-size``: units per cluster,
e.g. labels per frame; ``--together``: the share of clusters whose discordant units move
together), the answer is in clusters: the clusters needed, or the least improvement ``--clusters``
detect, by a seeded simulation of the exact sign-flip test over them (with too few clusters to
reach alpha at all, it says so).

Bounds of the helpers' numbers (each computed within memory; beyond, exit 2 naming the argument):
``wilson`` ``0 <= K <= N < 2**53``; ``mcnemar`` ``B, C >= 0`` and ``B + C < 2**53``; ``plan``
``--units`` in ``[1, 10**6]`` (:data:`candor_eval.stats.power.MAX_UNITS`), ``--improvement`` in
``(0, discordance]`` (no more than 100000 units are searched: more is reported as ``null``); every
confidence, alpha, power and discordance strictly between 0 and 1.

``run`` reads params ``stats`` (``confidence``, ``alpha``, ``reference.lots``, ``cluster``),
``identify.candidates`` (the lots reference when ``stats.reference.lots`` is unset and there is one
candidate; none and no reference: the project has no lots track, and nothing of it is read or
reported) and ``detector.sets`` (each set's detection tables are in ``<outcomes>/<set>/``; its
reference is its first model), the outcome tables under ``--outcomes`` and the ``counts`` block of
every metrics file given, and writes ``--out`` (shape: :mod:`candor_eval.review.stats_file`; what goes
in it: :mod:`candor_eval.review.collect`; docs/stats.md). With ``--gate`` it also evaluates the
predeclared release gate (:func:`candor_eval.review.gate_files.gate_from_files`, without latency,
which is machine-specific: ``candor gate run --latency`` adds it) and writes it there (a project
without a detection set has no gate: nothing is written); it always exits 0 on
valid input, so that ``dvc repro`` records a failed gate instead of stopping. With ``--report``
it writes the report of :func:`candor_eval.review.report.review` (a one-screen summary, the gate,
links; one file per candidate under ``details/`` beside it, stale ones removed) and, with
``--headline``, the headline metrics (:mod:`candor_eval.review.headline`: about ten numbers per
candidate, the file ``dvc metrics diff`` and ``dvc exp show`` list). The forest plots the report
links (``--forest``/``forest-<group>.png``) are drawn by ``candor figures``. Nothing is written
unless everything was computed. Other stages' metrics files are never modified. An absent input
is not an error: it is listed as ``absent``, logged as a warning, and shown in the report as not
measured.

Exit codes: 0 ok (a failed gate too: it is recorded in gate.json; ``candor gate check`` exits 1 on it);
2 bad input or configuration (the file, row or params key named; nothing written).
"""
from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.atomic import dumps_json, replace_dir_files, write_json, write_text
from candor_eval.common.counts import MAX_COUNT
from candor_eval.common.errors import fail, run_main
from candor_eval.common.params import check_probability, section
from candor_eval.detection.config import DetectorParams
from candor_eval.review.collect import build_stats, read_inputs, references
from candor_eval.review.gate_files import gate_from_files, write_gate
from candor_eval.review.params import StatsParams
from candor_eval.review.report import review
from candor_eval.review.stats_file import StatsFile
from candor_eval.stages.cli_help import StageParser
from candor_eval.stages.cli_review import lots_reference, read_gate_settings
from candor_eval.stats.clusters import min_clusters
from candor_eval.stats.power import MAX_UNITS, clusters_needed, detectable, pairs_needed, plan_clusters
from candor_eval.stats.rates import mcnemar_p, min_k0, min_split, wilson
from candor_eval.stats.records import p6

log = logging.getLogger("candor_eval.stats")


def _run(args: argparse.Namespace) -> int:
    from candor_eval.lots.params import IdentifyParams  # here: `candor wilson` never loads the lots track

    params = section(StatsParams, "stats", path=args.params)
    sets = section(DetectorParams, "detector", path=args.params).sets
    params.cluster.check_sets(sets, where=args.params)
    lots = lots_reference(params, section(IdentifyParams, "identify", path=args.params).candidates,
                          where=args.params)
    metrics = [Path(m) for m in args.metrics]
    inputs = read_inputs(outcomes=Path(args.outcomes), metrics=metrics, root=Path(args.metrics_root),
                         detection_sets=list(sets), lots=lots is not None)
    stats = build_stats(inputs, params=params, refs=references(lots, sets), where=args.params)
    for path in stats.absent:
        log.warning("%s is absent: its track is reported as not measured", path)
    record = stats.as_json()
    settings = read_gate_settings(args.params) if args.gate else None
    if args.gate and settings is None:
        log.info("no detection set in %s:detector.sets: no release gate to evaluate, %s not written",
                 args.params, args.gate)
    gate = (gate_from_files(settings, outcomes=Path(args.outcomes), detection=Path(args.detection),
                            models=Path(args.models), latency=None, parsed=inputs.tables)
            if settings is not None else None)
    if args.report:
        out = Path(args.report)
        forest = os.path.relpath(args.forest, out.parent).replace(os.sep, "/") if args.forest else None
        head, text, details = review(StatsFile.from_json(record, where=args.out), gate, inputs.metrics, sets=sets,
                                     forest=forest)      # the metrics documents read_inputs read (not read again)
    # everything is computed: now write
    write_json(args.out, record)
    log.info("%d rates with intervals, %d paired metrics -> %s", len(stats.rates), len(stats.paired), args.out)
    if gate is not None:
        write_gate(gate, args.gate)
    if args.report:
        replace_dir_files(out.parent / "details", {name: body.encode() for name, body in details.items()}, clean=True)
        write_text(out, text)
        if args.headline:
            write_json(args.headline, head)
        log.info("report -> %s (+ %d detail files)", out, len(details))
    for metric, comp in stats.paired.items():
        for cand, c in comp.candidates.items():
            print(f"{metric:<48} {comp.reference} vs {cand}: {c.explanation}")
    return 0


def _plan(args: argparse.Namespace) -> int:
    d, alpha, power = args.discordance, args.alpha, args.power
    for name, v in (("--discordance", d), ("--alpha", alpha), ("--power", power)):
        check_probability(v, where=name)
    if args.cluster_size is not None:
        return _plan_clusters(args)
    if args.units is not None:
        if not 0 < args.units <= MAX_UNITS:
            raise fail("--units", "must be a positive number of independent pairs, at most 10**6", got=args.units,
                       hint="10**6 pairs detect about 0.003 or less at any discordance" if args.units > 0 else None)
        x = detectable(args.units, d, alpha=alpha, power=power)
        print(dumps_json({"units": args.units, "discordance": d, "alpha": alpha, "power": power,
                          "detectable_improvement": x}), end="")
        return 0
    if args.improvement is None or not 0 < args.improvement <= d:
        raise fail("--improvement", "give --units N, or an improvement in (0, discordance]", got=args.improvement)
    n = pairs_needed(d, args.improvement, alpha=alpha, power=power)
    print(dumps_json({"improvement": args.improvement, "discordance": d, "alpha": alpha, "power": power,
                      "units_needed": n}), end="")
    return 0


def _plan_clusters(args: argparse.Namespace) -> int:
    """``plan`` for a clustered design: the answer in clusters."""
    d, alpha, power, m, rho = args.discordance, args.alpha, args.power, args.cluster_size, args.together
    if not 1 <= m <= 10_000:
        raise fail("--cluster-size", "must be a number of units per cluster in [1, 10000]", got=m)
    if not 0.0 <= rho <= 1.0:
        raise fail("--together", "must be a share in [0, 1]", got=rho)
    common = {"discordance": d, "cluster_size": m, "together": rho, "alpha": alpha, "power": power,
              "test": "exact sign-flip over clusters", "min_clusters": min_clusters(alpha)}
    if args.clusters is not None:
        if not 1 <= args.clusters <= 512:
            raise fail("--clusters", "must be a number of clusters in [1, 512]", got=args.clusters)
        p = plan_clusters(args.clusters, m, d, alpha=alpha, power=power, rho=rho)
        print(dumps_json({"clusters": args.clusters, **common, "detectable_improvement": p.detectable,
                          "reason": p.reason}), end="")
        return 0
    if args.improvement is None or not 0 < args.improvement <= d:
        raise fail("--improvement", "give --clusters G, or an improvement in (0, discordance]", got=args.improvement)
    g = clusters_needed(args.improvement, m, d, alpha=alpha, power=power, rho=rho)
    print(dumps_json({"improvement": args.improvement, **common, "clusters_needed": g}), end="")
    return 0


def _wilson(args: argparse.Namespace) -> int:
    k, n, conf = args.k, args.n, args.confidence
    if not (0 <= k <= n < MAX_COUNT):
        raise fail("wilson K N", "need 0 <= K <= N < 2**53", got=f"K={k}, N={n}")
    check_probability(conf, where="--confidence")
    print(dumps_json(wilson(k, n, confidence=conf).as_json() | {"confidence": conf}), end="")
    return 0


def _mcnemar(args: argparse.Namespace) -> int:
    b, c, alpha = args.b, args.c, args.alpha
    if b < 0 or c < 0:
        raise fail("mcnemar B C", "discordant counts must be >= 0", got=f"B={b}, C={c}")
    if b + c >= MAX_COUNT:
        raise fail("mcnemar B C", "too many discordant pairs", expected="B + C < 2**53", got=b + c)
    check_probability(alpha, where="--alpha")
    p = mcnemar_p(b, c)
    split = min_split(b + c, alpha)
    print(dumps_json({
        "a_only": b, "b_only": c, "discordant": b + c, "p": p6(p), "alpha": alpha,
        "reaches_alpha": p <= alpha, "min_k0": min_k0(alpha),
        "min_split_at_this_discordant": None if split is None else f"{split[0]}-{split[1]}",
    }), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The CLI: ``run`` (the DVC stage), ``wilson`` and ``mcnemar`` helpers."""
    ap = StageParser(prog="candor stats", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="the stats stage: stats.json, and the gate and the report when asked")
    run.add_argument("--outcomes", default="metrics/outcomes", help="folder of per-case outcome tables")
    run.add_argument("--metrics", nargs="*", default=[], help="metrics JSON files or folders")
    run.add_argument("--metrics-root", default="metrics", help="rate keys are relative to this")
    run.add_argument("--params", default="params.yaml")
    run.add_argument("--out", default="metrics/stats.json")
    run.add_argument("--gate", default=None,
                     help="also evaluate the release gate and write it here (metrics/gate.json)")
    run.add_argument("--detection", default="metrics/detection", help="detection metrics (the gate's wrong targets)")
    run.add_argument("--models", default="models", help="model cards")
    run.add_argument("--report", default=None, help="also write the Markdown report here (details/ beside it)")
    run.add_argument("--headline", default=None, help="with --report: the headline metrics JSON to write")
    run.add_argument("--forest", default="plots/figures",
                     help="where `candor figures` renders forest-<group>.png (linked from the report, not written "
                          "here)")
    run.set_defaults(func=_run)
    w = sub.add_parser("wilson", help="Wilson interval of K successes in N cases, as JSON")
    w.add_argument("k", type=int, metavar="K")
    w.add_argument("n", type=int, metavar="N")
    w.add_argument("--confidence", type=float, default=0.95)
    w.set_defaults(func=_wilson)
    m = sub.add_parser("mcnemar", help="exact McNemar p from discordant counts B (A only) and C (B only)")
    m.add_argument("b", type=int, metavar="B")
    m.add_argument("c", type=int, metavar="C")
    m.add_argument("--alpha", type=float, default=0.05)
    m.set_defaults(func=_mcnemar)
    pl = sub.add_parser("plan", help="exact power of the paired test: units needed for an improvement, or the "
                                     "improvement N units detect (JSON)")
    pl.add_argument("--discordance", type=float, required=True,
                    help="share of units where the two sides disagree (a_only + b_only) / n, e.g. 0.19")
    pl.add_argument("--improvement", type=float, help="B's rate minus A's to detect (e.g. 0.05 = 5 pp)")
    pl.add_argument("--units", type=int, help="independent units (lots) on the bench")
    pl.add_argument("--cluster-size", type=int, help="a clustered design: units per cluster (e.g. labels per frame); "
                                                     "the answer is then in clusters")
    pl.add_argument("--clusters", type=int, help="with --cluster-size: clusters on the bench")
    pl.add_argument("--together", type=float, default=0.0,
                    help="with --cluster-size: share of clusters whose discordant units move together (0-1)")
    pl.add_argument("--alpha", type=float, default=0.05)
    pl.add_argument("--power", type=float, default=0.8)
    pl.set_defaults(func=_plan)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
