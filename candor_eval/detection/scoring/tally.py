"""Tallies: the counts every detection metric is read from, added up chunk by chunk.

Every number of a metrics block (:func:`summarise`), of the PR and F1-versus-threshold curves
(:meth:`Tally.curves`) and of the confusion matrix is a sum over frames. A :class:`Tally` keeps
those sums in small arrays whose size depends on the classes, bands, threshold grid and frame
groups, never on the number of frames or boxes, so scoring can read the raw detections in
chunks of whole frames, add each chunk's counts and drop its boxes
(:mod:`candor_eval.detection.scoring.stream`, docs/scale.md). The result is the same whatever the
chunks, since sums do not depend on how the frames are grouped.

What is counted (definitions: :mod:`candor_eval.detection.scoring.metrics`):

- ``counts[g, c, b, k]``: for frame group ``g`` (:class:`FrameGroups`: frames of one split and
  zoom), class ``c``, size band ``b``, kind ``k`` of :data:`KINDS`: ``tp`` kept matched detections
  (band of their label), ``fp`` kept unmatched, non-ignored detections (band of the detection),
  ``fn`` non-crowd labels not found (band of the label), ``wrong`` the kept FPs flagged by
  :func:`~candor_eval.detection.scoring.metrics.wrong_targets` (band of the detection), then the kept
  FPs of each kind of :data:`~candor_eval.detection.scoring.anatomy.FP_KINDS` (band of the detection)
  and ``fn_aimed`` the aimed FNs (band of the label; :mod:`candor_eval.detection.scoring.anatomy`);
  ``frames[g]``: the group's frames.
- ``hist[k, g, c, j]`` for ``k`` in matched detections, unmatched non-ignored detections, found
  non-crowd labels, of frame group ``g``: how many have a score (for a label, the score of the detection that matched
  it, ``-inf`` when none) in grid cell ``j``, that is with exactly ``j`` thresholds of the curve
  grid at or below it. "Score >= threshold ``t_j``" is "cell > ``j``", so the curves are exact
  suffix sums whatever the scores, with no sort; ``labels[g, c]``: non-crowd labels of class ``c`` in
  group ``g``. Kept per group so that the curves of one split are read off the same tally. Without a
  grid (no curves to read) none are kept: ``hist`` is ``(3, G, C, 0)``.
- ``matrix[g]``: the confusion matrix of group ``g``'s frames
  (:func:`~candor_eval.detection.scoring.metrics.confusion_by_group`; :meth:`Tally.confusion`), when
  asked for (it matches every frame's FPs with its FNs: work a metrics block alone does not need).
- ``clusters``: the cluster sums behind every rate's interval
  (:mod:`candor_eval.detection.scoring.clusters`), when a cluster (frame or session) is given.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from candor_eval.common.counts import Count
from candor_eval.detection.scoring.anatomy import FN_KINDS, FP_KINDS, error_anatomy
from candor_eval.detection.scoring.clusters import ClusterBy, ClusterTally, view_counts
from candor_eval.detection.scoring.metrics import (
    RATE_GROUPS,
    band_names,
    confusion_by_group,
    size_at_input,
    wrong_targets,
    zoom_key,
)
from candor_eval.detection.scoring.records import Anatomy, Counts, Curve, FrameGroups, OperatingPoint, Scene, Scored

KINDS = ("tp", "fp", "fn", "wrong", *(f"fp_{k}" for k in FP_KINDS), "fn_aimed")
TP, FP, FN, WRONG = range(4)
FP_KIND0 = 4                       # counts[..., FP_KIND0 + j]: FPs of kind FP_KINDS[j]
FN_AIMED = FP_KIND0 + len(FP_KINDS)


def cells_at_or_below(edges: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per value, how many of the ascending ``edges`` are at or below it (``np.searchsorted(edges, values,
    side="right")``, the same integers): with a few edges, one whole-array comparison per edge, which
    is several times faster than a binary search per value.

    >>> cells_at_or_below(np.array([16.0, 48.0]), np.array([0.0, 16.0, 47.9, 48.0, 99.0])).tolist()
    [0, 1, 1, 2, 2]
    """
    edges, values = np.asarray(edges, dtype=np.float64), np.asarray(values, dtype=np.float64)
    if len(edges) > 8 or np.isnan(values).any():
        return np.searchsorted(edges, values, side="right")
    out = np.zeros(len(values), dtype=np.intp)
    for e in edges.tolist():
        out += values >= e
    return out


def frame_groups(scene: Scene, *, frame_mask: np.ndarray | None = None) -> FrameGroups:
    """The (split, zoom) groups of the scene's frames (of ``frame_mask`` only, when given), sorted.

    >>> sc = Scene(classes=(), frames=np.array(["a", "b", "c"]), split=np.array(["test", "dev", "test"]),
    ...            zoom=np.array(["2", "1", "2"]), session=np.array(["", "", ""]), scale=np.ones(3),
    ...            label_frame=np.zeros(0, int), label_index=np.zeros(0, int), label_class=np.zeros(0, int),
    ...            label_boxes=np.zeros((0, 4)), label_crowd=np.zeros(0, bool))
    >>> g = frame_groups(sc)
    >>> g.split, g.zoom, g.of_frame.tolist()
    (('dev', 'test'), ('1', '2'), [1, 0, 1])
    """
    mask = np.ones(len(scene.frames), bool) if frame_mask is None else np.asarray(frame_mask, bool)
    pairs = sorted({(str(s), str(z)) for s, z in zip(scene.split[mask].tolist(), scene.zoom[mask].tolist())})
    index = {p: i for i, p in enumerate(pairs)}
    of_frame = np.array([index[(str(s), str(z))] if m else -1
                         for s, z, m in zip(scene.split.tolist(), scene.zoom.tolist(), mask.tolist())], dtype=np.int64)
    return FrameGroups(split=tuple(p[0] for p in pairs), zoom=tuple(p[1] for p in pairs), of_frame=of_frame)


@dataclass
class Tally:
    """The sums of one model's scoring (see the module docstring); start with :meth:`empty`,
    then :meth:`add` each chunk."""

    groups: FrameGroups
    classes: tuple[str, ...]
    band_edges: tuple[float, ...]
    grid: np.ndarray
    counts: np.ndarray
    frames: np.ndarray
    hist: np.ndarray
    labels: np.ndarray
    matrix: np.ndarray | None
    clusters: ClusterTally | None = None

    @classmethod
    def empty(cls, groups: FrameGroups, *, classes: tuple[str, ...], band_edges: tuple[float, ...] | list[float],
              grid: np.ndarray, matrix: bool = True, cluster: ClusterBy | None = None) -> Tally:
        """Zero counts for ``groups``, ``classes``, the bands of ``band_edges`` and the curve grid
        ``grid``; the confusion matrix only with ``matrix``; cluster sums by ``cluster``."""
        n_g, n_c, n_b, n_t = len(groups.split), len(classes), len(band_names(band_edges)), len(grid)
        return cls(groups=groups, classes=tuple(classes), band_edges=tuple(band_edges),
                   grid=np.asarray(grid, dtype=np.float64),
                   counts=np.zeros((n_g, n_c, n_b, len(KINDS)), np.int64), frames=np.zeros(n_g, np.int64),
                   hist=np.zeros((3, n_g, n_c, n_t + 1 if n_t else 0), np.int64),
                   labels=np.zeros((n_g, n_c), np.int64),
                   matrix=np.zeros((n_g, n_c + 1, n_c + 1), np.int64) if matrix else None,
                   clusters=None if cluster is None else ClusterTally(cluster, n_g, 1 + n_c + n_b))

    def add(self, s: Scored, op: OperatingPoint, *, wrong: np.ndarray, anatomy: Anatomy, of_frame: np.ndarray,
            curves: Scored | None = None) -> None:
        """Add the counts of one chunk: ``s`` and ``op`` on a scene of whole frames, ``wrong``
        (:func:`~candor_eval.detection.scoring.metrics.wrong_targets`), ``anatomy``
        (:func:`~candor_eval.detection.scoring.anatomy.error_anatomy`) and ``of_frame``, the group of
        each of that scene's frames (frames of group ``-1`` are not counted). The curves' histograms
        come from ``curves`` (the same scene scored at the floor) when the operating point was scored
        apart (a class-agnostic or capped NMS, :mod:`candor_eval.detection.scoring.metrics`), else from ``s``."""
        sc = s.scene
        n_g, n_c, n_b, n_k = self.counts.shape
        self.frames += np.bincount(of_frame[of_frame >= 0], minlength=n_g)
        det_g, lab_g = of_frame[s.frame], of_frame[sc.label_frame]
        edges = np.asarray(self.band_edges, dtype=np.float64)
        lab_band = cells_at_or_below(edges, size_at_input(sc.label_boxes, sc.scale[sc.label_frame]))
        det_band = cells_at_or_below(edges, size_at_input(s.boxes, sc.scale[s.frame]))
        # each box's cell (group, class, band) once, then one count of every (cell, kind) it adds to
        fp = np.flatnonzero(op.fp & (det_g >= 0))
        tp = np.flatnonzero(op.tp & (det_g >= 0))
        fp_cell = ((det_g[fp] * n_c + s.cls[fp]) * n_b + det_band[fp]) * n_k
        lab = np.flatnonzero(lab_g >= 0)
        lab_cell = ((lab_g[lab] * n_c + sc.label_class[lab]) * n_b + lab_band[lab]) * n_k
        fp_kind, wrong_fp = anatomy.fp_kind[fp], wrong[fp]
        flat = [((det_g[tp] * n_c + s.cls[tp]) * n_b + lab_band[s.label[tp]]) * n_k + TP, fp_cell + FP,
                lab_cell[op.fn[lab]] + FN, fp_cell[wrong_fp] + WRONG,
                fp_cell[fp_kind >= 0] + FP_KIND0 + fp_kind[fp_kind >= 0], lab_cell[anatomy.fn_aimed[lab]] + FN_AIMED]
        self.counts += np.bincount(np.concatenate(flat), minlength=self.counts.size).reshape(self.counts.shape)
        if self.clusters is not None:
            tp_band = det_band.copy()                  # a TP (matched) counts in its label's band
            tp_band[s.label >= 0] = lab_band[s.label[s.label >= 0]]
            self._add_clusters(self.clusters, s, op, of_frame=of_frame, bands=(tp_band, det_band, lab_band))
        if self.matrix is not None:        # the operating point's matrix: of ``s``, whose boxes ``op`` marks
            self.matrix += confusion_by_group(s, op, of_frame=of_frame, n_groups=n_g)
        s = s if curves is None else curves
        det_g = of_frame[s.frame]
        counted_det, counted_lab = det_g >= 0, (lab_g >= 0) & ~sc.label_crowd
        n_t = self.hist.shape[3]
        scored = [(counted_det & (s.label >= 0), det_g, s.cls, s.score),
                  (counted_det & (s.label < 0) & ~s.ignored, det_g, s.cls, s.score),
                  (counted_lab, lab_g, sc.label_class, s.label_score)] if n_t else []   # no grid: no curves
        for k, (sel, g, c, score) in enumerate(scored):
            cell = cells_at_or_below(self.grid, score[sel])
            flat = (g[sel] * n_c + c[sel]) * n_t + cell
            self.hist[k] += np.bincount(flat, minlength=n_g * n_c * n_t).reshape(n_g, n_c, n_t)
        flat = lab_g[counted_lab] * n_c + sc.label_class[counted_lab]
        self.labels += np.bincount(flat, minlength=n_g * n_c).reshape(n_g, n_c)

    def _add_clusters(self, clusters: ClusterTally, s: Scored, op: OperatingPoint, *, of_frame: np.ndarray,
                      bands: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Each counted frame's ``(tp, fp, fn, 1)`` per view (micro, class, band) to the cluster sums."""
        sc = s.scene
        n_f, n_c, n_b = len(sc.frames), len(self.classes), len(band_names(self.band_edges))
        n_v = 1 + n_c + n_b
        tp_band, det_band, lab_band = bands
        flat = []
        for sel, f, c, b, k in ((op.tp, s.frame, s.cls, tp_band, TP), (op.fp, s.frame, s.cls, det_band, FP),
                                (op.fn, sc.label_frame, sc.label_class, lab_band, FN)):
            sel = sel & (of_frame[f] >= 0)
            for view in (np.zeros(sel.sum(), np.int64), 1 + c[sel], 1 + n_c + b[sel]):
                flat.append((f[sel] * n_v + view) * 4 + k)
        per_frame = np.bincount(np.concatenate(flat) if flat else np.zeros(0, np.int64),
                                minlength=n_f * n_v * 4).reshape(n_f, n_v, 4)
        per_frame[:, :, 3] = 1
        counted = of_frame >= 0
        clusters.add(per_frame[counted], group=of_frame[counted], session=sc.session[counted])

    def cluster_counts(self, *, splits: tuple[str, ...] | None, prefix: str) -> dict[str, Count]:
        """The counts block entries of the frames of ``splits`` (None: every frame), keyed
        ``<prefix>.<path>.<rate>`` as :func:`~candor_eval.detection.scoring.metrics.rate_counts` keys them,
        each with its cluster sums (:mod:`candor_eval.detection.scoring.clusters`), plus ``f1`` and, for
        micro and per zoom, ``fp_per_frame``; requires cluster sums (:meth:`empty` with ``cluster``)."""
        if self.clusters is None:
            raise ValueError("this tally keeps no cluster sums")
        sel = np.array([splits is None or sp in splits for sp in self.groups.split], dtype=bool)
        sel &= self.frames > 0
        n_c = len(self.classes)
        def totals(c: np.ndarray, frames: int) -> tuple[int, int, int, int]:
            return int(c[..., TP].sum()), int(c[..., FP].sum()), int(c[..., FN].sum()), frames
        name = self.clusters.by
        out: dict[str, Count] = {}
        sums, held = self.clusters.sums_over(sel)
        frames = int(self.frames[sel].sum())
        views = [("micro", 0, totals(self.counts[sel], frames))]
        views += [(f"{RATE_GROUPS[0]}.{c}", 1 + i, totals(self.counts[sel][:, i], frames))
                  for i, c in enumerate(self.classes)]
        views += [(f"{RATE_GROUPS[1]}.{b}", 1 + n_c + i, totals(self.counts[sel][:, :, i], frames))
                  for i, b in enumerate(band_names(self.band_edges))]
        for path, v, tot in views:
            out |= {f"{prefix}.{path}.{k}": c for k, c in view_counts(sums, held, v=v, totals=tot, name=name).items()
                    if v == 0 or k != "fp_per_frame"}             # FP/frame is a micro (and per-zoom) figure
        zooms = np.array(self.groups.zoom, dtype=object)
        for z in sorted(set(zooms[sel].tolist())):
            zsel = sel & (zooms == z)
            zsums, zheld = self.clusters.sums_over(zsel)
            tot = totals(self.counts[zsel], int(self.frames[zsel].sum()))
            out |= {f"{prefix}.{RATE_GROUPS[2]}.{zoom_key(z)}.{k}": c
                    for k, c in view_counts(zsums, zheld, v=0, totals=tot, name=name).items()}
        return out

    def block(self, *, splits: tuple[str, ...] | None, min_support: int, critical: list[str]) -> dict:
        """The metrics block of the frames of ``splits`` (None: every frame):
        ``{micro, per_class, by_band, by_zoom, critical}`` with stable keys (definitions:
        :mod:`candor_eval.detection.scoring.metrics`)."""
        sel = np.array([splits is None or sp in splits for sp in self.groups.split], dtype=bool)
        sel &= self.frames > 0
        c = self.counts[sel]
        frames = int(self.frames[sel].sum())
        tp, fp, fn = (int(c[..., k].sum()) for k in (TP, FP, FN))
        micro = Counts(tp, fp, fn, frames)
        per_class = {}
        by_class = c.sum(axis=(0, 2))
        for i, name in enumerate(self.classes):
            k = Counts(int(by_class[i, TP]), int(by_class[i, FP]), int(by_class[i, FN]), frames)
            support = k.tp + k.fn
            per_class[name] = {"precision": k.precision, "recall": k.recall, "f1": k.f1, "support": support,
                               "tp": k.tp, "fp": k.fp, "fn": k.fn, "qualified": support >= min_support,
                               **anatomy_keys(by_class[i])}
        by_band = {}
        per_band = c.sum(axis=(0, 1))
        for b, name in enumerate(band_names(self.band_edges)):
            k = Counts(int(per_band[b, TP]), int(per_band[b, FP]), int(per_band[b, FN]), frames)
            by_band[name] = {**{x: k.as_dict()[x] for x in ("precision", "recall", "f1", "tp", "fp", "fn")},
                             "support": k.tp + k.fn}
        by_zoom = {}
        zooms = np.array(self.groups.zoom, dtype=object)
        for z in sorted(set(zooms[sel].tolist())):
            zsel = sel & (zooms == z)
            zc = self.counts[zsel]
            k = Counts(int(zc[..., TP].sum()), int(zc[..., FP].sum()), int(zc[..., FN].sum()),
                       int(self.frames[zsel].sum()))
            by_zoom[zoom_key(z)] = k.as_dict()
        crit = {}
        for name in critical:
            i = self.classes.index(name)
            crit[name] = {"missed": int(by_class[i, FN]), "wrong": int(by_class[i, WRONG])}
        crit["total"] = {"missed": sum(v["missed"] for v in crit.values()),
                         "wrong": sum(v["wrong"] for v in crit.values())}
        return {"micro": {**micro.as_dict(), **anatomy_keys(c.sum(axis=(0, 1, 2)))}, "per_class": per_class,
                "by_band": by_band, "by_zoom": by_zoom,
                "critical": crit}

    def confusion(self, *, splits: tuple[str, ...] | None = None) -> np.ndarray:
        """The confusion matrix ``(C+1, C+1)`` (rows true, columns predicted, background last) of the
        frames of ``splits`` (``None``: every counted frame); the tally must keep the matrix."""
        if self.matrix is None:
            raise ValueError("this tally keeps no confusion matrix (Tally.empty(..., matrix=False))")
        sel = np.array([splits is None or sp in splits for sp in self.groups.split], dtype=bool)
        return self.matrix[sel].sum(axis=0)

    def curves(self, *, splits: tuple[str, ...] | None = None) -> dict[str, Curve]:
        """Per-class counts at each threshold of the grid (the same threshold for every class),
        plus ``"all"``: TP(t) matched detections with score >= t, FP(t) unmatched non-ignored ones,
        FN(t) non-crowd labels whose matched score is below t (none matched: always); over the
        frames of ``splits`` (``None``: every counted frame)."""
        sel = np.array([splits is None or sp in splits for sp in self.groups.split], dtype=bool)
        hist, labels_of = self.hist[:, sel].sum(axis=1), self.labels[sel].sum(axis=0)
        at_or_above = np.cumsum(hist[:, :, ::-1], axis=2)[:, :, ::-1][:, :, 1:]   # cells > j, per j
        out = {}
        for c, name in [*enumerate(self.classes), (-1, "all")]:
            tp, fp, found = (at_or_above[k].sum(axis=0) if c < 0 else at_or_above[k, c] for k in range(3))
            labels = int(labels_of.sum() if c < 0 else labels_of[c])
            out[name] = Curve(grid=self.grid, tp=tp, fp=fp, fn=labels - found)
        return out


def anatomy_keys(kinds: np.ndarray) -> dict:
    """``{"fp_anatomy": {kind: n}, "fn_anatomy": {"aimed", "missed"}}`` of one cell's counts by kind
    ``(len(KINDS),)``: the parts of ``fp`` and of ``fn`` (:mod:`candor_eval.detection.scoring.anatomy`)."""
    fn, aimed = int(kinds[FN]), int(kinds[FN_AIMED])
    return {"fp_anatomy": {k: int(kinds[FP_KIND0 + j]) for j, k in enumerate(FP_KINDS)},
            "fn_anatomy": dict(zip(FN_KINDS, (aimed, fn - aimed)))}


def summarise(s: Scored, op: OperatingPoint, *, frame_mask: np.ndarray, min_support: int,
              critical: list[str], band_edges: list[float], wrong: np.ndarray | None = None) -> dict:
    """The metrics block of the frames in ``frame_mask`` ``(F,)``, scored in memory at once (a
    :class:`Tally` of one chunk). ``wrong`` is :func:`wrong_targets` when already computed."""
    sc = s.scene
    if wrong is None:
        wrong = wrong_targets(s, op, classes=[sc.classes.index(c) for c in critical])
    tally = Tally.empty(frame_groups(sc, frame_mask=frame_mask), classes=sc.classes, band_edges=band_edges,
                        grid=np.zeros(0), matrix=False)
    tally.add(s, op, wrong=wrong, anatomy=error_anatomy(s, op), of_frame=tally.groups.of_frame)
    return tally.block(splits=None, min_support=min_support, critical=critical)
