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
side ``sum d_g`` favours), else ``no detectable difference`` (a difference not shown, not shown
to be absent); in a family of tests it reads the
Holm-adjusted p (:meth:`Paired.adjusted`), everywhere the same. ``min_k0`` is the smallest split
of clusters all one way that could reach alpha on ``G`` clusters (``None``: none could).

``diff`` is B's rate minus A's (outcomes) or B's mean count per unit minus A's (counts), and
``[diff_lo, diff_hi]`` the interval that agrees with the test: every shift ``delta`` of B - A that
the same sign-flip test does not reject at ``1 - confidence``, applied to the per-cluster
differences on the rate scale ``z_g(delta) = (B_g - A_g) / n - delta * n_g / n`` (``n_g`` the
cluster's units, ``n`` all of them; :func:`candor_eval.stats.signflip.shift_interval`). At
``delta = 0`` that is the test of ``p``, so the interval excludes 0 exactly when ``p <= 1 -
confidence``, the verdict's level (``stats.alpha = 1 - stats.confidence``, the default). In a Holm
family the interval is the inversion at ``(1 - confidence) * p / p_holm``: it excludes 0 exactly
when ``p_holm`` reaches the level, so a record never shows an interval clear of 0 beside "no
detectable difference" (:meth:`Paired.adjusted`). With few clusters no shift within reach may be
rejected: the interval is then ``[-1, 1]`` for outcomes and ``None`` on that side for counts;
``None`` with fewer than 2 clusters. Units present on one side only are not
compared; they are listed by name (``/``-joined unit key).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scipy.special import ndtri, stdtrit

from candor_eval.common.counts import Count, Estimate, clusters_of
from candor_eval.common.rounding import rounded
from candor_eval.stats.multiple import holm_by_family
from candor_eval.stats.rates import Rate, interval, kish_df, min_k0
from candor_eval.stats.records import decoded, p6
from candor_eval.stats.signflip import ShiftTest, shift_interval, shift_test, signflip_p

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
    confidence: float = dataclasses.field(default=0.95, compare=False, repr=False)
    basis: DiffBasis | None = dataclasses.field(default=None, compare=False, repr=False)   # not stored

    @property
    def n(self) -> int:
        """Paired units."""
        return self.a.n

    def adjusted(self, p_holm: float) -> Paired:
        """This comparison in a family: its Holm-adjusted p, the verdict read from it and, when the
        per-cluster differences are at hand, the interval at the level that agrees with it (module
        docstring)."""
        lo, hi = self.diff_lo, self.diff_hi
        if self.basis is not None and lo is not None and p_holm > 0:
            lo, hi = diff_bounds(self.basis, kind=self.kind, p0=self.p,
                                 level=(1.0 - self.confidence) * min(1.0, self.p / p_holm))
        return dataclasses.replace(self, p_holm=p_holm, verdict=verdict_of(self.favour_b, p_holm, alpha=self.alpha),
                                   diff_lo=lo, diff_hi=hi)

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
    B-minus-A difference of a higher-is-better measure), else ``no detectable difference``: a
    difference not shown (which is not a difference shown to be absent)."""
    if p <= alpha and favour_b > 0:
        return "B better"
    if p <= alpha and favour_b < 0:
        return "B worse"
    return "no detectable difference"


def case_name(case: Case) -> str:
    """A case key as one name: its parts joined by ``/`` (``("f1", "0")`` -> ``f1/0``)."""
    return "/".join(case)


@dataclass(frozen=True)
class DiffBasis:
    """What the difference interval is computed from (kept on a fresh record so that a Holm family
    can recompute it at its level; never stored): the shift test of the per-cluster differences,
    the discordant units ``a_only``/``b_only`` of ``n``, the design effect ``deff`` (>= 1), the
    number of clusters and the degrees of freedom ``df`` their sizes leave (:func:`kish_df`)."""

    test: ShiftTest
    a_only: int
    b_only: int
    n: int
    deff: float
    clusters: int
    df: float


@functools.lru_cache(maxsize=256, typed=True)          # pure: the gate and a Holm family ask again (in-process)
def score_interval(a_only: int, b_only: int, n: int, *, deff: float, clusters: int, df: float,
                   level: float) -> tuple[float, float]:
    """Tango's score interval of a paired difference of rates ``(b_only - a_only) / n``, its variance
    multiplied by the design effect ``deff`` and read on Student's t with ``df`` degrees of freedom
    (``min(G - 1, G_K - 1)``, :func:`kish_df`: a few large clusters are worth fewer than their count,
    and a class whose labels sit mostly in a few frames with uneven loss needs the longer bound;
    on the normal quantile when every cluster holds one unit, ``clusters >= n``: then it is
    Tango's interval itself, and with no discordant unit the Wilson bound of 0 of ``n``): every
    ``delta`` with ``|diff - delta| <= t * sqrt(deff * (q_a + q_b - delta**2) / n)``, where ``q_a``,
    ``q_b`` are the restricted maximum-likelihood shares of A-only and B-only units under ``q_b - q_a
    = delta`` (Tango 1998; the variance at the null, not at the estimate, is what keeps
    its upper bound honest when the observed discordance is small).

    >>> [round(x, 4) for x in score_interval(0, 0, 20, deff=1.0, clusters=5, df=4.0, level=0.05)]
    [-0.2782, 0.2782]
    >>> [round(x, 4) for x in score_interval(0, 0, 20, deff=1.0, clusters=20, df=19.0, level=0.05)]   # Wilson of 0/20
    [-0.1611, 0.1611]
    """
    q = float(ndtri(1.0 - level / 2) if clusters >= n else stdtrit(df, 1.0 - level / 2))
    est, rest = (b_only - a_only) / n, n - a_only - b_only

    def z(delta: float) -> float:
        lin = b_only * (1 - delta) + a_only * (1 - 3 * delta) - 2 * rest * delta
        qa = (lin + math.sqrt(max(0.0, lin * lin + 8 * n * a_only * delta * (1 - delta)))) / (4 * n)
        qa = max(qa, -delta, 0.0)
        var = deff * max(2 * qa + delta - delta * delta, 1e-300) / n
        return (est - delta) / math.sqrt(var)

    def side(direction: int) -> float:
        inside, out = est, float(direction)
        if abs(z(out)) <= q:
            return out
        for _ in range(60):
            mid = 0.5 * (inside + out)
            if abs(z(mid)) > q:
                out = mid
            else:
                inside = mid
        return inside

    return side(-1), side(+1)


def diff_bounds(basis: DiffBasis, *, kind: Kind, p0: float, level: float) -> tuple[float | None, float | None]:
    """The ``1 - level`` interval of B - A that agrees with the test (module docstring). Counts: the
    shifts the sign-flip test does not reject (unbounded: ``None`` on a side no shift in reach is
    rejected). Outcomes: the hull of those shifts and :func:`score_interval`, within ``[-1, 1]``, except
    that when the test rejects the side toward 0 is the sign-flip bound, so 0 is inside exactly when
    ``p0 > level``."""
    lo, hi = shift_interval(basis.test, level=level, bound=1.0 if kind == "outcome" else None, p0=p0)
    if kind != "outcome" or lo is None or hi is None or basis.n == 0:
        return lo, hi
    slo, shi = score_interval(basis.a_only, basis.b_only, basis.n, deff=basis.deff, clusters=basis.clusters,
                              df=basis.df, level=level)
    reject, est = p0 <= level, basis.test.estimate
    new_lo = lo if reject and est > 0 else min(lo, slo)
    new_hi = hi if reject and est < 0 else max(hi, shi)
    return max(new_lo, -1.0), min(new_hi, 1.0)


def jackknife_deff(d: list[int], n_g: list[int], *, discordant: int) -> float:
    """The design effect of a paired difference of rates ``sum d_g / sum n_g``: its leave-one-cluster-out
    (jackknife) variance over the variance of the same difference were every unit independent
    (``(discordant / n - diff**2) / n``), at least 1 (clustering never buys precision here); 1 when
    either is 0."""
    total, n, g = sum(d), sum(n_g), len(d)
    naive = (discordant / n - (total / n) ** 2) / n
    if g < 2 or naive <= 0:
        return 1.0
    loo = [(total - x) / (n - m) if n > m else total / n for x, m in zip(d, n_g)]
    mean = math.fsum(loo) / g
    jk = (g - 1) / g * math.fsum((x - mean) ** 2 for x in loo)
    return max(1.0, jk / naive)


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

    p = signflip_p(list(d.values()))
    diff = lo = hi = None
    basis = None
    if n:
        diff = sum(s[1] - s[0] for s in sums.values()) / n
        if len(sums) >= 2:
            raw = [s[1] - s[0] for s in sums.values()]
            sizes = [s[2] for s in sums.values()]
            basis = DiffBasis(shift_test([x / n for x in raw], [m / n for m in sizes]),
                              a_only if kind == "outcome" else 0, b_only if kind == "outcome" else 0, n,
                              jackknife_deff(raw, sizes, discordant=a_only + b_only), len(sums),
                              kish_df(len(sums), n, sum(m * m for m in sizes)))
            lo, hi = diff_bounds(basis, kind=kind, p0=p, level=1.0 - confidence)
    favour_b = sum(d.values())
    return Paired(kind=kind, unit=unit, cluster=name, clusters=len(sums), a=side(0), b=side(1),
                  a_only=a_only, b_only=b_only, a_better=sum(1 for x in d.values() if x < 0),
                  b_better=sum(1 for x in d.values() if x > 0), diff=diff, diff_lo=lo, diff_hi=hi, p=p,
                  alpha=alpha, min_k0=min_k0(alpha, n=len(sums)), verdict=verdict_of(favour_b, p, alpha=alpha),
                  only_in_a=tuple(case_name(c) for c in sorted(set(a) - set(b))),
                  only_in_b=tuple(case_name(c) for c in sorted(set(b) - set(a))), confidence=confidence,
                  basis=basis)


def holm_adjusted(records: Mapping[tuple[str, str], Paired]) -> dict[tuple[str, str], Paired]:
    """Each ``(metric, candidate)`` comparison with its Holm-adjusted p within its family and
    candidate, and the verdict that p gives (:func:`candor_eval.stats.multiple.holm_by_family`); a
    comparison whose metric belongs to no family is returned as it is."""
    adjusted = holm_by_family({key: rec.p for key, rec in records.items()})
    return {key: rec.adjusted(adjusted[key]) if key in adjusted else rec for key, rec in records.items()}
