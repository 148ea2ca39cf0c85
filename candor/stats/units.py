"""Paired units: the outcome tables reduced to one success flag per case, candidate and metric.

Pure: no I/O. Rows are the typed rows of :func:`candor.stats.outcomes.parse_table`.
``True`` is the good outcome. The metrics, their unit and what counts as a success
(docs/stats.md, "Paired units"):

- ``identification.hit`` (and ``identification.<tier>.hit``): unit ``lot``; a *strict
  majority* of the lot's runs are hits (2 of 3; with an even number of runs a tie is not a
  majority). Runs of one lot are not independent cases, and run *i* of A has nothing to do
  with run *i* of B, so a lot is one case.
- ``identification.not_wrong``: unit ``lot``; a strict majority of its runs are not *wrong*
  (wrong answers are the costly failure, docs/lots.md).
- ``identification.count_exact``: unit ``lot`` (with a count label); a strict majority of its
  labelled runs count exactly (runs with no count label are skipped).
- ``fields.majority``: unit ``(case, field)``, one expectation of a case, named by its
  position in the case (a case may repeat a path); ``hits * 2 > total``; a (case, field)
  with ``total = 0`` (every run failed) is not a case and is left out.
- ``valuation.in_band``: unit ``lot``; in band (``in_band = 1``); a lot with no estimate
  (empty ``in_band``) is not in band: an abstention is not a success.
- ``detection.<set>.<split>.frame_error_free``: unit ``frame``; ``fp == 0 and fn == 0``.
- ``detection.<set>.<split>.false_positives`` (a count, fewer is better; :mod:`candor.stats.paired_counts`):
  unit ``frame``; the frame's false positives at the operating point (the paired precision).
- ``detection.<set>.<split>.label_found`` (and ``detection.<set>.<split>.class.<name>.label_found``):
  unit ``label`` (a (frame, label index)); the label was matched. Each detection set is its own
  track (``detection.<set>``): its models are compared only with each other, on its own frames.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from candor.stats.paired import Case

Row = Mapping[str, object]
DETECTION_TABLES = ("detection-frames.csv", "detection-labels.csv")


@dataclass(frozen=True)
class PairedMetric:
    """One paired metric: its ``unit`` and ``outcomes``: candidate -> case -> success (sorted)."""

    unit: str
    outcomes: dict[str, dict[Case, bool]]


Units = dict[str, PairedMetric]          # metric -> its paired outcomes


@dataclass(frozen=True)
class CountMetric:
    """One paired count metric (fewer is better): its ``unit`` and ``counts``: candidate -> case -> count."""

    unit: str
    counts: dict[str, dict[Case, int]]


CountUnits = dict[str, CountMetric]      # metric -> its paired counts


def _majority(flags: Iterable[bool]) -> bool:
    flags = list(flags)
    return 2 * sum(flags) > len(flags)


def _nest(items: Iterable[tuple[str, str, str, Case, bool]]) -> Units:
    """``(metric, unit, candidate, case, success)`` items -> :data:`Units`, sorted by key."""
    units: dict[str, str] = {}
    out: dict[str, dict[str, dict[Case, bool]]] = defaultdict(lambda: defaultdict(dict))
    for metric, unit, candidate, case, ok in items:
        units[metric] = unit
        out[metric][candidate][case] = ok
    return {m: PairedMetric(units[m], {c: dict(sorted(cases.items())) for c, cases in sorted(by.items())})
            for m, by in sorted(out.items())}


def identification_units(rows: Iterable[Row]) -> Units:
    """Rows ``lot, tier, candidate, run, outcome, count_exact`` -> per-lot majority units."""
    runs: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for r in rows:
        runs[(str(r["candidate"]), str(r["lot"]), str(r["tier"]))].append(r)
    items = []
    for (cand, lot, tier), rs in runs.items():
        hit = _majority(r["outcome"] == "hit" for r in rs)
        items.append(("identification.hit", "lot", cand, (lot,), hit))
        items.append((f"identification.{tier}.hit", "lot", cand, (lot,), hit))
        items.append(("identification.not_wrong", "lot", cand, (lot,), _majority(r["outcome"] != "wrong" for r in rs)))
        counted = [bool(r["count_exact"]) for r in rs if r["count_exact"] is not None]
        if counted:
            items.append(("identification.count_exact", "lot", cand, (lot,), _majority(counted)))
    return _nest(items)


def fields_units(rows: Iterable[Row]) -> Units:
    """Rows ``case, candidate, position, field, hits, total`` -> per-(case, field) majority units
    (the case key is ``(case, position, field)``)."""
    return _nest(("fields.majority", "(case, field)", str(r["candidate"]),
                  (str(r["case"]), str(r["position"]), str(r["field"])),
                  2 * int(r["hits"]) > int(r["total"]))  # type: ignore[call-overload]
                 for r in rows if int(r["total"]) > 0)  # type: ignore[call-overload]


def valuation_units(rows: Iterable[Row]) -> Units:
    """Rows ``lot, candidate, in_band, ...`` -> per-lot in-band units (no estimate = not in band)."""
    return _nest(("valuation.in_band", "lot", str(r["candidate"]), (str(r["lot"]),), r["in_band"] is True)
                 for r in rows)


def detection_units(frames: Iterable[Row], labels: Iterable[Row], *, track: str) -> Units:
    """Per-frame error-free and per-label found units, per split (and per class for labels), named
    under ``track`` (``detection.<set>``)."""
    items = []
    for r in frames:
        ok = int(r["fp"]) == 0 and int(r["fn"]) == 0  # type: ignore[call-overload]
        items.append((f"{track}.{r['split']}.frame_error_free", "frame", str(r["model"]), (str(r["frame"]),), ok))
    for r in labels:
        case = (str(r["frame"]), str(r["label"]))
        found = r["found"] is True
        items.append((f"{track}.{r['split']}.label_found", "label", str(r["model"]), case, found))
        items.append((f"{track}.{r['split']}.class.{r['class']}.label_found", "label", str(r["model"]), case, found))
    return _nest(items)


def units_from_tables(tables: Mapping[str, list[dict[str, object]]]) -> dict[str, Units]:
    """Track -> paired units, from the parsed tables present (table path -> rows, paths as
    :func:`candor.stats.outcomes.table_paths`; an absent table gives no track).

    Tracks: ``identification``, ``fields``, ``valuation``, ``detection.<set>`` (either table of
    the set's folder).
    """
    out: dict[str, Units] = {}
    if "identification.csv" in tables:
        out["identification"] = identification_units(tables["identification.csv"])
    if "fields.csv" in tables:
        out["fields"] = fields_units(tables["fields.csv"])
    if "valuation.csv" in tables:
        out["valuation"] = valuation_units(tables["valuation.csv"])
    for d in sorted({path.rsplit("/", 1)[0] for path in tables if path.endswith(tuple("/" + t for t in DETECTION_TABLES))}):
        out[f"detection.{d}"] = detection_units(tables.get(f"{d}/{DETECTION_TABLES[0]}", []),
                                                tables.get(f"{d}/{DETECTION_TABLES[1]}", []), track=f"detection.{d}")
    return out


def detection_count_units(frames: Iterable[Row], *, track: str) -> CountUnits:
    """Per-frame false-positive counts, per split, named under ``track`` (``detection.<set>``)."""
    out: dict[str, dict[str, dict[Case, int]]] = defaultdict(lambda: defaultdict(dict))
    for r in frames:
        out[f"{track}.{r['split']}.false_positives"][str(r["model"])][(str(r["frame"]),)] = int(r["fp"])  # type: ignore[call-overload]
    return {m: CountMetric("frame", {c: dict(sorted(cases.items())) for c, cases in sorted(by.items())})
            for m, by in sorted(out.items())}


def count_units_from_tables(tables: Mapping[str, list[dict[str, object]]]) -> dict[str, CountUnits]:
    """Track -> paired count units (``detection.<set>``, from each set's ``detection-frames.csv``)."""
    suffix = "/" + DETECTION_TABLES[0]
    return {f"detection.{path[:-len(suffix)]}": detection_count_units(rows, track=f"detection.{path[:-len(suffix)]}")
            for path, rows in sorted(tables.items()) if path.endswith(suffix)}
