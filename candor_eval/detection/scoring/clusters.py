"""Cluster sums of the detection rates: how the labels and detections of each rate fall into frames
(or capture sessions), so that its interval is over independent clusters.

Pure: no I/O. The labels and detections of one frame are not independent (one scene, one zoom,
one model state), so every precision, recall, F1 and FP/frame of a metrics block gets, beside
its ``k`` of ``n``, the exact sums over its ``G`` clusters that its cluster-robust interval needs
(:class:`candor_eval.common.counts.Clusters`: ``sum k_g**2``, ``sum k_g n_g``, ``sum n_g**2``;
docs/stats.md, "Rates"). A cluster is a frame (the default) or a capture session (the frame's
``session``), declared by ``stats.cluster``.

Per cluster ``g`` and *view* ``v`` (``micro``, each class, each size band; the zooms are
micro over their frames) the sums need only the cluster's ``tp``, ``fp``, ``fn`` and frame count,
and the products of those four: :data:`PRODUCTS`. With frames as clusters every chunk of whole
frames is reduced to its products at once (memory does not grow with the frames); with sessions
(a few per set) the per-session counts are kept and multiplied at the end. Either way the sums
over a block's frame groups (:class:`~candor_eval.detection.scoring.records.FrameGroups`) are exact
integers, whatever the chunks.

The rates, per cluster ``(tp, fp, fn, frames)``: precision ``k = tp`` of ``n = tp + fp``; recall
``k = tp`` of ``n = tp + fn``; F1 ``k = 2 tp`` of ``n = 2 tp + fp + fn`` (a ratio in [0, 1]); FP per
frame ``k = fp`` of ``n = frames`` (a mean).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from candor_eval.common.counts import Clusters, Count, Estimate

ClusterBy = Literal["frame", "session"]
TP, FP, FN, FRAMES = range(4)
PRODUCTS = tuple((i, j) for i in range(4) for j in range(i, 4))   # the 10 products of (tp, fp, fn, frames)
_INDEX = {p: k for k, p in enumerate(PRODUCTS)}


def _products(y: np.ndarray) -> np.ndarray:
    """``(..., 4)`` per-cluster counts -> ``(..., 10)`` their pairwise products (:data:`PRODUCTS`)."""
    return np.stack([y[..., i] * y[..., j] for i, j in PRODUCTS], axis=-1)


@dataclass
class ClusterTally:
    """Cluster sums of one model's scoring, per frame group and view (module docstring).

    ``by``: what a cluster is; ``n_groups`` frame groups, ``n_views`` views (1 micro + classes +
    bands). For frames: ``sums[g, v, p]`` the summed products and ``held[g, v, r]`` the clusters
    holding a unit of rate ``r`` (precision, recall, F1; FP/frame: every frame). For sessions:
    ``sessions[name]`` the ``(groups, views, 4)`` counts of each session.
    """

    by: ClusterBy
    n_groups: int
    n_views: int
    sums: np.ndarray = field(init=False)
    held: np.ndarray = field(init=False)
    sessions: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sums = np.zeros((self.n_groups, self.n_views, len(PRODUCTS)), np.int64)
        self.held = np.zeros((self.n_groups, self.n_views, 4), np.int64)

    def add(self, per_frame: np.ndarray, *, group: np.ndarray, session: np.ndarray) -> None:
        """Add one chunk: ``per_frame`` ``(F, V, 4)`` each counted frame's ``(tp, fp, fn, 1)`` per view,
        ``group`` ``(F,)`` its frame group, ``session`` ``(F,)`` its capture session."""
        if self.by == "frame":
            self.sums += _grouped(_products(per_frame), group, self.n_groups)
            self.held += _grouped(_held(per_frame), group, self.n_groups)
            return
        for name in np.unique(session).tolist():
            sel = session == name
            acc = self.sessions.setdefault(name, np.zeros((self.n_groups, self.n_views, 4), np.int64))
            acc += _grouped(per_frame[sel], group[sel], self.n_groups)

    def sums_over(self, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sums (V, 10), held (V, 4))`` over the frame groups selected by the boolean ``groups``."""
        if self.by == "frame":
            return self.sums[groups].sum(axis=0), self.held[groups].sum(axis=0)
        if not self.sessions:
            return np.zeros((self.n_views, len(PRODUCTS)), np.int64), np.zeros((self.n_views, 4), np.int64)
        y = np.stack([acc[groups].sum(axis=0) for _, acc in sorted(self.sessions.items())])   # (S, V, 4)
        return _products(y).sum(axis=0), _held(y).sum(axis=0)


def _grouped(x: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Rows of ``x`` ``(F, ...)`` summed by ``group`` -> ``(n_groups, ...)``."""
    out = np.zeros((n_groups, *x.shape[1:]), np.int64)
    np.add.at(out, group, x)
    return out


def _held(y: np.ndarray) -> np.ndarray:
    """Whether each cluster holds a unit of precision, recall, F1 and FP/frame."""
    tp, fp, fn, fr = (y[..., k] for k in range(4))
    return np.stack([(tp + fp) > 0, (tp + fn) > 0, (2 * tp + fp + fn) > 0, fr > 0], axis=-1).astype(np.int64)


def view_counts(sums: np.ndarray, held: np.ndarray, *, v: int, totals: tuple[int, int, int, int],
                name: str) -> dict[str, Count]:
    """The four counts of view ``v`` (``precision``, ``recall``, ``f1``, ``fp_per_frame``) with their
    cluster sums named ``name``, from :meth:`ClusterTally.sums_over` and the view's ``(tp, fp, fn,
    frames)`` totals."""
    s = {p: int(sums[v, k]) for p, k in _INDEX.items()}
    def q(i: int, j: int) -> int:
        return s[(min(i, j), max(i, j))]
    tp, fp, fn, frames = totals
    def lin(a: dict[int, int], b: dict[int, int]) -> int:
        """sum_g (a . y_g)(b . y_g) for integer combinations a, b of (tp, fp, fn, frames)."""
        return sum(ca * cb * q(i, j) for i, ca in a.items() for j, cb in b.items())
    rates: dict[str, tuple[dict[int, int], dict[int, int], int, str, Estimate]]
    rates = {"precision": ({TP: 1}, {TP: 1, FP: 1}, 0, "detection", "rate"),
             "recall": ({TP: 1}, {TP: 1, FN: 1}, 1, "label", "rate"),
             "f1": ({TP: 2}, {TP: 2, FP: 1, FN: 1}, 2, "label+detection", "rate"),
             "fp_per_frame": ({FP: 1}, {FRAMES: 1}, 3, "frame", "mean")}
    out: dict[str, Count] = {}
    for key, (a, b, r, unit, estimate) in rates.items():
        k = sum(c * (tp, fp, fn, frames)[i] for i, c in a.items())
        n = sum(c * (tp, fp, fn, frames)[i] for i, c in b.items())
        out[key] = Count(k=k, n=n, unit=unit, estimate=estimate,
                         clusters=Clusters(name, int(held[v, r]), lin(a, a), lin(a, b), lin(b, b)))
    return out
