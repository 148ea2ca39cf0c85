"""Coverage of candor's clustered intervals: a seeded simulation grid (docs/stats.md, "Rates").

Each cell draws ``--reps`` benches from a known clustered process, computes the 95% interval of the
rate exactly as the stats stage does (:func:`candor_eval.stats.rates.interval`, from the same
per-cluster sums) and counts how often it contains the true rate. Four blocks:

- ``frames/rate``: a proportion over labels clustered in ``G`` frames (8, 16, 32); frame sizes
  *demo*-shaped (1 + Poisson(18): about 19 labels a frame) or *class*-shaped (1 + geometric with
  mean 9: a class with few labels in most frames and many in some); the frame's success probability
  Beta with mean ``p`` (0.05, 0.2, 0.5, 0.8) and intra-frame correlation ``icc`` (0.02, 0.1, 0.2).
- ``sessions/rate``: the same over ``G`` capture sessions (6, 8, 12) of 4-6 demo-shaped frames; a
  session effect (Beta, correlation ``icc``) and within it a frame effect (correlation 0.1).
- ``frames/fp``: false positives per frame, negative binomial with mean ``mu`` (0.3, 1, 3) and
  shape ``size`` (0.5, 1, 3: smaller is more over-dispersed), over ``G`` frames (8, 16, 32).
- ``sessions/fp``: the same in ``G`` sessions (6, 8, 12) of 4-8 frames, each session's mean
  multiplied by a Gamma(shape ``session``, mean 1) effect (1: strong, 3: moderate).

``--method before`` computes the interval the stats stage used before (the Wilson interval at the
effective size with t on ``G - 1`` degrees of freedom; for a mean, ``m -/+ t sqrt(V)``), for the
comparison table. Deterministic: every cell has its own seed derived from ``--seed`` and its index.

    python bench/coverage.py [--reps 4000] [--seed 20260] [--method after|before] [--json out.json]
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri, stdtrit

from candor_eval.common.counts import Clusters, Count
from candor_eval.stats.rates import Rate, interval, ratio_variance

TARGET = 0.93


@dataclass(frozen=True)
class Cell:
    """One cell of the grid: its block, its parameters and the true rate."""

    block: str
    params: tuple[tuple[str, object], ...]
    truth: float

    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.params)


def _beta(rng: np.random.Generator, mean: np.ndarray | float, icc: float, size: tuple[int, ...]) -> np.ndarray:
    mean = np.clip(mean, 1e-9, 1 - 1e-9)
    s = (1.0 - icc) / icc
    return rng.beta(mean * s, (1.0 - mean) * s, size)


def _nb(rng: np.random.Generator, mu: np.ndarray | float, size_: float, shape: tuple[int, ...]) -> np.ndarray:
    return rng.negative_binomial(size_, size_ / (size_ + np.asarray(mu)), shape)


def _frames(rng: np.random.Generator, reps: int, g: int, shape: str) -> np.ndarray:
    if shape == "demo":
        return 1 + rng.poisson(18, (reps, g))
    return 1 + rng.geometric(0.1, (reps, g)) - 1


Draw = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


def grid() -> Iterator[tuple[Cell, Draw]]:
    """Every cell with its sampler (``rng, reps -> (k_g, n_g)``, arrays of shape ``(reps, G)``)."""
    for g, icc, shape, p in itertools.product((8, 16, 32), (0.02, 0.1, 0.2), ("demo", "class"), (0.05, 0.2, 0.5, 0.8)):
        def frames(rng: np.random.Generator, reps: int, g: int = g, icc: float = icc, shape: str = shape,
                   p: float = p) -> tuple[np.ndarray, np.ndarray]:
            n = _frames(rng, reps, g, shape)
            return rng.binomial(n, _beta(rng, p, icc, (reps, g))), n
        yield Cell("frames/rate", (("G", g), ("icc", icc), ("shape", shape), ("p", p)), p), frames
    for g, icc, p in itertools.product((6, 8, 12), (0.02, 0.1, 0.2), (0.05, 0.2, 0.5, 0.8)):
        def sessions(rng: np.random.Generator, reps: int, g: int = g, icc: float = icc,
                     p: float = p) -> tuple[np.ndarray, np.ndarray]:
            frames_in = rng.integers(4, 7, (reps, g))
            ps = _beta(rng, p, icc, (reps, g))
            k = np.zeros((reps, g), np.int64)
            n = np.zeros((reps, g), np.int64)
            for f in range(6):
                on = f < frames_in
                nf = 1 + rng.poisson(18, (reps, g))
                kf = rng.binomial(nf, _beta(rng, ps, 0.1, (reps, g)))
                k, n = k + on * kf, n + on * nf
            return k, n
        yield Cell("sessions/rate", (("G", g), ("icc", icc), ("p", p)), p), sessions
    for g, mu, size_ in itertools.product((8, 16, 32), (0.3, 1.0, 3.0), (0.5, 1.0, 3.0)):
        def fp(rng: np.random.Generator, reps: int, g: int = g, mu: float = mu,
               size_: float = size_) -> tuple[np.ndarray, np.ndarray]:
            return _nb(rng, mu, size_, (reps, g)), np.ones((reps, g), np.int64)
        yield Cell("frames/fp", (("G", g), ("mu", mu), ("size", size_)), mu), fp
    for g, mu, size_, shape_s in itertools.product((6, 8, 12), (0.3, 1.0, 3.0), (0.5, 3.0), (1.0, 3.0)):
        def fp_sessions(rng: np.random.Generator, reps: int, g: int = g, mu: float = mu, size_: float = size_,
                        shape_s: float = shape_s) -> tuple[np.ndarray, np.ndarray]:
            frames_in = rng.integers(4, 9, (reps, g))
            mean = mu * rng.gamma(shape_s, 1.0 / shape_s, (reps, g))
            k = np.zeros((reps, g), np.int64)
            for f in range(8):
                k = k + (f < frames_in) * _nb(rng, mean, size_, (reps, g))
            return k, frames_in.astype(np.int64)
        yield (Cell("sessions/fp", (("G", g), ("mu", mu), ("size", size_), ("session", shape_s)), mu),
               fp_sessions)


def before(count: Count, *, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """The interval the stats stage computed before this grid was shipped (module docstring)."""
    c = count.clusters
    assert c is not None
    k, n, g = count.k, count.n, c.g
    z, t = float(ndtri(0.5 + 0.5 * confidence)), float(stdtrit(g - 1, 0.5 + 0.5 * confidence))
    var = ratio_variance(k, n, g=g, sum_k2=c.sum_k2, sum_kn=c.sum_kn, sum_n2=c.sum_n2)
    r = k / n
    if count.estimate == "mean":
        half = t * math.sqrt(var)
        return max(0.0, r - half), r + half
    deff = 1.0 if k in (0, n) else max(1.0, float(var * n * n * n / (k * (n - k))))
    m = n / deff * (z / t) ** 2
    tt = 1.0 + z * z / m
    centre = (r + z * z / (2 * m)) / tt
    half = z / tt * math.sqrt(r * (1.0 - r) / m + z * z / (4.0 * m * m))
    return min(max(centre - half, 0.0), r), max(min(centre + half, 1.0), r)


def coverage(cell: Cell, draw: Draw, *, reps: int, seed: int, method: str = "after") -> tuple[float, float]:
    """(coverage, mean width) of the interval over ``reps`` draws of ``cell`` (seeded by ``seed``)."""
    rng = np.random.default_rng(seed)
    k_g, n_g = draw(rng, reps)
    estimate = "mean" if cell.block.endswith("/fp") else "rate"
    covered, width = 0, 0.0
    for k_row, n_row in zip(k_g.tolist(), n_g.tolist(), strict=True):
        k, n = sum(k_row), sum(n_row)
        sums = Clusters("cluster", len(n_row), sum(x * x for x in k_row),
                        sum(x * y for x, y in zip(k_row, n_row, strict=True)), sum(y * y for y in n_row))
        count = Count(k, n, "unit", sums, estimate=estimate)
        if method == "before":
            lo, hi = before(count)
        else:
            r: Rate = interval(count)
            lo, hi = r.lo, r.hi
        assert lo is not None and hi is not None
        covered += lo <= cell.truth <= hi
        width += hi - lo
    return covered / reps, width / reps


def run(*, reps: int, seed: int, method: str = "after", cells: tuple[str, ...] = ()) -> list[dict[str, object]]:
    """Every cell's coverage and mean width (only the cells named ``<block> <label>`` in ``cells``,
    when given; each keeps its own seed)."""
    out = []
    for i, (cell, draw) in enumerate(grid()):
        if cells and f"{cell.block} {cell.label()}" not in cells:
            continue
        cov, width = coverage(cell, draw, reps=reps, seed=seed * 1000 + i, method=method)
        out.append({"block": cell.block, "cell": cell.label(), "coverage": round(cov, 4),
                    "width": round(width, 4)})
    return out


def table(rows: list[dict[str, object]]) -> str:
    """Per block: cells, minimum coverage (and where), cells below :data:`TARGET`, mean width."""
    lines = ["| block | cells | min coverage | at | below 0.93 | mean width |", "|---|---|---|---|---|---|"]
    for block in dict.fromkeys(str(r["block"]) for r in rows):
        rs = [r for r in rows if r["block"] == block]
        low = min(rs, key=lambda r: float(str(r["coverage"])))
        below = sum(float(str(r["coverage"])) < TARGET for r in rs)
        width = sum(float(str(r["width"])) for r in rs) / len(rs)
        lines.append(f"| {block} | {len(rs)} | {low['coverage']} | {low['cell']} | {below} | {width:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=20260)
    ap.add_argument("--method", choices=("after", "before"), default="after")
    ap.add_argument("--json", default=None, help="also write every cell here")
    args = ap.parse_args(argv)
    rows = run(reps=args.reps, seed=args.seed, method=args.method)
    print(table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(float(str(r["coverage"])) >= TARGET for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
