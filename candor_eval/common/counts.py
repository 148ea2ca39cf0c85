"""The counts behind every rate a scorer writes: ``k`` of ``n`` units, and how the units cluster.

Every metrics file that holds rates also holds one ``counts`` block at its top level:
``{"<key>": {"k": 12, "n": 18, "unit": "lot"}, ...}``, where ``<key>`` is the dotted path of
the rate in the same file (a list item is named by its name, e.g. ``cases.drill.score``) and
``unit`` names what was counted (a lot, a run, a (case, field), a frame, a label, a
detection). The stats stage reads these blocks and nothing else to find a rate's ``k`` and
``n`` (``docs/stats.md``); it never infers them from key names.

*Clusters.* Units that are not independent (the labels and detections of one frame, the fields
of one case) carry their cluster: ``"cluster"`` names it (``frame``, ``session``, ``case``) and
four exact integers over the ``G`` clusters that hold at least one unit give the interval its
cluster-robust variance: ``"clusters": G``, ``"sum_k2": sum_g k_g**2``, ``"sum_kn": sum_g k_g
n_g``, ``"sum_n2": sum_g n_g**2`` (:class:`Clusters`). An entry without them counts independent
units: each unit is its own cluster.

*Estimate.* ``k / n`` is a proportion (``k <= n``) unless the entry says ``"estimate": "mean"``:
then ``k`` is a total over ``n`` units that may exceed ``n`` (false positives per frame).

Example:

>>> counts_block({"all.micro.recall": Count(k=3, n=4, unit="label")})
{'all.micro.recall': {'k': 3, 'n': 4, 'unit': 'label'}}
>>> clusters_of([(2, 3), (1, 1), (0, 0)], name="frame")
Clusters(name='frame', g=2, sum_k2=5, sum_kn=7, sum_n2=10)
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from candor_eval.common.errors import InputError, Problem

KEY = "counts"
MAX_COUNT = 2 ** 53     # k and n are exact below it as float64 too (and so in every statistic)


CLUSTER_KEYS = ("cluster", "clusters", "sum_k2", "sum_kn", "sum_n2")
Estimate = Literal["rate", "mean"]


@dataclass(frozen=True)
class Clusters:
    """How the ``n`` units of a count fall into clusters: the cluster's ``name`` and, over the ``g``
    clusters holding at least one unit, ``sum_k2 = sum k_g**2``, ``sum_kn = sum k_g n_g`` and
    ``sum_n2 = sum n_g**2`` (exact integers)."""

    name: str
    g: int
    sum_k2: int
    sum_kn: int
    sum_n2: int

    def consistent_with(self, k: int, n: int, estimate: Estimate) -> bool:
        """Whether some clustering of ``k`` of ``n`` units could give these sums (necessary conditions:
        ``G`` clusters of at least one unit each, and ``k_g <= n_g`` for a proportion)."""
        if not self.name or min(self.g, self.sum_k2, self.sum_kn, self.sum_n2) < 0:
            return False
        if n == 0:
            return self.g == self.sum_k2 == self.sum_kn == self.sum_n2 == 0
        sums_ok = self.g <= n <= self.sum_n2 <= n * n and self.g >= 1 and self.sum_kn <= k * n
        sums_ok &= self.g * self.sum_n2 >= n * n and self.g * self.sum_k2 >= k * k
        return sums_ok and (estimate == "mean" or k <= self.sum_k2 <= self.sum_kn <= self.sum_n2)

    def as_json(self) -> dict[str, Any]:
        return {"cluster": self.name, "clusters": self.g, "sum_k2": self.sum_k2, "sum_kn": self.sum_kn,
                "sum_n2": self.sum_n2}


def clusters_of(per_cluster: Iterable[tuple[int, int]], *, name: str) -> Clusters:
    """The :class:`Clusters` of per-cluster ``(k_g, n_g)`` pairs (clusters with ``n_g = 0`` hold no
    unit and are not counted)."""
    g = k2 = kn = n2 = 0
    for k, n in per_cluster:
        if n > 0:
            g, k2, kn, n2 = g + 1, k2 + k * k, kn + k * n, n2 + n * n
    return Clusters(name=name, g=g, sum_k2=k2, sum_kn=kn, sum_n2=n2)


@dataclass(frozen=True)
class Count:
    """``k`` of ``n`` units (``0 <= k <= n < MAX_COUNT``; a ``mean`` may have ``k > n``); the rate is
    ``k / n`` (undefined when ``n == 0``); ``clusters``: how the units cluster (``None``: each unit
    is its own cluster)."""

    k: int
    n: int
    unit: str
    clusters: Clusters | None = None
    estimate: Estimate = "rate"

    def __post_init__(self) -> None:
        proportion = self.estimate == "mean" or self.k <= self.n
        if not (0 <= self.k < MAX_COUNT and 0 <= self.n < MAX_COUNT) or not proportion or not self.unit:
            raise ValueError(f"not a count: k={self.k}, n={self.n}, unit={self.unit!r}")
        if self.estimate not in ("rate", "mean"):
            raise ValueError(f"estimate must be rate or mean, got {self.estimate!r}")
        if self.estimate == "mean" and self.clusters is None:
            raise ValueError("a mean needs its cluster sums (its units' counts vary)")
        if self.clusters is not None and not self.clusters.consistent_with(self.k, self.n, self.estimate):
            raise ValueError(f"cluster sums {self.clusters} cannot come from k={self.k} of n={self.n}")

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"k": self.k, "n": self.n, "unit": self.unit}
        if self.estimate != "rate":
            out["estimate"] = self.estimate
        return out | ({} if self.clusters is None else self.clusters.as_json())


def counts_block(counts: Mapping[str, Count]) -> dict[str, dict[str, Any]]:
    """The JSON of a metrics file's ``counts`` block, in the given key order."""
    return {key: c.as_json() for key, c in counts.items()}


def read_counts(doc: Any, *, where: str) -> dict[str, Count]:
    """The ``counts`` block of a metrics document (empty when it has none); a malformed entry
    is an InputError naming the file and key."""
    block = doc.get(KEY, {}) if isinstance(doc, Mapping) else {}
    if not isinstance(block, Mapping):
        raise InputError(Problem(f"{where}:{KEY}", "not a mapping", expected='{"<key>": {"k", "n", "unit"}}'))
    out: dict[str, Count] = {}
    problems = []
    for key, entry in block.items():
        try:
            out[key] = _count(entry)
        except ValueError:
            problems.append(Problem(f"{where}:{KEY}.{key}", "bad count",
                                    expected="{k, n, unit} with integers 0 <= k <= n < 2**53 and a unit name, "
                                             "optionally estimate and the cluster sums {" + ", ".join(CLUSTER_KEYS) +
                                             "} of one clustering",
                                    got=repr(entry)[:200]))
    if problems:
        raise InputError(problems)
    return out


def _int(v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError
    return v


def _count(entry: object) -> Count:
    """One counts entry, or ValueError."""
    if not isinstance(entry, Mapping):
        raise ValueError
    keys = set(entry) - {"estimate"}
    if keys not in ({"k", "n", "unit"}, {"k", "n", "unit", *CLUSTER_KEYS}):
        raise ValueError
    if not isinstance(entry["unit"], str) or entry.get("estimate", "rate") not in ("rate", "mean"):
        raise ValueError
    clusters = None
    if "cluster" in entry:
        if not isinstance(entry["cluster"], str):
            raise ValueError
        clusters = Clusters(entry["cluster"], *(_int(entry[x]) for x in CLUSTER_KEYS[1:]))
    return Count(k=_int(entry["k"]), n=_int(entry["n"]), unit=entry["unit"], clusters=clusters,
                 estimate=entry.get("estimate", "rate"))
