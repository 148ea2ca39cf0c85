"""Valuation scoring: how far each lot's estimate is from its human-verified value.

Pure, no I/O. Higher is better for ``in_band_rate``, ``comps_precision`` and
``comps_recall``; closer to 1 is better for ``median_ratio``; lower is better for
``worst_error`` and ``no_estimate``.

Definitions (per lot)
    ratio         estimate / verified value (both > 0, so ratio > 0). None without estimate.
    in band       ``band[0] <= ratio <= band[1]`` (default 0.5..1.5: "roughly right", a
                  coarse band on purpose; docs/valuation.md). A lot without an estimate is *not* in
                  band: an abstention is not a hit, and every lot stays in the denominator
                  so two candidates pair lot for lot (McNemar).
    error         max(ratio, 1/ratio): 2.0 means off by 2x in either direction.
    comps fit     precision = |chosen & relevant| / |chosen|; recall = |chosen & relevant| /
                  |relevant|. None (undefined) when the denominator is empty.

Summary (per candidate)
    lots, estimated, no_estimate, hedged (lots whose chosen answer hedged), in_band,
    in_band_rate = in_band / lots, median_ratio and worst_error over estimated lots (None
    when no lot has an estimate) and the worst lot's id (the first lot id on a tie), comps precision and recall
    micro-averaged (summed counts over lots; None when no comps were chosen / none relevant).

Units: the lot. ``in_band_rate`` is the one rate with a counts entry (an interval); comps
precision and recall count (lot, listing) pairs that cluster by lot and stay descriptive.
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from candor_eval.common.counts import KEY, Count, counts_block
from candor_eval.common.rounding import DECIMALS, rounded
from candor_eval.lots.values import ValueRow


@dataclass(frozen=True)
class LotScore:
    """One lot's valuation outcome for one candidate."""

    lot: str
    estimate: Decimal | None
    verified: Decimal
    ratio: float | None
    in_band: bool
    hedged: bool
    chosen: int
    relevant: int
    fit: int
    comps_precision: float | None
    comps_recall: float | None


@dataclass(frozen=True)
class Summary:
    """Per-candidate valuation figures (module docstring)."""

    lots: int
    estimated: int
    no_estimate: int
    hedged: int
    in_band: int
    in_band_rate: float | None
    median_ratio: float | None
    worst_error: float | None
    worst_lot: str | None
    comps_precision: float | None
    comps_recall: float | None


def value_ratio(verified: Decimal, estimate: Decimal | None) -> float | None:
    """estimate / verified as a float (exact division first), None without an estimate."""
    if estimate is None:
        return None
    if verified <= 0 or estimate <= 0:
        raise ValueError(f"amounts must be positive (verified {verified}, estimate {estimate})")
    return float(Fraction(estimate) / Fraction(verified))


def lot_error(ratio: float) -> float:
    """max(ratio, 1/ratio) for ratio > 0."""
    return max(ratio, 1.0 / ratio)


def in_band(ratio: float | None, *, band: tuple[float, float]) -> bool:
    """True when ``band[0] <= ratio <= band[1]``; False without an estimate."""
    return ratio is not None and band[0] <= ratio <= band[1]


def comps_fit(relevant: Iterable[str], chosen: Iterable[str]) -> tuple[float | None, float | None]:
    """(precision, recall) of ``chosen`` listing ids against the ``relevant`` ones."""
    rel, cho = set(relevant), set(chosen)
    tp = len(rel & cho)
    return (tp / len(cho) if cho else None, tp / len(rel) if rel else None)


def score_lot(lot: str, verified: Decimal, estimate: Decimal | None, *, relevant: Iterable[str],
              chosen: Iterable[str], hedged: bool, band: tuple[float, float]) -> LotScore:
    """Score one lot (truth first: verified value and relevant comps; then the prediction)."""
    rel, cho = set(relevant), set(chosen)
    ratio = value_ratio(verified, estimate)
    precision, recall = comps_fit(rel, cho)
    return LotScore(lot=lot, estimate=estimate, verified=verified, ratio=ratio,
                    in_band=in_band(ratio, band=band), hedged=hedged, chosen=len(cho), relevant=len(rel),
                    fit=len(rel & cho), comps_precision=precision, comps_recall=recall)


def summarise_valuation(scores: Sequence[LotScore]) -> Summary:
    """Per-candidate summary of lot scores (module docstring; empty input gives Nones and zeros)."""
    ratios = [(s.ratio, s.lot) for s in scores if s.ratio is not None]
    worst = min(((-lot_error(r), lot) for r, lot in ratios), default=None)  # largest error, first lot id
    chosen = sum(s.chosen for s in scores)
    relevant = sum(s.relevant for s in scores)
    fit = sum(s.fit for s in scores)
    n_in = sum(s.in_band for s in scores)
    return Summary(
        lots=len(scores), estimated=len(ratios), no_estimate=len(scores) - len(ratios),
        hedged=sum(s.hedged for s in scores), in_band=n_in,
        in_band_rate=n_in / len(scores) if scores else None,
        median_ratio=statistics.median(r for r, _ in ratios) if ratios else None,
        worst_error=-worst[0] if worst else None, worst_lot=worst[1] if worst else None,
        comps_precision=fit / chosen if chosen else None,
        comps_recall=fit / relevant if relevant else None,
    )


def score_values(verified: Mapping[str, Decimal], values: Mapping[str, ValueRow], *,
                 relevance: Mapping[str, set[str]], band: tuple[float, float]) -> list[LotScore]:
    """Score one candidate's values file against every valuation lot (``verified``: lot ->
    human-verified value; ``relevance``: lot -> relevant listing ids), sorted by lot."""
    return [score_lot(lot, verified[lot], values[lot].estimate, relevant=relevance[lot], chosen=values[lot].comps,
                      hedged=values[lot].hedged, band=band) for lot in sorted(verified)]


def fmt(x: float | None) -> str:
    """A ratio or rate as stored in the outcome table: 6 decimals, empty when undefined."""
    return "" if x is None else f"{x:.{DECIMALS}f}"


def summary_json(s: Summary, scores: Sequence[LotScore]) -> tuple[dict[str, Any], dict[str, Count]]:
    """One candidate's entry of ``metrics/valuation.json`` and the counts of its rates (key below
    the candidate: ``in_band_rate``, unit lot). Comps precision and recall are descriptive: their
    (lot, listing) pairs cluster by lot (the listings of one lot share its query), so they are
    not independent units and get no counts entry, hence no interval."""
    tp = sum(x.fit for x in scores)
    fp = sum(x.chosen for x in scores) - tp
    fn = sum(x.relevant for x in scores) - tp
    doc = {
        "lots": s.lots, "estimated": s.estimated, "no_estimate": s.no_estimate, "hedged": s.hedged,
        "in_band": s.in_band, "in_band_rate": rounded(s.in_band_rate), "median_ratio": rounded(s.median_ratio),
        "worst_error": rounded(s.worst_error), "worst_lot": s.worst_lot,
        "comps": {"tp": tp, "fp": fp, "fn": fn, "precision": rounded(s.comps_precision),
                  "recall": rounded(s.comps_recall)},
    }
    counts = {"in_band_rate": Count(k=s.in_band, n=s.lots, unit="lot")}
    return doc, counts


def valuation_json(summaries: Mapping[str, tuple[dict[str, Any], dict[str, Count]]]) -> dict[str, Any]:
    """``metrics/valuation.json``: one entry per candidate (a candidate may not be named
    ``counts``), then the counts block (keys ``<candidate>.in_band_rate``, ...)."""
    if KEY in summaries:
        raise ValueError(f"a candidate may not be named {KEY!r}")
    return {**{cand: doc for cand, (doc, _) in summaries.items()},
            KEY: counts_block({f"{cand}.{key}": c for cand, (_, counts) in summaries.items()
                               for key, c in counts.items()})}


def outcome_rows(candidate: str, scores: Sequence[LotScore]) -> list[tuple[str, ...]]:
    """``valuation.csv`` rows of one candidate (docs/CONVENTIONS.md): in_band/hedged 1/0 (no
    estimate: in_band 0, estimate and ratio empty); an undefined precision/recall is empty."""
    return [(s.lot, candidate, "" if s.estimate is None else str(s.estimate), fmt(s.ratio), str(int(s.in_band)),
             str(int(s.hedged)), fmt(s.comps_precision), fmt(s.comps_recall)) for s in scores]
