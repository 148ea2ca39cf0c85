"""The stats stage's collection: outcome tables and metrics files in, :class:`StatsFile` out.

*Rates* come only from the ``counts`` block of each metrics file
(:func:`candor_eval.common.counts.read_counts`): each entry gives ``k``, ``n``, the ``unit`` and, for
clustered units, the cluster sums, and gets its interval over independent clusters
(:func:`candor_eval.stats.rates.interval`). Nothing is inferred from key names; a rate a scorer did not count is
not in ``stats.json``. A rate's key is ``<file>.<key in its counts block>``, where ``<file>`` is
the metrics path relative to the metrics root without ``.json``, ``/`` as ``.``
(``metrics/detection/demo-v1.json`` + ``test.micro.recall`` ->
``detection.demo-v1.test.micro.recall``); a counts key that begins with the file's own name
does not repeat it (``metrics/identification.json`` + ``identification.prompt-a.all.hit_rate``
-> ``identification.prompt-a.all.hit_rate``).

*Paired comparisons* come from the outcome tables (:mod:`candor_eval.stats.units`, clustered as
``stats.cluster`` declares): for each paired metric and each candidate other than its track's reference
(:func:`references`: ``stats.reference.lots``
for the lots tracks, the first model of each detection set for ``detection.<set>``), the reference
(A) against the candidate (B). A present table that lacks its reference is an input error.

*Inputs* absent on disk are not errors (a track may not be built yet): they are recorded as
``absent`` and reported as not measured. Only the project's tracks are read: the lots tracks'
tables when it has a lots reference, each detection set's tables; a project of one track lists
nothing of the other. Problems name the params file read (``where``).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from candor_eval.common.counts import Count, read_counts
from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.rounding import rounded
from candor_eval.common.tables import read_json, read_text
from candor_eval.review.params import StatsParams
from candor_eval.review.stats_file import Comparisons, Presence, StatsFile
from candor_eval.stats.clusters import check_session_clusters
from candor_eval.stats.multiple import family
from candor_eval.stats.outcomes import LOTS_TRACKS, int_cell, parse_tables, table_paths
from candor_eval.stats.paired import compare_paired, holm_adjusted, verdict_of
from candor_eval.stats.power import cluster_discordance, clustered_detectable, power_json
from candor_eval.stats.rates import Rate, interval, min_k0
from candor_eval.stats.ratios import ratio_difference
from candor_eval.stats.records import p6
from candor_eval.stats.units import (
    DETECTION_TABLES,
    ClusterBy,
    Units,
    cluster_totals,
    frame_clusters,
    sessions_across_splits,
    units_from_tables,
)


@dataclass(frozen=True)
class Inputs:
    """What the stats stage read: parsed tables (present ones), metrics documents by file key
    (with the path each came from), and every given path's presence."""

    tables: dict[str, list[dict[str, object]]]
    metrics: dict[str, tuple[str, Any]]
    presence: dict[str, Presence]


def metrics_prefix(path: Path, root: Path) -> str:
    """``metrics/detection/demo-v1.json`` -> ``detection.demo-v1`` (relative to ``root``)."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        rel = Path(path.name)
    return ".".join(rel.with_suffix("").parts)


def references(lots: str | None, detection_sets: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Track -> its reference: ``lots`` (``stats.reference.lots``, resolved by the stage) for
    identification, fields and valuation (``None``: the project has no lots track); for
    ``detection.<set>`` the set's first model (``detector.sets``)."""
    return ({t: lots for t in LOTS_TRACKS if lots is not None}
            | {f"detection.{name}": models[0] for name, models in detection_sets.items()})


def read_inputs(*, outcomes: Path, metrics: Sequence[Path], root: Path, detection_sets: Sequence[str],
                lots: bool = True) -> Inputs:
    """Read the contract tables under ``outcomes`` (the lots tracks' tables when ``lots``, the
    detection tables of each of ``detection_sets``) and every metrics JSON file in ``metrics`` (a
    folder means every ``*.json`` under it, sorted); absent ones are recorded, not errors."""
    presence: dict[str, Presence] = {}
    texts: dict[str, str | None] = {}
    for name in table_paths(detection_sets, lots=lots):
        path = outcomes / name
        texts[name] = read_text(path, expected="an outcome table") if path.is_file() else None
        presence[path.as_posix()] = "absent" if texts[name] is None else "present"
    tables = parse_tables(texts, where=lambda name: (outcomes / name).as_posix())
    docs, found = read_metrics(metrics, root=root)
    return Inputs(tables=tables, metrics=docs, presence=presence | found)


def read_metrics(metrics: Sequence[Path], *, root: Path) -> tuple[dict[str, tuple[str, Any]], dict[str, Presence]]:
    """Every metrics JSON file in ``metrics`` (a folder means every ``*.json`` under it, sorted),
    by file key (:func:`metrics_prefix`) with the path it came from; and each given path's presence."""
    docs: dict[str, tuple[str, Any]] = {}
    presence: dict[str, Presence] = {}
    for p in metrics:
        files = sorted(p.rglob("*.json")) if p.is_dir() else [p] if p.is_file() else []
        presence[p.as_posix()] = "present" if files else "absent"
        for f in files:
            docs[metrics_prefix(f, root)] = (f.as_posix(), read_json(f, expected="a metrics file"))
    return docs, presence


def rate_key(prefix: str, key: str) -> str:
    """A rate's key in ``stats.json`` from its file key and its counts key (module docstring)."""
    own = prefix.rsplit(".", 1)[-1] + "."
    return f"{prefix}.{key[len(own):] if key.startswith(own) else key}"


def rates_from_counts(metrics: Mapping[str, tuple[str, Any]], *, confidence: float) -> dict[str, Rate]:
    """Every counted rate of every metrics document with its Wilson interval, sorted by key (equal
    counts, which the scorers' files repeat, computed once: read counts hold plain ints and strs)."""
    rates = {}
    computed: dict[Count, Rate] = {}
    for prefix, (where, doc) in metrics.items():
        for key, c in read_counts(doc, where=where).items():
            name = rate_key(prefix, key)
            if name in rates:
                raise fail(f"{where}:counts.{key}", "two rates share one stats key", got=name,
                           hint="rename the metrics file or the counts key so every rate has its own key")
            if c not in computed:
                computed[c] = interval(c, confidence=confidence)
            rates[name] = computed[c]
    return dict(sorted(rates.items()))


def paired_stats(units: Mapping[str, Units], refs: Mapping[str, str], *, alpha: float,
                 confidence: float, where: str) -> dict[str, Comparisons]:
    """Metric -> the track's reference (``refs``, :func:`references`) against each other candidate;
    the reference must exist (else an InputError naming the key of the params file ``where``)."""
    out: dict[str, Comparisons] = {}
    problems = []
    for track, by_metric in sorted(units.items()):
        reference = refs.get(track)
        candidates = sorted({c for m in by_metric.values() for c in m.values})
        if candidates and reference not in candidates:
            key = "detector.sets (first model)" if track.startswith("detection.") else "stats.reference.lots"
            problems.append(Problem(f"{where}:{key} ({track})", "reference not in the outcome table",
                                    expected=" or ".join(candidates), got=reference))
            continue
        if reference is None:           # no candidate has outcomes (else the check above): nothing to compare
            continue
        for metric, m in by_metric.items():
            compared = {cand: compare_paired(m.values.get(reference, {}), cases, unit=m.unit, alpha=alpha,
                                             confidence=confidence, kind=m.kind, cluster=m.cluster,
                                             cluster_of=m.cluster_of)
                        for cand, cases in sorted(m.values.items()) if cand != reference}
            if compared:
                out[metric] = Comparisons(reference, compared)
    if problems:
        raise InputError(problems, hint="set stats.reference.lots, or list each set's reference first in "
                                        f"detector.sets, in {where}")
    return out


def adjusted_comparisons(paired: Mapping[str, Comparisons]) -> dict[str, Comparisons]:
    """Each comparison with its family and, per candidate, its Holm-adjusted p within the family
    (the family's metrics for that candidate; :func:`candor_eval.stats.paired.holm_adjusted`), which its
    verdict then reads."""
    adjusted = holm_adjusted({(m, cand): c for m, comp in paired.items() for cand, c in comp.candidates.items()})
    return {m: Comparisons(c.reference, {cand: adjusted[(m, cand)] for cand in c.candidates}, family=family(m))
            for m, c in paired.items()}


LEAK_HINT = "put every frame of a capture session in one split (the set's frames.csv)"


def check_sessions_within_splits(tables: Mapping[str, list[dict[str, object]]], clusters: Mapping[str, ClusterBy],
                                 *, where: Callable[[str], str] = str) -> None:
    """Each capture session of a set clustered by session lies in one split
    (:func:`~candor_eval.stats.units.sessions_across_splits`: a session with dev and test frames is
    leakage): else an InputError naming the per-frame table (``where(name)``: where it was read),
    the session and its frames per split."""
    problems = []
    for name, by in sorted(clusters.items()):
        table = f"{name}/{DETECTION_TABLES[0]}"
        if by != "session":
            continue
        problems += [Problem(where(table), f"session {session!r} lies in two splits: "
                             + "; ".join(f"{split} frames {', '.join(frames[:5])}" + (" ..." if len(frames) > 5 else "")
                                         for split, frames in splits.items()))
                     for session, splits in sessions_across_splits(tables.get(table, [])).items()]
    if problems:
        raise InputError(problems, hint=LEAK_HINT)


def check_sessions(tables: Mapping[str, list[dict[str, object]]], clusters: Mapping[str, ClusterBy], *,
                   alpha: float, where: Callable[[str], str] = str) -> None:
    """A set clustered by session keeps each session in one split (:func:`check_sessions_within_splits`),
    names every frame's session, has its per-frame table wherever it has label outcomes, and has at
    least :func:`~candor_eval.stats.clusters.min_clusters` ``(alpha)`` sessions in each split
    (:func:`~candor_eval.stats.clusters.check_session_clusters`; ``where(name)``: where table
    ``name`` was read)."""
    check_sessions_within_splits(tables, clusters, where=where)
    for name, by in sorted(clusters.items()):
        if by != "session":
            continue
        frames, labels = (f"{name}/{t}" for t in DETECTION_TABLES)
        rows = tables.get(frames)
        check_session_clusters(None if rows is None else ((str(r["frame"]), str(r["session"]), str(r["split"]))
                                                          for r in rows),
                               alpha=alpha, where=where(frames), labels=labels in tables)


def benches(tables: Mapping[str, list[dict[str, object]]], clusters: Mapping[str, ClusterBy]) -> dict[str, dict]:
    """Per detection set and split, what its statistics rest on: its frames, what they cluster in,
    and each capture session's micro TP/FP/FN, precision and recall per model (intervals over
    frames do not cover session-to-session variation; these show it)."""
    out: dict[str, dict] = {}
    for name, by in sorted(clusters.items()):
        rows = tables.get(f"{name}/{DETECTION_TABLES[0]}")
        if rows is None:
            continue
        splits: dict[str, dict] = {}
        for r in rows:
            split = splits.setdefault(str(r["split"]), {"frames": set(), "sessions": {}})
            split["frames"].add(str(r["frame"]))
            acc = split["sessions"].setdefault(str(r["session"]), {}).setdefault(
                str(r["model"]), {"frames": 0, "tp": 0, "fp": 0, "fn": 0})
            acc["frames"] += 1
            for col in ("tp", "fp", "fn"):
                acc[col] += int_cell(r, col)
        for split in splits.values():
            split["frames"] = len(split["frames"])
            for models in split["sessions"].values():
                for acc in models.values():
                    acc["precision"] = rounded(acc["tp"] / (acc["tp"] + acc["fp"])) if acc["tp"] + acc["fp"] else None
                    acc["recall"] = rounded(acc["tp"] / (acc["tp"] + acc["fn"])) if acc["tp"] + acc["fn"] else None
        out[f"detection.{name}"] = {"cluster": by, "splits": {k: splits[k] for k in sorted(splits)}}
    return out


def headline_power(units: Mapping[str, Units], refs: Mapping[str, str], *, alpha: float) -> dict[str, dict]:
    """Headline outcome metric -> candidate -> what the exact sign-flip test over its own clusters
    could have detected (:func:`candor_eval.stats.power.clustered_detectable`, stored by
    :func:`~candor_eval.stats.power.power_json`); the headline metrics are the report's
    (:func:`candor_eval.review.report.headline_metrics`)."""
    from candor_eval.review.report import headline_metrics, track_group

    out: dict[str, dict] = {}
    for track, by_metric in sorted(units.items()):
        reference = refs.get(track)
        wanted = set(headline_metrics(track_group(track)))
        for metric, m in sorted(by_metric.items()):
            if metric not in wanted or m.kind != "outcome" or reference not in m.values:
                continue
            for cand, cases in sorted(m.values.items()):
                if cand == reference:
                    continue
                disc, diffs, n = cluster_discordance(m.values[reference], cases, cluster_of=m.cluster_of)
                if n:
                    out.setdefault(metric, {})[cand] = power_json(clustered_detectable(disc, diffs, n, alpha=alpha))
    return out


def precision_stats(tables: Mapping[str, list[dict[str, object]]], clusters: Mapping[str, ClusterBy],
                    refs: Mapping[str, str], *, alpha: float, confidence: float) -> dict[str, dict]:
    """Per detection set and split, its reference's micro precision against each other model's, paired
    over the frames both were scored on and clustered as the set is (frames, or capture sessions):
    ``a``/``b`` the two precisions, ``diff`` B - A with the interval of the shifts its test does not
    reject at ``1 - confidence``, ``p`` the sign-flip test of the linearised precision difference
    (:func:`candor_eval.stats.ratios.ratio_difference`; unit: detection), ``verdict`` as a paired
    record's (alpha). A test of precision itself: the false-positive count per frame is a separate
    record (``paired``, ``<split>.false_positives``)."""
    out: dict[str, dict] = {}
    for name, by in sorted(clusters.items()):
        rows, reference = tables.get(f"{name}/{DETECTION_TABLES[0]}"), refs.get(f"detection.{name}")
        if rows is None or reference is None:
            continue
        per: dict[str, dict[str, dict[str, Mapping[str, object]]]] = {}     # split -> model -> frame -> row
        for r in rows:
            per.setdefault(str(r["split"]), {}).setdefault(str(r["model"]), {})[str(r["frame"])] = r
        of = frame_clusters(rows, by=by)
        for split, models in sorted(per.items()):
            if reference not in models:
                continue
            record: dict[str, Any] = {"reference": reference, "unit": "detection", "cluster": by, "candidates": {}}
            for cand in sorted(set(models) - {reference}):
                ta, tb = cluster_totals(models[reference], models[cand], of=of, columns=("tp", "fp"))
                pa, pb = ([(tp, tp + fp) for tp, fp in t] for t in (ta, tb))
                res = ratio_difference(pa, pb, level=1.0 - confidence)
                ya, yb = sum(y for _, y in pa), sum(y for _, y in pb)
                verdict = ("no detectable difference" if res.p is None or res.diff is None
                           else verdict_of(res.diff, res.p, alpha=alpha))
                record["candidates"][cand] = {
                    "a": rounded(sum(x for x, _ in pa) / ya) if ya else None,
                    "b": rounded(sum(x for x, _ in pb) / yb) if yb else None,
                    "diff": rounded(res.diff), "diff_lo": rounded(res.lo), "diff_hi": rounded(res.hi),
                    "p": None if res.p is None else p6(res.p), "clusters": len(ta), "verdict": verdict}
            if record["candidates"]:
                out[f"detection.{name}.{split}.precision"] = record
    return out


def build_stats(inputs: Inputs, *, params: StatsParams, refs: Mapping[str, str], where: str) -> StatsFile:
    """The whole of ``stats.json`` from what was read (pure); ``refs`` as :func:`references`;
    ``where``: the params file ``params`` came from (named in errors)."""
    sets = sorted(t.split(".", 1)[1] for t in refs if t.startswith("detection."))
    clusters = {name: params.cluster.detection_of(name) for name in sets}
    check_sessions(inputs.tables, clusters, alpha=params.alpha)
    units = units_from_tables(inputs.tables, clusters=clusters)
    return StatsFile(
        confidence=params.confidence, alpha=params.alpha, min_k0=min_k0(params.alpha),
        reference=dict(refs), inputs=dict(sorted(inputs.presence.items())),
        rates=rates_from_counts(inputs.metrics, confidence=params.confidence),
        paired=adjusted_comparisons(paired_stats(units, refs,
                                                 alpha=params.alpha, confidence=params.confidence,
                                                 where=where)),
        cluster={f"detection.{n}": c for n, c in clusters.items()}
        | ({"fields": params.cluster.fields} if "fields" in refs else {}),
        benches=benches(inputs.tables, clusters),
        power=headline_power(units, refs, alpha=params.alpha),
        precision=precision_stats(inputs.tables, clusters, refs, alpha=params.alpha, confidence=params.confidence),
    )
