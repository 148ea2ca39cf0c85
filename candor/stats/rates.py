"""Rates with Wilson intervals, exact McNemar on paired outcomes, and the paired units.

Pure: no I/O, no printing. Everything here exists once; the ``stats`` stage, the
``compare`` command and the release ``gate`` are views of these functions.

Definitions
-----------
*Rate*: ``k / n`` successes over cases, higher or lower is better depending on the
metric (a hit rate is higher-better, a wrong rate lower-better; this module does not
care). Its *Wilson interval* is SciPy's score interval,
``binomtest(k, n).proportion_ci(confidence_level, method="wilson")``.
Policy for ``n = 0``: no rate (``None``) and the interval ``[0, 1]`` - nothing was
measured, so every rate is compatible with it.

*Paired comparison* of a reference A and a candidate B on the same cases, each case a
success or not for each side: ``a_only`` = cases where A succeeded and B did not,
``b_only`` = the reverse. Concordant cases carry no information about which is better.
The exact two-sided McNemar p-value is the two-sided binomial test of
``min(a_only, b_only)`` successes in ``a_only + b_only`` trials at 0.5
(``scipy.stats.binomtest``), which for p = 0.5 equals
``min(1, 2 * sum_{i <= min} C(d, i) / 2**d)``. Policy: zero discordant pairs gives
``p = 1`` (no evidence either way).

*Reaching alpha* means ``p <= alpha``. The *smallest k-0 split* is the least number of
discordant cases, all in one direction, whose p-value reaches alpha: a k-0 split has
``p = 2 ** (1 - k)``, so at alpha = 0.05 it is 6 (p = 0.03125; 5-0 gives 0.0625). On a
bench of ``n`` paired cases it is ``None`` when even ``n``-0 cannot reach alpha. It is
what the bench *could* have detected: a true difference smaller than that many cases
flipping one way is invisible to it.

Paired units (one boolean per case and side; ``True`` is the good outcome)
-------------------------------------------------------------------------
- ``identification.hit``: unit = lot. Runs of the same lot are not independent cases
  (and run *i* of A has nothing to do with run *i* of B), so the runs of a lot are
  reduced to one outcome: a *strict majority* of its runs are hits (2 of 3; with an even
  number of runs a tie is not a majority). Also per tier (``identification.<tier>.hit``)
  and ``identification.not_wrong`` (a strict majority of runs are not *wrong*: wrong
  answers are the costly failure, seed 000).
- ``identification.count_exact``: unit = lot with a count label; strict majority of its
  runs count exactly (runs with no count label are skipped).
- ``fields.majority``: unit = (case, field); strict majority of its runs right
  (``hits * 2 > total``); a (case, field) with ``total = 0`` (every run failed) is not a
  case and is left out.
- ``valuation.in_band``: unit = lot; in band (``in_band = 1``). A lot with no estimate
  (empty ``in_band``) is not in band: an abstention is not a success.
- ``detection.<split>.frame_error_free``: unit = frame; ``fp == 0 and fn == 0``.
- ``detection.<split>.label_found``: unit = (frame, label index); the label was matched.
  Also per class: ``detection.<split>.class.<name>.label_found``.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from scipy.stats import binomtest

Case = tuple[str, ...]
Verdict = Literal["B better", "B worse", "no detectable difference"]
CONFIDENCE = 0.95          # the default confidence level of every interval (params.yaml: stats.confidence)


# ---------------------------------------------------------------------------------------
# Wilson interval


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n`` with its Wilson interval ``[lo, hi]`` at ``confidence``."""

    k: int
    n: int
    rate: float | None
    lo: float
    hi: float
    confidence: float


def _check_counts(k: int, n: int) -> None:
    if isinstance(k, bool) or isinstance(n, bool) or not isinstance(k, int) or not isinstance(n, int):
        raise TypeError(f"k and n must be integers, got {k!r}, {n!r}")
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")


def _check_level(level: float, name: str) -> None:
    if not (0.0 < float(level) < 1.0):
        raise ValueError(f"{name} must be strictly between 0 and 1, got {level!r}")


def wilson(k: int, n: int, *, confidence: float = CONFIDENCE) -> Rate:
    """Wilson score interval of ``k`` successes in ``n`` cases (SciPy's implementation).

    ``n = 0``: ``rate = None``, interval ``[0, 1]``. Example: ``wilson(15, 17)`` gives
    rate 0.882, interval about (0.657, 0.967).
    """
    _check_counts(k, n)
    _check_level(confidence, "confidence")
    if n == 0:
        return Rate(k=0, n=0, rate=None, lo=0.0, hi=1.0, confidence=confidence)
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    lo = min(max(float(ci.low), 0.0), k / n)
    hi = max(min(float(ci.high), 1.0), k / n)
    return Rate(k=k, n=n, rate=k / n, lo=lo, hi=hi, confidence=confidence)


# ---------------------------------------------------------------------------------------
# McNemar


def mcnemar_p(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts; ``1.0`` when both are 0.

    Symmetric in its arguments. Seed 000: 3-0 gives 0.25, 5-1 gives 0.21875, 6-0 gives
    0.03125.
    """
    for name, v in (("a_only", a_only), ("b_only", b_only)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    d = a_only + b_only
    if d == 0:
        return 1.0
    return min(1.0, float(binomtest(min(a_only, b_only), d, 0.5).pvalue))


def min_k0(alpha: float, *, n: int | None = None) -> int | None:
    """Smallest ``k`` such that a k-0 split has ``p <= alpha``; ``None`` if ``k > n``.

    ``n`` is the number of paired cases on the bench (``None``: unbounded).
    """
    _check_level(alpha, "alpha")
    # p(k-0) = 2**(1-k) <= alpha  <=>  k >= 1 - log2(alpha); check neighbours for float safety
    k = max(1, math.ceil(1.0 - math.log2(alpha)) - 1)
    while mcnemar_p(k, 0) > alpha:
        k += 1
    while k > 1 and mcnemar_p(k - 1, 0) <= alpha:
        k -= 1
    if n is not None and k > n:
        return None
    return k


def min_split(discordant: int, alpha: float) -> tuple[int, int] | None:
    """Most balanced split ``(major, minor)`` of ``discordant`` cases whose p reaches alpha.

    E.g. 10 discordant cases at alpha 0.05 need at least a 9-1 split (8-2 gives 0.109).
    ``None`` when even ``discordant``-0 does not reach alpha.
    """
    _check_level(alpha, "alpha")
    if discordant < 0:
        raise ValueError(f"discordant must be >= 0, got {discordant}")
    best: tuple[int, int] | None = None
    for minor in range(0, discordant // 2 + 1):
        if mcnemar_p(discordant - minor, minor) <= alpha:
            best = (discordant - minor, minor)
        else:
            break
    return best


# ---------------------------------------------------------------------------------------
# Paired comparison


@dataclass(frozen=True)
class Paired:
    """Reference A against candidate B on the cases both have.

    ``a``/``b``: each side's rate over the paired cases; ``both``/``neither``: concordant
    counts; ``a_only``/``b_only``: discordant counts; ``p``: exact McNemar; ``min_k0``:
    smallest k-0 split reaching ``alpha`` at ``n`` paired cases (``None``: unreachable);
    ``only_in_a``/``only_in_b``: cases present on one side only (not compared).
    """

    n: int
    a: Rate
    b: Rate
    both: int
    neither: int
    a_only: int
    b_only: int
    p: float
    alpha: float
    min_k0: int | None
    verdict: Verdict
    only_in_a: tuple[Case, ...] = field(default=())
    only_in_b: tuple[Case, ...] = field(default=())

    @property
    def explanation(self) -> str:
        """The verdict in words, with what the bench could have seen when it saw nothing."""
        if self.verdict != "no detectable difference":
            return self.verdict
        if self.min_k0 is None:
            return (f"no detectable difference (could not have seen anything: even a "
                    f"{self.n}-0 split of {self.n} case{'s' if self.n != 1 else ''} has p > {self.alpha:g})")
        points = round(100.0 * self.min_k0 / self.n)
        return (f"no detectable difference (could not have seen less than a "
                f"{self.min_k0}-0 split: {self.min_k0} of {self.n} cases, "
                f"{points} percentage point{'s' if points != 1 else ''})")


def verdict(a_only: int, b_only: int, *, alpha: float) -> Verdict:
    """``B better`` / ``B worse`` when the exact McNemar p reaches alpha, else no difference."""
    p = mcnemar_p(a_only, b_only)
    if p <= alpha and b_only > a_only:
        return "B better"
    if p <= alpha and a_only > b_only:
        return "B worse"
    return "no detectable difference"


def compare_paired(a: Mapping[Case, bool], b: Mapping[Case, bool], *, alpha: float,
                   confidence: float) -> Paired:
    """Pair A's and B's per-case outcomes on their common cases (``True`` = success).

    Cases in only one mapping are listed (sorted) in ``only_in_a`` / ``only_in_b``
    and not compared.
    """
    common = sorted(set(a) & set(b))
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for case in common:
        counts[(bool(a[case]), bool(b[case]))] += 1
    a_only, b_only = counts[(True, False)], counts[(False, True)]
    n = len(common)
    return Paired(
        n=n,
        a=wilson(counts[(True, True)] + a_only, n, confidence=confidence),
        b=wilson(counts[(True, True)] + b_only, n, confidence=confidence),
        both=counts[(True, True)], neither=counts[(False, False)],
        a_only=a_only, b_only=b_only, p=mcnemar_p(a_only, b_only), alpha=alpha,
        min_k0=min_k0(alpha, n=n), verdict=verdict(a_only, b_only, alpha=alpha),
        only_in_a=tuple(sorted(set(a) - set(b))), only_in_b=tuple(sorted(set(b) - set(a))),
    )


# ---------------------------------------------------------------------------------------
# Paired units from the outcome tables (typed rows; validated by the caller)

# metric -> candidate -> case -> success
Units = dict[str, dict[str, dict[Case, bool]]]


def _majority(flags: Iterable[bool]) -> bool:
    flags = list(flags)
    return 2 * sum(flags) > len(flags)


def _nest(items: Iterable[tuple[str, str, Case, bool]]) -> Units:
    out: Units = defaultdict(lambda: defaultdict(dict))
    for metric, candidate, case, ok in items:
        out[metric][candidate][case] = ok
    return {m: {c: dict(sorted(cases.items())) for c, cases in sorted(by.items())}
            for m, by in sorted(out.items())}


def identification_units(rows: Iterable[Mapping[str, object]]) -> Units:
    """Rows ``lot, tier, candidate, run, outcome, count_exact`` -> per-lot majority units.

    ``outcome`` in {hit, abstain, wrong}; ``count_exact`` 1/0 or ``None`` (no count label).
    """
    runs: dict[tuple[str, str, str], list[Mapping[str, object]]] = defaultdict(list)
    for r in rows:
        runs[(str(r["candidate"]), str(r["lot"]), str(r["tier"]))].append(r)
    items = []
    for (cand, lot, tier), rs in runs.items():
        hit = _majority(r["outcome"] == "hit" for r in rs)
        items.append(("identification.hit", cand, (lot,), hit))
        items.append((f"identification.{tier}.hit", cand, (lot,), hit))
        items.append(("identification.not_wrong", cand, (lot,), _majority(r["outcome"] != "wrong" for r in rs)))
        counted = [bool(r["count_exact"]) for r in rs if r["count_exact"] is not None]
        if counted:
            items.append(("identification.count_exact", cand, (lot,), _majority(counted)))
    return _nest(items)


def fields_units(rows: Iterable[Mapping[str, object]]) -> Units:
    """Rows ``case, candidate, field, hits, total`` -> per-(case, field) majority units."""
    items = []
    for r in rows:
        hits, total = int(r["hits"]), int(r["total"])  # type: ignore[call-overload]
        if total > 0:
            items.append(("fields.majority", str(r["candidate"]), (str(r["case"]), str(r["field"])),
                          2 * hits > total))
    return _nest(items)


def valuation_units(rows: Iterable[Mapping[str, object]]) -> Units:
    """Rows ``lot, candidate, in_band, ...`` -> per-lot in-band units (no estimate = not in band)."""
    return _nest(("valuation.in_band", str(r["candidate"]), (str(r["lot"]),), r["in_band"] is True)
                 for r in rows)


def detection_units(frames: Iterable[Mapping[str, object]],
                    labels: Iterable[Mapping[str, object]]) -> Units:
    """Per-frame error-free and per-label found units, per split (and per class for labels).

    ``frames``: rows ``frame, split, session, zoom, model, tp, fp, fn``;
    ``labels``: rows ``frame, split, label, class, model, found`` (found True/False).
    """
    items = []
    for r in frames:
        ok = int(r["fp"]) == 0 and int(r["fn"]) == 0  # type: ignore[call-overload]
        items.append((f"detection.{r['split']}.frame_error_free", str(r["model"]), (str(r["frame"]),), ok))
    for r in labels:
        case = (str(r["frame"]), str(r["label"]))
        found = r["found"] is True
        items.append((f"detection.{r['split']}.label_found", str(r["model"]), case, found))
        items.append((f"detection.{r['split']}.class.{r['class']}.label_found", str(r["model"]), case, found))
    return _nest(items)
