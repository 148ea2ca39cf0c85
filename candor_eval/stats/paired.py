"""A paired comparison of a reference A and a candidate B on the same units: the one record.

Pure: no I/O. :func:`compare_paired` computes it; :class:`Paired` is what the ``stats`` stage
stores in ``metrics/stats.json`` (``paired``), what ``candor compare --json`` prints
(``rows[].paired``) and what the gate stores per class in ``metrics/gate.json``; one JSON shape
(:meth:`Paired.as_json`) for every kind of comparison.

Definitions (docs/stats.md, "Paired tests"). Each side has, per paired *unit* (a lot, a label, a
(case, field), a frame), either an *outcome* (success or not; higher is better) or a *count*
(e.g. false positives; fewer is better): the ``kind``. Units fall in independent *clusters*
(each lot is its own; the labels of a frame, the fields of a case share one). Per cluster ``g``
the difference ``d_g`` is, for outcomes, B's successes minus A's, for counts A's count minus B's:
positive favours B either way. ``p`` is the exact sign-flip test over the clusters
(:func:`candor_eval.stats.signflip.signflip_p`); with one unit per cluster it is the exact McNemar test
on the discordant units. The verdict is ``B better`` or ``B worse`` when ``p <= alpha`` (the
side ``sum d_g`` favours), else ``no detectable difference``; in a family of tests it reads the
Holm-adjusted p (:meth:`Paired.adjusted`), everywhere the same. ``min_k0`` is the smallest split
of clusters all one way that could reach alpha on ``G`` clusters (``None``: none could).

``diff`` is B's rate minus A's (outcomes) or B's mean count per unit minus A's (counts), with
its cluster-robust interval ``[diff_lo, diff_hi]`` (the ratio ``sum d_g / n`` with
:func:`candor_eval.stats.rates.ratio_variance` and Student's t with ``G - 1`` degrees of freedom;
``None`` with fewer than 2 clusters; for outcomes clipped to ``[-1, 1]``). When every cluster
moved alike (no discordant unit at all, say) that variance is 0, yet the data do not rule out a
difference as large as the share of discordant clusters they allow: the interval is then
``diff -/+`` the Wilson upper bound of 0 of ``G``. Units present on one side only are not
compared; they are listed by name (``/``-joined unit key).
"""
from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scipy.special import stdtrit

from candor_eval.common.counts import Count, Estimate, clusters_of
from candor_eval.common.rounding import rounded
from candor_eval.stats.multiple import holm_by_family
from candor_eval.stats.rates import Rate, interval, min_k0, ratio_variance, wilson
from candor_eval.stats.records import decoded, p6
from candor_eval.stats.signflip import signflip_p

Case = tuple[str, ...]
Kind = Literal["outcome", "count"]
Verdict = Literal["B better", "B worse", "no detectable difference"]
VERDICTS: tuple[Verdict, ...] = ("B better", "B worse", "no detectable difference")
KINDS: tuple[Kind, ...] = ("outcome", "count")


@dataclass(frozen=True)
class Paired:
    """A against B on the ``n`` units both have, in ``clusters`` clusters (module docstring).

    ``a``/``b``: each side's rate (outcomes) or mean count per unit (counts) over the paired units,
    with its cluster-aware interval; ``a_only``/``b_only``: units where only A (only B) succeeded,
    or where A (B) has the smaller count; ``a_better``/``b_better``: clusters whose difference
    favours A (B); ``p``: the sign-flip p; ``p_holm``: the Holm-adjusted p within its family
    (``None``: a single test); ``verdict``: from ``p_holm`` when given, else ``p``.

    Stored as ``{"kind", "unit", "cluster", "clusters", "n", "a", "b", "a_only", "b_only",
    "a_better", "b_better", "diff", "diff_lo", "diff_hi", "p", "p_holm", "alpha", "min_k0",
    "verdict", "explanation", "only_in_a", "only_in_b"}`` (``p`` to 6 significant digits;
    ``explanation`` is written for people and not read back).
    """

    kind: Kind
    unit: str
    cluster: str
    clusters: int
    a: Rate
    b: Rate
    a_only: int
    b_only: int
    a_better: int
    b_better: int
    diff: float | None
    diff_lo: float | None
    diff_hi: float | None
    p: float
    alpha: float
    min_k0: int | None
    verdict: Verdict
    p_holm: float | None = None
    only_in_a: tuple[str, ...] = ()
    only_in_b: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Paired units."""
        return self.a.n

    def adjusted(self, p_holm: float) -> Paired:
        """This comparison in a family: its Holm-adjusted p and the verdict read from it."""
        return dataclasses.replace(self, p_holm=p_holm, verdict=verdict_of(self.favour_b, p_holm, alpha=self.alpha))

    @property
    def favour_b(self) -> float:
        """Positive when the paired units favour B (higher rate, or fewer counts), negative for A."""
        if self.diff is None:
            return 0.0
        return self.diff if self.kind == "outcome" else -self.diff

    @property
    def split(self) -> str:
        """``A only-B only`` units, and the clusters they sit in when units are clustered."""
        units = f"{self.a_only}-{self.b_only} {self.unit}s"
        if self.cluster == self.unit:
            return units
        return f"{units} in {self.a_better}-{self.b_better} of {self.clusters} {self.cluster}s"

    @property
    def explanation(self) -> str:
        """The verdict in words: the difference and its interval, the split, p; when nothing was
        seen, what the bench could have seen."""
        tested = "Holm " if self.p_holm is not None else ""
        p = self.p if self.p_holm is None else self.p_holm
        head = f"{self.verdict}: {fmt_diff(self)}; {self.split}; {tested}p = {p:.3g}"
        if self.verdict != "no detectable difference":
            return head
        if self.min_k0 is None:
            return (f"{head} (not distinguishable from noise; could not have seen anything: even a "
                    f"{self.clusters}-0 split of {self.clusters} {self.cluster}s has p > {self.alpha:g})")
        return (f"{head} (not distinguishable from noise; the smallest split that could reach alpha is "
                f"{self.min_k0}-0 of {self.clusters} {self.cluster}s)")

    def as_json(self) -> dict[str, Any]:
        """The stored form (see the class docstring)."""
        return {"kind": self.kind, "unit": self.unit, "cluster": self.cluster, "clusters": self.clusters,
                "n": self.n, "a": self.a.as_json(), "b": self.b.as_json(), "a_only": self.a_only,
                "b_only": self.b_only, "a_better": self.a_better, "b_better": self.b_better,
                "diff": rounded(self.diff), "diff_lo": rounded(self.diff_lo), "diff_hi": rounded(self.diff_hi),
                "p": p6(self.p), "p_holm": None if self.p_holm is None else p6(self.p_holm), "alpha": self.alpha,
                "min_k0": self.min_k0, "verdict": self.verdict, "explanation": self.explanation,
                "only_in_a": list(self.only_in_a), "only_in_b": list(self.only_in_b)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, where: str) -> Paired:
        """Read :meth:`as_json`'s form back; another shape is an InputError naming ``where``."""
        def build() -> Paired:
            if doc["verdict"] not in VERDICTS or doc["kind"] not in KINDS:
                raise ValueError(f"verdict {doc['verdict']!r}, kind {doc['kind']!r}")
            def opt(key: str) -> float | None:
                return None if doc[key] is None else float(doc[key])
            return cls(kind=doc["kind"], unit=str(doc["unit"]), cluster=str(doc["cluster"]),
                       clusters=int(doc["clusters"]), a=Rate.from_json(doc["a"], where=f"{where}.a"),
                       b=Rate.from_json(doc["b"], where=f"{where}.b"), a_only=int(doc["a_only"]),
                       b_only=int(doc["b_only"]), a_better=int(doc["a_better"]), b_better=int(doc["b_better"]),
                       diff=opt("diff"), diff_lo=opt("diff_lo"), diff_hi=opt("diff_hi"), p=float(doc["p"]),
                       p_holm=opt("p_holm"), alpha=float(doc["alpha"]),
                       min_k0=None if doc["min_k0"] is None else int(doc["min_k0"]), verdict=doc["verdict"],
                       only_in_a=tuple(map(str, doc["only_in_a"])), only_in_b=tuple(map(str, doc["only_in_b"])))
        return decoded(where, "a paired comparison {kind, unit, cluster, a, b, p, ...}", build)


def fmt_diff(r: Paired) -> str:
    """``B - A = +0.021 [-0.032, +0.074] (label rate, clustered by frame)``; ``n/a`` without units."""
    what = f"{r.unit} rate" if r.kind == "outcome" else f"per {r.unit}"
    by = "" if r.cluster == r.unit else f", clustered by {r.cluster}"
    if r.diff is None:
        return f"B - A = n/a ({what})"
    ci = "no interval" if r.diff_lo is None or r.diff_hi is None else f"[{r.diff_lo:+.3f}, {r.diff_hi:+.3f}]"
    return f"B - A = {r.diff:+.3f} {ci} ({what}{by})"


def verdict_of(favour_b: float, p: float, *, alpha: float) -> Verdict:
    """``B better`` / ``B worse`` when ``p`` reaches alpha (the side ``favour_b`` points to: the
    B-minus-A difference of a higher-is-better measure), else no difference."""
    if p <= alpha and favour_b > 0:
        return "B better"
    if p <= alpha and favour_b < 0:
        return "B worse"
    return "no detectable difference"


def case_name(case: Case) -> str:
    """A case key as one name: its parts joined by ``/`` (``("f1", "0")`` -> ``f1/0``)."""
    return "/".join(case)


def diff_interval(d: Mapping[str, tuple[int, int]], *, confidence: float) -> tuple[float | None, float | None,
                                                                                    float | None]:
    """``(diff, lo, hi)`` of the ratio ``sum d_g / sum n_g`` from per-cluster ``(d_g, n_g)``, with its
    cluster-robust t interval (``lo = hi = None`` with fewer than 2 clusters; all ``None`` with no unit)."""
    total, n = sum(x for x, _ in d.values()), sum(m for _, m in d.values())
    if n == 0:
        return None, None, None
    g = len(d)
    if g < 2:
        return total / n, None, None
    var = ratio_variance(total, n, g=g, sum_k2=sum(x * x for x, _ in d.values()),
                         sum_kn=sum(x * m for x, m in d.values()), sum_n2=sum(m * m for _, m in d.values()))
    half = float(stdtrit(g - 1, 0.5 + 0.5 * confidence)) * math.sqrt(var)
    return total / n, total / n - half, total / n + half


def compare_paired(a: Mapping[Case, int], b: Mapping[Case, int], *, unit: str, alpha: float, confidence: float,
                   kind: Kind = "outcome", cluster: str | None = None,
                   cluster_of: Mapping[Case, str] | None = None) -> Paired:
    """Pair A's and B's per-unit values (outcomes: ``True``/``1`` = success; counts: non-negative
    integers, fewer is better) on their common units of ``unit``, clustered by ``cluster_of``
    (unit -> its cluster id, named ``cluster``; ``None``: each unit is its own cluster).

    >>> a = {("f1", "0"): True, ("f1", "1"): True, ("f2", "0"): False}
    >>> b = {("f1", "0"): False, ("f1", "1"): False, ("f2", "0"): True}
    >>> r = compare_paired(a, b, unit="label", alpha=0.05, confidence=0.95, cluster="frame",
    ...                    cluster_of={c: c[0] for c in a})
    >>> (r.a_only, r.b_only, r.a_better, r.b_better, r.clusters, r.p)
    (2, 1, 1, 1, 2, 1.0)
    """
    common = sorted(set(a) & set(b))
    of = case_name if cluster_of is None else cluster_of.__getitem__
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])          # cluster -> [A, B, units]
    a_only = b_only = 0
    for c in common:
        va, vb = int(a[c]), int(b[c])
        s = sums[of(c)]
        s[0], s[1], s[2] = s[0] + va, s[1] + vb, s[2] + 1
        if kind == "outcome":
            a_only, b_only = a_only + (va > vb), b_only + (vb > va)
        else:
            a_only, b_only = a_only + (va < vb), b_only + (vb < va)
    sign = 1 if kind == "outcome" else -1
    d = {g: sign * (s[1] - s[0]) for g, s in sums.items()}              # positive favours B
    n = len(common)
    name = unit if cluster_of is None else (cluster or unit)
    estimate: Estimate = "rate" if kind == "outcome" else "mean"

    def side(i: int) -> Rate:
        clusters = None if cluster_of is None and kind == "outcome" else \
            clusters_of(((s[i], s[2]) for s in sums.values()), name=name)
        return interval(Count(sum(s[i] for s in sums.values()), n, unit, clusters, estimate), confidence=confidence)

    diff, lo, hi = diff_interval({g: (s[1] - s[0], s[2]) for g, s in sums.items()}, confidence=confidence)
    if kind == "outcome" and diff is not None and lo is not None and hi is not None:
        if lo == hi:            # every cluster moved alike: a sample variance of 0 is not certainty
            half = wilson(0, len(sums), confidence=confidence).hi
            assert half is not None         # a Wilson interval always has both bounds
            lo, hi = diff - half, diff + half
        lo, hi = max(lo, -1.0), min(hi, 1.0)            # a difference of two rates
    p = signflip_p(list(d.values()))
    favour_b = sum(d.values())
    return Paired(kind=kind, unit=unit, cluster=name, clusters=len(sums), a=side(0), b=side(1),
                  a_only=a_only, b_only=b_only, a_better=sum(1 for x in d.values() if x < 0),
                  b_better=sum(1 for x in d.values() if x > 0), diff=diff, diff_lo=lo, diff_hi=hi, p=p,
                  alpha=alpha, min_k0=min_k0(alpha, n=len(sums)), verdict=verdict_of(favour_b, p, alpha=alpha),
                  only_in_a=tuple(case_name(c) for c in sorted(set(a) - set(b))),
                  only_in_b=tuple(case_name(c) for c in sorted(set(b) - set(a))))


def holm_adjusted(records: Mapping[tuple[str, str], Paired]) -> dict[tuple[str, str], Paired]:
    """Each ``(metric, candidate)`` comparison with its Holm-adjusted p within its family and
    candidate, and the verdict that p gives (:func:`candor_eval.stats.multiple.holm_by_family`); a
    comparison whose metric belongs to no family is returned as it is."""
    adjusted = holm_by_family({key: rec.p for key, rec in records.items()})
    return {key: rec.adjusted(adjusted[key]) if key in adjusted else rec for key, rec in records.items()}
