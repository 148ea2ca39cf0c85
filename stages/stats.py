"""stats stage: Wilson intervals on every rate, exact McNemar per candidate vs reference.

    python -m stages.stats run --outcomes metrics/outcomes --metrics metrics/identification.json \\
        metrics/fields metrics/detection metrics/valuation.json --out metrics/stats.json
    python -m stages.stats wilson K N [--confidence 0.95]     # prints JSON
    python -m stages.stats mcnemar B C [--alpha 0.05]         # prints JSON

``run`` reads params ``stats`` (``confidence``, ``alpha``, ``reference.lots``,
``reference.detector``) and writes one file, ``metrics/stats.json`` (other stages'
metrics files are never modified: two DVC stages cannot own one file):

- ``inputs``: every outcome table and metrics path it was given, ``present`` or
  ``absent``. An absent input is not an error (a track may not be built yet, or a user
  may run only one track); it is listed here, logged as a warning, and shown in the
  report as "not measured" - never silently skipped.
- ``rates``: every rate found in the metrics files with ``k``, ``n``, ``lo``, ``hi``,
  keyed ``<file>.<path>`` where ``<file>`` is the metrics path without ``metrics/`` and
  ``.json`` with ``/`` as ``.`` (``metrics/detection/demo-v1.json`` +
  ``test.micro.recall`` -> ``detection.demo-v1.test.micro.recall``). See
  :func:`find_rates` for how a rate's counts are found.
- ``no_interval``: rate-like keys with no interval (counts not found, or a mean of
  scores rather than a proportion of cases), listed with the reason, not dropped.
- ``paired``: for each paired metric (units documented in :mod:`candor.stats.rates`) and each
  candidate other than the reference of its track, the exact McNemar comparison
  reference (A) vs candidate (B): both rates with intervals over the paired cases,
  ``a_only``, ``b_only``, ``p``, ``min_k0`` (smallest k-0 split reaching ``alpha`` at
  this bench size), the verdict, and how many cases exist on one side only.

Tracks and their references: ``identification``, ``fields`` and ``valuation`` compare
lots candidates against ``reference.lots``; ``detection`` compares models against
``reference.detector``. A present table that lacks its reference is an input error.
"""
from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from candor.common.atomic import dumps_json, write_json
from candor.common.errors import InputError, Problem, fail, run_main
from candor.stats.outcomes import TABLES, parse_table
from candor.common.params import section
from candor.stats.rates import (
    CONFIDENCE, Paired, Rate, Units, compare_paired, detection_units, fields_units, identification_units,
    mcnemar_p, min_k0, min_split, valuation_units, wilson,
)

log = logging.getLogger("candor.stats")


# ---------------------------------------------------------------------------------------
# params


class Reference(BaseModel):
    """The reference each track's candidates are compared against."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    lots: str = "prompt-a"
    detector: str = "demo-v1"


class StatsParams(BaseModel):
    """``params.yaml: stats``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    confidence: float = Field(default=CONFIDENCE, gt=0.0, lt=1.0)
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    reference: Reference = Reference()


def units_from_tables(tables: Mapping[str, list[dict[str, object]]]) -> dict[str, Units]:
    """Paired units per track from the parsed tables present (absent tables give no track)."""
    out: dict[str, Units] = {}
    if "identification.csv" in tables:
        out["identification"] = identification_units(tables["identification.csv"])
    if "fields.csv" in tables:
        out["fields"] = fields_units(tables["fields.csv"])
    if "valuation.csv" in tables:
        out["valuation"] = valuation_units(tables["valuation.csv"])
    if "detection-frames.csv" in tables or "detection-labels.csv" in tables:
        out["detection"] = detection_units(tables.get("detection-frames.csv", []),
                                           tables.get("detection-labels.csv", []))
    return out


def reference_for(track: str, ref: Reference) -> str:
    """The reference candidate of a track."""
    return ref.detector if track == "detection" else ref.lots


# ---------------------------------------------------------------------------------------
# rates in metrics files


RATE_KEYS = frozenset({"precision", "recall", "rate", "score", "hit", "abstain", "wrong",
                       "in_band", "exact", "count_exact", "accuracy", "found", "error_free"})
DENOMINATORS = ("n", "total", "cases", "runs", "lots", "frames", "labels", "support", "count")
NAME_KEYS = ("field", "name", "case", "id", "class")


def _is_count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def is_rate_key(key: str) -> bool:
    """A key names a rate (a proportion of cases) by this vocabulary; ``f1`` is not one."""
    return key in RATE_KEYS or key.endswith("_rate")


def counts_for(key: str, value: float | None, siblings: Mapping[str, Any],
               parent: Mapping[str, Any] | None = None) -> tuple[int, int] | str:
    """``(k, n)`` for the rate ``siblings[key]`` or the reason none could be found.

    In order: ``precision`` with ``tp``/``fp``; ``recall`` with ``tp``/``fn`` (or ``tp``/
    ``support``); ``hits``/``total``; an explicit numerator (``<base>`` for ``<base>_rate``,
    ``<base>s``, ``<base>_count``, ``n_<base>``, ``k``) over a denominator (``n``, ``total``, ``cases``, ``runs``,
    ``lots``, ``frames``, ``labels``, ``support``, ``count``, looked up next to the rate,
    then one level up); else the numerator *reconstructed* as ``round(rate * n)`` when
    that is exact to 1e-6 (rates are stored to 6 decimals; exact for n < 500000).
    Precision is never reconstructed from a label count (its denominator is detections).
    """
    def ints(*names: str) -> list[int] | None:
        vals = [siblings.get(nm) for nm in names]
        return vals if all(_is_count(v) for v in vals) else None  # type: ignore[return-value]

    if key == "precision":
        got = ints("tp", "fp")
        return (got[0], got[0] + got[1]) if got else "precision without tp and fp next to it"
    if key == "recall":
        got = ints("tp", "fn")
        if got:
            return got[0], got[0] + got[1]
        got = ints("tp", "support")
        if got and got[0] <= got[1]:
            return got[0], got[1]
    got = ints("hits", "total")
    if got and got[0] <= got[1]:
        return got[0], got[1]
    if key == "score":
        return "a mean of scores (no hits/total next to it), not a proportion of cases"
    base = key[: -len("_rate")] if key.endswith("_rate") else key
    denominator = None
    for scope in (siblings, parent or {}):
        for d in DENOMINATORS:
            if _is_count(scope.get(d)):
                denominator = scope[d]
                break
        if denominator is not None:
            break
    if denominator is None:
        return "no count next to it (tp/fp, tp/fn, hits/total or a denominator such as n)"
    for name in (base if base != key else "", f"{base}s", f"{base}_count", f"n_{base}", "k" if key == "rate" else ""):
        if name and _is_count(siblings.get(name)) and siblings[name] <= denominator:
            return siblings[name], denominator
    if value is None:
        return (0, 0) if denominator == 0 else f"rate is null but n = {denominator}"
    if denominator == 0:
        return f"rate {value} with n = 0"
    k = round(value * denominator)
    if abs(k / denominator - value) <= 1e-6:
        return k, denominator
    return f"rate {value} is not k/{denominator} for any integer k"


def _segment(item: object, index: int) -> str:
    if isinstance(item, Mapping):
        for nm in NAME_KEYS:
            if isinstance(item.get(nm), str) and item[nm]:
                return item[nm]
    return str(index)


def find_rates(doc: Any, *, prefix: str, confidence: float) -> tuple[dict[str, Rate], dict[str, str]]:
    """Every rate in a metrics document with its Wilson interval, and the unresolved ones.

    A *rate* is a JSON float in [0, 1] (or null) under a key named by :func:`is_rate_key`;
    integers are counts (``"wrong": 1`` is one wrong answer, not a rate of 1).
    Nested mappings give dotted keys; list items are named by their ``field``/``name``/
    ``case``/``id``/``class`` value (else their index). Sorted by key.
    """
    found: dict[str, Rate] = {}
    unresolved: dict[str, str] = {}

    def walk(node: Any, path: str, parent: Mapping[str, Any] | None) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                here = f"{path}.{key}"
                if is_rate_key(str(key)) and (value is None or (isinstance(value, float) and 0 <= value <= 1)):
                    got = counts_for(str(key), value, node, parent)
                    if isinstance(got, str):
                        unresolved[here] = got
                    else:
                        found[here] = wilson(got[0], got[1], confidence=confidence)
                else:
                    walk(value, here, node)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}.{_segment(item, i)}", parent)

    walk(doc, prefix, None)
    return dict(sorted(found.items())), dict(sorted(unresolved.items()))


def metrics_prefix(path: Path, root: Path) -> str:
    """``metrics/detection/demo-v1.json`` -> ``detection.demo-v1`` (relative to ``root``)."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        rel = Path(path.name)
    return ".".join(rel.with_suffix("").parts)


# ---------------------------------------------------------------------------------------
# building stats.json


def r6(x: float | None) -> float | None:
    """Round a stored rate to 6 decimals (metrics convention)."""
    return None if x is None else round(float(x), 6)


def p6(p: float) -> float:
    """A p-value to 6 significant digits (small p-values keep their magnitude)."""
    return float(f"{p:.6g}")


def rate_json(r: Rate) -> dict[str, Any]:
    """A rate as stored: ``rate``, ``lo``, ``hi``, ``k``, ``n``."""
    return {"rate": r6(r.rate), "lo": r6(r.lo), "hi": r6(r.hi), "k": r.k, "n": r.n}


def paired_json(reference: str, res: Paired) -> dict[str, Any]:
    """One reference-vs-candidate comparison as stored in stats.json."""
    return {
        "reference": reference,
        "n": res.n,
        "reference_rate": r6(res.a.rate), "reference_lo": r6(res.a.lo), "reference_hi": r6(res.a.hi),
        "rate": r6(res.b.rate), "lo": r6(res.b.lo), "hi": r6(res.b.hi),
        "a_only": res.a_only, "b_only": res.b_only,
        "p": p6(res.p), "min_k0": res.min_k0,
        "verdict": res.verdict, "explanation": res.explanation,
        "only_in_reference": len(res.only_in_a), "only_in_candidate": len(res.only_in_b),
    }


def paired_stats(units: Mapping[str, Units], ref: Reference, *, alpha: float,
                 confidence: float) -> dict[str, dict[str, dict[str, Any]]]:
    """``metric -> candidate -> comparison`` for every track present; reference must exist."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    problems = []
    for track, by_metric in sorted(units.items()):
        reference = reference_for(track, ref)
        candidates = sorted({c for by_cand in by_metric.values() for c in by_cand})
        if candidates and reference not in candidates:
            problems.append(Problem(f"params.yaml:stats.reference ({track})",
                                    "reference not in the outcome table",
                                    expected=" or ".join(candidates), got=reference))
            continue
        for metric, by_cand in by_metric.items():
            for cand in sorted(by_cand):
                if cand == reference:
                    continue
                res = compare_paired(by_cand.get(reference, {}), by_cand[cand], alpha=alpha,
                                     confidence=confidence)
                out.setdefault(metric, {})[cand] = paired_json(reference, res)
    if problems:
        raise InputError(problems, hint="set stats.reference.lots / stats.reference.detector in params.yaml")
    return out


def build_stats(*, tables: Mapping[str, list[dict[str, object]]], metrics: Mapping[str, Any],
                inputs: Mapping[str, str], params: StatsParams) -> dict[str, Any]:
    """The whole of stats.json from parsed inputs (pure).

    ``tables``: table name -> parsed rows (present tables only); ``metrics``: key prefix ->
    parsed metrics JSON; ``inputs``: path -> ``present``/``absent``.
    """
    rates: dict[str, Rate] = {}
    unresolved: dict[str, str] = {}
    for prefix, doc in sorted(metrics.items()):
        last = prefix.rsplit(".", 1)[-1]
        if isinstance(doc, dict) and list(doc) == [last]:
            doc = doc[last]  # {"identification": {...}} in identification.json: not repeated
        found, missing = find_rates(doc, prefix=prefix, confidence=params.confidence)
        rates.update(found)
        unresolved.update(missing)
    return {
        "confidence": params.confidence,
        "alpha": params.alpha,
        "min_k0": min_k0(params.alpha),
        "reference": params.reference.model_dump(),
        "inputs": dict(sorted(inputs.items())),
        "rates": {k: rate_json(v) for k, v in sorted(rates.items())},
        "no_interval": dict(sorted(unresolved.items())),
        "paired": paired_stats(units_from_tables(tables), params.reference, alpha=params.alpha,
                               confidence=params.confidence),
    }


# ---------------------------------------------------------------------------------------
# I/O


def load_tables(outcomes: Path, inputs: dict[str, str]) -> dict[str, list[dict[str, object]]]:
    """Parse every contract table present under ``outcomes``; record presence in ``inputs``."""
    tables = {}
    problems: list[Problem] = []
    for name, spec in TABLES.items():
        path = outcomes / name
        if not path.is_file():
            inputs[path.as_posix()] = "absent"
            continue
        inputs[path.as_posix()] = "present"
        try:
            tables[name] = parse_table(spec, path.read_text(encoding="utf-8"), where=path.as_posix())
        except InputError as err:
            problems.extend(err.problems)
    if problems:
        raise InputError(problems, hint="the outcome-table contract is in docs/CONVENTIONS.md")
    return tables


def load_metrics(paths: Sequence[Path], root: Path, inputs: dict[str, str]) -> dict[str, Any]:
    """Parse metrics JSON files (a directory means every ``*.json`` under it, sorted)."""
    docs: dict[str, Any] = {}
    for p in paths:
        files = sorted(p.rglob("*.json")) if p.is_dir() else [p] if p.is_file() else []
        if not files:
            inputs[p.as_posix()] = "absent"
            continue
        inputs[p.as_posix()] = "present"
        for f in files:
            try:
                docs[metrics_prefix(f, root)] = json.loads(f.read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise fail(f.as_posix(), f"not valid JSON: {err}") from None
    return docs


def _run(args: argparse.Namespace) -> int:
    params = section(StatsParams, "stats", path=args.params)
    inputs: dict[str, str] = {}
    tables = load_tables(Path(args.outcomes), inputs)
    metrics = load_metrics([Path(m) for m in args.metrics], Path(args.metrics_root), inputs)
    for path, state in sorted(inputs.items()):
        if state == "absent":
            log.warning("%s is absent: its track is reported as not measured", path)
    stats = build_stats(tables=tables, metrics=metrics, inputs=inputs, params=params)
    write_json(args.out, stats)
    log.info("%d rates with intervals, %d without, %d paired metrics -> %s",
             len(stats["rates"]), len(stats["no_interval"]), len(stats["paired"]), args.out)
    for metric, by_cand in stats["paired"].items():
        for cand, c in by_cand.items():
            print(f"{metric:<48} {c['reference']} vs {cand}: {c['a_only']}-{c['b_only']} "
                  f"p={c['p']:.3g}  {c['explanation']}")
    return 0


def _wilson(args: argparse.Namespace) -> int:
    k, n, conf = args.k, args.n, args.confidence
    if not (0 <= k <= n):
        raise fail("wilson K N", "need 0 <= K <= N", got=f"K={k}, N={n}")
    if not (0 < conf < 1):
        raise fail("--confidence", "must be strictly between 0 and 1", got=conf)
    print(dumps_json(rate_json(wilson(k, n, confidence=conf)) | {"confidence": conf}), end="")
    return 0


def _mcnemar(args: argparse.Namespace) -> int:
    b, c, alpha = args.b, args.c, args.alpha
    if b < 0 or c < 0:
        raise fail("mcnemar B C", "discordant counts must be >= 0", got=f"B={b}, C={c}")
    if not (0 < alpha < 1):
        raise fail("--alpha", "must be strictly between 0 and 1", got=alpha)
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
    ap = argparse.ArgumentParser(prog="python -m stages.stats", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="the stats stage: write metrics/stats.json")
    run.add_argument("--outcomes", default="metrics/outcomes", help="folder of per-case outcome tables")
    run.add_argument("--metrics", nargs="*", default=[], help="metrics JSON files or folders")
    run.add_argument("--metrics-root", default="metrics", help="metrics keys are relative to this")
    run.add_argument("--params", default="params.yaml")
    run.add_argument("--out", default="metrics/stats.json")
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
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    return func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
