"""Paired units: the outcome tables reduced to one success flag per case, candidate and metric.

Pure: no I/O. Rows are the typed rows of :func:`candor_eval.stats.outcomes.parse_table`.
``True`` is the good outcome. The metrics, their unit and what counts as a success
(docs/stats.md, "Paired units"):

- ``identification.hit`` (and ``identification.<tier>.hit``): unit ``lot``; a *strict
  majority* of the lot's runs are hits (2 of 3; with an even number of runs a tie is not a
  majority). Runs of one lot are not independent cases, and run *i* of A has nothing to do
  with run *i* of B, so a lot is one case, and its own cluster.
- ``identification.not_wrong``: unit ``lot``; a strict majority of its runs are not *wrong*
  (wrong answers are the costly failure, docs/lots.md).
- ``identification.count_exact``: unit ``lot`` (with a count label); a strict majority of its
  labelled runs count exactly (runs with no count label are skipped).
- ``fields.majority``: unit ``(case, field)``, one expectation of a case, named by its
  position in the case (a case may repeat a path); ``hits * 2 > total``; a (case, field)
  with ``total = 0`` (every run failed) is not a case and is left out. Clustered by **case**:
  the fields of one case are answered from one image by the same runs.
- ``valuation.in_band``: unit ``lot``; in band (``in_band = 1``); a lot with no estimate
  (empty ``in_band``) is not in band: an abstention is not a success.
- ``detection.<set>.<split>.frame_error_free``: unit ``frame``; ``fp == 0 and fn == 0``.
- ``detection.<set>.<split>.false_positives`` (a *count*, fewer is better): unit ``frame``; the
  frame's false positives at the operating point (the paired precision and FP/frame).
- ``detection.<set>.<split>.error.<kind>`` (counts, fewer is better; a family, Holm): unit ``frame``;
  the frame's false positives of one kind (``fp_localisation``, ``fp_class_confusion``,
  ``fp_duplicate``, ``fp_background``, ``fp_both``) or its aimed and missed false negatives
  (``fn_aimed``, ``fn_missed``), from the optional columns of the per-frame table when present:
  what kind of error changed, paired per frame.
- ``detection.<set>.<split>.label_found`` (and ``detection.<set>.<split>.class.<name>.label_found``):
  unit ``label`` (a (frame, label index)); the label was matched.

Detection units are clustered by **frame** (the labels and detections of one frame share its
scene, zoom and model state), or by capture **session** when the set declares it
(``stats.cluster``; the session of a frame is its ``session`` column in the per-frame table).
Each detection set is its own track (``detection.<set>``): its models are compared only with
each other, on its own frames.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from candor_eval.common.majority import majority_of, strict_majority
from candor_eval.stats.outcomes import FRAME_ERROR_COLUMNS, int_cell
from candor_eval.stats.paired import Case, Kind

Row = Mapping[str, object]
DETECTION_TABLES = ("detection-frames.csv", "detection-labels.csv")


@dataclass(frozen=True)
class PairedMetric:
    """One paired metric: its ``unit``, ``kind`` (``outcome``: 1 = success; ``count``: fewer is
    better), ``values``: candidate -> case -> value (sorted), and how the cases cluster:
    ``cluster`` names the cluster, ``cluster_of`` maps each case to its cluster id (``None``:
    each case is its own cluster)."""

    unit: str
    values: dict[str, dict[Case, int]]
    kind: Kind = "outcome"
    cluster: str | None = None
    cluster_of: dict[Case, str] | None = None


Units = dict[str, PairedMetric]          # metric -> its paired values


def _nest(items: Iterable[tuple[str, str, str, Case, int]], *, kind: Kind = "outcome", cluster: str | None = None,
          cluster_of: Callable[[Case], str] | None = None) -> Units:
    """``(metric, unit, candidate, case, value)`` items -> :data:`Units`, sorted by key, every metric
    of ``kind`` clustered by ``cluster_of`` (case -> cluster id, named ``cluster``)."""
    units: dict[str, str] = {}
    out: dict[str, dict[str, dict[Case, int]]] = defaultdict(lambda: defaultdict(dict))
    for metric, unit, candidate, case, value in items:
        units[metric] = unit
        out[metric][candidate][case] = int(value)
    nested = {}
    for m, by in sorted(out.items()):
        values = {c: dict(sorted(cases.items())) for c, cases in sorted(by.items())}
        of = None if cluster_of is None else {case: cluster_of(case) for cases in values.values() for case in cases}
        nested[m] = PairedMetric(units[m], values, kind, cluster, of)
    return nested


def identification_units(rows: Iterable[Row]) -> Units:
    """Rows ``lot, tier, candidate, run, outcome, count_exact`` -> per-lot majority units."""
    runs: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for r in rows:
        runs[(str(r["candidate"]), str(r["lot"]), str(r["tier"]))].append(r)
    items = []
    for (cand, lot, tier), rs in runs.items():
        hit = majority_of(r["outcome"] == "hit" for r in rs)
        items.append(("identification.hit", "lot", cand, (lot,), hit))
        items.append((f"identification.{tier}.hit", "lot", cand, (lot,), hit))
        not_wrong = majority_of(r["outcome"] != "wrong" for r in rs)
        items.append(("identification.not_wrong", "lot", cand, (lot,), not_wrong))
        counted = [bool(r["count_exact"]) for r in rs if r["count_exact"] is not None]
        if counted:
            items.append(("identification.count_exact", "lot", cand, (lot,), majority_of(counted)))
    return _nest(items)


def fields_units(rows: Iterable[Row]) -> Units:
    """Rows ``case, candidate, position, field, hits, total`` -> per-(case, field) majority units
    (the case key is ``(case, position, field)``), clustered by case."""
    return _nest((("fields.majority", "(case, field)", str(r["candidate"]),
                   (str(r["case"]), str(r["position"]), str(r["field"])),
                   strict_majority(int_cell(r, "hits"), int_cell(r, "total")))
                  for r in rows if int_cell(r, "total") > 0),
                 cluster="case", cluster_of=lambda case: case[0])


def valuation_units(rows: Iterable[Row]) -> Units:
    """Rows ``lot, candidate, in_band, ...`` -> per-lot in-band units (no estimate = not in band)."""
    return _nest(("valuation.in_band", "lot", str(r["candidate"]), (str(r["lot"]),), r["in_band"] is True)
                 for r in rows)


ClusterBy = Literal["frame", "session"]
ERROR_KINDS = tuple(c for c in FRAME_ERROR_COLUMNS if c != "tp_strict")   # the kinds of FP and FN; fewer is better


def sessions_across_splits(frames: Iterable[Row]) -> dict[str, dict[str, list[str]]]:
    """Each capture session holding frames of more than one split -> split -> its frames (sorted,
    each once): the leakage clustering by session exists to expose (docs/stats.md). Rows are
    per-frame rows (``frame``, ``split``, ``session``; one per model); the empty session is none.

    >>> rows = [{"frame": f, "split": sp, "session": s} for f, sp, s in
    ...         [("a", "dev", "s1"), ("b", "test", "s1"), ("c", "test", "s2"), ("d", "dev", ""), ("e", "test", "")]]
    >>> sessions_across_splits(rows)
    {'s1': {'dev': ['a'], 'test': ['b']}}
    """
    by: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in frames:
        if str(r["session"]):
            by[str(r["session"])][str(r["split"])].add(str(r["frame"]))
    return {s: {split: sorted(f) for split, f in sorted(splits.items())}
            for s, splits in sorted(by.items()) if len(splits) > 1}


def frame_clusters(frames: Iterable[Row], *, by: ClusterBy) -> dict[str, str]:
    """Frame -> its cluster id: itself (``frame``) or its capture session (``session``)."""
    return {str(r["frame"]): str(r["frame"] if by == "frame" else r["session"]) for r in frames}


def cluster_totals(a: Mapping[str, Row], b: Mapping[str, Row], *, of: Mapping[str, str],
                   columns: Sequence[str]) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Per cluster, in sorted order, the sums of ``columns`` of each side's per-frame rows (frame -> row)
    over the frames both sides have, each frame in the cluster ``of`` gives it (itself when absent):
    the paired per-cluster counts a ratio difference is tested on.

    >>> rows = {"f1": {"tp": 1, "fp": 2}, "f2": {"tp": 3, "fp": 0}, "f3": {"tp": 5, "fp": 5}}
    >>> cluster_totals(rows, {"f1": {"tp": 0, "fp": 1}, "f2": {"tp": 1, "fp": 1}}, of={"f1": "s", "f2": "s"},
    ...                columns=("tp", "fp"))
    ([(4, 2)], [(1, 2)])
    """
    common = sorted(set(a) & set(b))
    sides = []
    for rows in (a, b):
        acc: dict[str, list[int]] = {}
        for f in common:
            sums = acc.setdefault(of.get(f, f), [0] * len(columns))
            for i, col in enumerate(columns):
                sums[i] += int_cell(rows[f], col)
        sides.append([tuple(acc[k]) for k in sorted(acc)])
    return sides[0], sides[1]


def detection_units(frames: Sequence[Row], labels: Iterable[Row], *, track: str, cluster: ClusterBy = "frame") -> Units:
    """Per-frame error-free and false-positive units and per-label found units, per split (and per
    class for labels), named under ``track`` (``detection.<set>``), clustered by ``cluster``."""
    of_frame = frame_clusters(frames, by=cluster)
    def of(case: Case) -> str:
        return of_frame.get(case[0], case[0])
    flags: list[tuple[str, str, str, Case, int]] = []
    counts: list[tuple[str, str, str, Case, int]] = []
    for r in frames:
        ok = int_cell(r, "fp") == 0 and int_cell(r, "fn") == 0
        flags.append((f"{track}.{r['split']}.frame_error_free", "frame", str(r["model"]), (str(r["frame"]),), ok))
        counts.append((f"{track}.{r['split']}.false_positives", "frame", str(r["model"]), (str(r["frame"]),),
                       int_cell(r, "fp")))
        counts += [(f"{track}.{r['split']}.error.{col}", "frame", str(r["model"]), (str(r["frame"]),),
                    int_cell(r, col)) for col in ERROR_KINDS if col in r]
    for r in labels:
        case = (str(r["frame"]), str(r["label"]))
        found = r["found"] is True
        flags.append((f"{track}.{r['split']}.label_found", "label", str(r["model"]), case, found))
        flags.append((f"{track}.{r['split']}.class.{r['class']}.label_found", "label", str(r["model"]), case, found))
    return _nest(flags, cluster=cluster, cluster_of=of) | _nest(counts, kind="count", cluster=cluster, cluster_of=of)


def units_from_tables(tables: Mapping[str, list[dict[str, object]]], *,
                      clusters: Mapping[str, ClusterBy] | None = None) -> dict[str, Units]:
    """Track -> paired units, from the parsed tables present (table path -> rows, paths as
    :func:`candor_eval.stats.outcomes.table_paths`; an absent table gives no track).

    Tracks: ``identification``, ``fields``, ``valuation``, ``detection.<set>`` (either table of
    the set's folder), the latter clustered by ``clusters[<set>]`` (default ``frame``).
    """
    out: dict[str, Units] = {}
    if "identification.csv" in tables:
        out["identification"] = identification_units(tables["identification.csv"])
    if "fields.csv" in tables:
        out["fields"] = fields_units(tables["fields.csv"])
    if "valuation.csv" in tables:
        out["valuation"] = valuation_units(tables["valuation.csv"])
    suffixes = tuple("/" + t for t in DETECTION_TABLES)
    for d in sorted({path.rsplit("/", 1)[0] for path in tables if path.endswith(suffixes)}):
        out[f"detection.{d}"] = detection_units(tables.get(f"{d}/{DETECTION_TABLES[0]}", []),
                                                tables.get(f"{d}/{DETECTION_TABLES[1]}", []), track=f"detection.{d}",
                                                cluster=(clusters or {}).get(d, "frame"))
    return out
