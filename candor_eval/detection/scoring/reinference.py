"""Re-inference check: fresh raw detections against the canonical ones, within a tolerance.

Float inference is not bit-stable across CPUs (onnxruntime picks kernels per instruction
set), so the committed raw detections are the canonical inference outputs and a rerun is
*checked* against them, never expected to reproduce their bytes (``docs/detector.md``,
"Canonical inference outputs").

Definitions, for one model (``canonical`` and ``fresh`` are two raw-detections files):

- The headers must agree on ``format``, ``model``, ``onnx_sha256``, ``classes``,
  ``input_size``, ``layout`` and ``floor``, and the files must list the same frames in the
  same order with the same sizes; anything else is a *disagreement* (the canonical file is
  stale, or was made by another model).
- Two boxes *agree* when they are in the same frame, ``|Δscore| <= tol.score`` and every
  coordinate ``|Δ| <= tol.box_px`` (a tiny slack absorbs the decimal grid's float error).
- *Pairing*, per frame and class: canonical boxes in descending score order each take the
  not yet paired fresh box of the same class that agrees and has the smallest
  ``max |Δcoordinate| + |Δscore|``.
- A box left unpaired is *explained* when it can have crossed a line by less than the
  tolerance: its score is within ``tol.score`` of the floor (it fell above or below the
  floor), or an unpaired box of another class in the other file agrees with it (the
  anchor's two best class scores were tied within the tolerance: a *class flip*).
- Every other unpaired box is a disagreement. The check passes when there is none.

Example: canonical ``[10, 10, 50, 50, 0.8, 0]`` and fresh ``[10.001, 10, 50, 50, 0.80001, 0]``
agree at ``box_px=0.01, score=1e-4`` (differences 0.001 px and 1e-5).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from candor_eval.detection.detections_file import RawDetections
from candor_eval.detection.served import Served

# the decimal grid of the raw-detections file is not exact in binary: a difference of exactly
# the tolerance must still agree
SLACK = 1e-9
HEADER_KEYS = ("format", "model", "onnx_sha256", "classes", "input_size", "layout", "floor")


@dataclass(frozen=True)
class Tolerance:
    """How far a re-inferred box may be from its canonical twin: px per coordinate, and score."""

    box_px: float
    score: float


@dataclass(frozen=True)
class Unpaired:
    """A box present in one file only; ``side`` is ``canonical`` or ``fresh``; ``why`` is
    ``floor`` or ``class flip`` when explained, ``None`` when it is a disagreement."""

    frame: str
    cls: str
    side: str
    box: tuple[float, float, float, float]
    score: float
    why: str | None


@dataclass(frozen=True)
class Pair:
    """A canonical box and its fresh twin (indices into each file's arrays)."""

    canonical: int
    fresh: int


@dataclass(frozen=True)
class Comparison:
    """The box-level comparison of one model (see the module docstring)."""

    model: str
    problems: tuple[str, ...]
    canonical_boxes: int
    fresh_boxes: int
    pairs: tuple[Pair, ...] = ()
    identical_pairs: int = 0
    max_box_px: float = 0.0
    max_score: float = 0.0
    unpaired: tuple[Unpaired, ...] = field(default_factory=tuple)

    @property
    def disagreements(self) -> list[str]:
        """Header/frame problems and unexplained unpaired boxes, one line each."""
        boxes = [f"{u.frame}: {u.side} box of class {u.cls} {list(u.box)} score {u.score} has no twin"
                 for u in self.unpaired if u.why is None]
        return [*self.problems, *boxes]

    @property
    def ok(self) -> bool:
        return not self.disagreements


def _pair_group(cb: np.ndarray, cs: np.ndarray, fb: np.ndarray, fs: np.ndarray,
                tol: Tolerance) -> list[tuple[int, int]]:
    """Pairs (i, j) of one frame and class by the pairing rule; indices into the group."""
    if not len(cb) or not len(fb):
        return []
    dbox = np.abs(cb[:, None, :] - fb[None, :, :]).max(axis=2)
    dscore = np.abs(cs[:, None] - fs[None, :])
    agree = (dbox <= tol.box_px + SLACK) & (dscore <= tol.score + SLACK)
    cost = dbox + dscore
    used = np.zeros(len(fb), dtype=bool)
    pairs = []
    for i in np.argsort(-cs, kind="stable"):
        cand = np.flatnonzero(agree[i] & ~used)
        if cand.size:
            j = int(cand[np.argmin(cost[i, cand])])
            used[j] = True
            pairs.append((int(i), j))
    return pairs


def header_problems(canonical: RawDetections, fresh: RawDetections) -> list[str]:
    """What makes two files incomparable: header fields, frame list or frame sizes."""
    out = [f"header {k}: canonical {canonical.header.get(k)!r}, fresh {fresh.header.get(k)!r}"
           for k in HEADER_KEYS if canonical.header.get(k) != fresh.header.get(k)]
    if canonical.frames != fresh.frames:
        only_c = [f for f in canonical.frames if f not in set(fresh.frames)]
        only_f = [f for f in fresh.frames if f not in set(canonical.frames)]
        out.append(f"frames differ: canonical only {only_c[:5]}, fresh only {only_f[:5]}"
                   + ("" if only_c or only_f else " (same frames, another order)"))
    else:
        out += [f"{f}: size canonical {canonical.sizes[f]}, fresh {fresh.sizes[f]}" for f in canonical.frames
                if canonical.sizes[f] != fresh.sizes[f]]
    return out


def compare_boxes(canonical: RawDetections, fresh: RawDetections, *, tol: Tolerance) -> Comparison:
    """Pair the boxes of two raw-detections files of one model and explain what is left over.

    Canonical (the truth of this check) first, then the fresh run; see the module docstring.
    Empty files compare equal; incomparable headers or frames return the problems unpaired.
    """
    model = str(canonical.header.get("model"))
    problems = header_problems(canonical, fresh)
    if problems:
        return Comparison(model=model, problems=tuple(problems), canonical_boxes=len(canonical.score),
                          fresh_boxes=len(fresh.score))
    classes = list(canonical.header.get("classes", []))
    floor = float(canonical.header["floor"])
    pairs: list[Pair] = []
    left: list[tuple[str, int]] = []
    for fi in range(len(canonical.frames)):
        ci_all = np.flatnonzero(canonical.frame == fi)
        fj_all = np.flatnonzero(fresh.frame == fi)
        for k in np.union1d(canonical.cls[ci_all], fresh.cls[fj_all]):
            ci = ci_all[canonical.cls[ci_all] == k]
            fj = fj_all[fresh.cls[fj_all] == k]
            got = _pair_group(canonical.boxes[ci], canonical.score[ci], fresh.boxes[fj], fresh.score[fj], tol)
            pairs += [Pair(int(ci[a]), int(fj[b])) for a, b in got]
            left += [("canonical", int(i)) for i in np.setdiff1d(ci, [ci[a] for a, _ in got])]
            left += [("fresh", int(j)) for j in np.setdiff1d(fj, [fj[b] for _, b in got])]
    c_idx = np.array([p.canonical for p in pairs], dtype=np.int64)
    f_idx = np.array([p.fresh for p in pairs], dtype=np.int64)
    dbox = np.abs(canonical.boxes[c_idx] - fresh.boxes[f_idx]).max(axis=1) if pairs else np.zeros(0)
    dscore = np.abs(canonical.score[c_idx] - fresh.score[f_idx]) if pairs else np.zeros(0)
    return Comparison(
        model=model, problems=(), canonical_boxes=len(canonical.score), fresh_boxes=len(fresh.score),
        pairs=tuple(pairs), identical_pairs=int(np.sum((dbox == 0) & (dscore == 0))),
        max_box_px=float(dbox.max(initial=0.0)), max_score=float(dscore.max(initial=0.0)),
        unpaired=tuple(_explain(left, canonical, fresh, classes=classes, floor=floor, tol=tol)))


def _explain(left: list[tuple[str, int]], canonical: RawDetections, fresh: RawDetections, *, classes: list[str],
             floor: float, tol: Tolerance) -> list[Unpaired]:
    """Unpaired boxes with their explanation (floor crossing, class flip) or ``None``."""
    files = {"canonical": canonical, "fresh": fresh}
    why: dict[tuple[str, int], str | None] = {}
    for side, i in left:
        why[(side, i)] = "floor" if abs(files[side].score[i] - floor) <= tol.score + SLACK else None
    pending = [(s, i) for s, i in left if why[(s, i)] is None]
    for side, i in pending:
        if why[(side, i)] is not None:
            continue
        own, other = files[side], files["fresh" if side == "canonical" else "canonical"]
        other_side = "fresh" if side == "canonical" else "canonical"
        for s2, j in pending:
            if s2 != other_side or why[(s2, j)] is not None or other.frame[j] != own.frame[i] \
                    or other.cls[j] == own.cls[i]:
                continue
            if np.abs(other.boxes[j] - own.boxes[i]).max() <= tol.box_px + SLACK \
                    and abs(other.score[j] - own.score[i]) <= tol.score + SLACK:
                why[(side, i)] = why[(s2, j)] = "class flip"
                break
    out = []
    for side, i in left:
        f = files[side]
        x1, y1, x2, y2 = (float(v) for v in f.boxes[i])
        out.append(Unpaired(frame=f.frames[int(f.frame[i])], cls=classes[int(f.cls[i])], side=side,
                            box=(x1, y1, x2, y2), score=float(f.score[i]), why=why[(side, i)]))
    return out


def threshold_crossings(canonical: RawDetections, fresh: RawDetections, pairs: tuple[Pair, ...] | list[Pair], *,
                        class_thresholds: np.ndarray) -> list[tuple[str, str, float, float, float]]:
    """Paired boxes that lie on different sides of their class's threshold ``class_thresholds[cls]``
    (one kept, :meth:`~candor_eval.detection.served.Served.keeps`, the other not): ``(frame, class,
    threshold, canonical score, fresh score)``, in the order of ``pairs``."""
    classes = list(canonical.header.get("classes", []))
    served = Served.at(class_thresholds)
    at = np.array([p.canonical for p in pairs], dtype=np.int64)
    cls = canonical.cls[at]
    kept = served.keeps(canonical.score[at], cls)
    kept_fresh = served.keeps(fresh.score[np.array([p.fresh for p in pairs], dtype=np.int64)], cls)
    out = []
    for j in np.flatnonzero(kept != kept_fresh).tolist():
        p, k = pairs[j], int(cls[j])
        out.append((canonical.frames[int(canonical.frame[p.canonical])], classes[k], float(served.thresholds[k]),
                    float(canonical.score[p.canonical]), float(fresh.score[p.fresh])))
    return out


def changed_rows(canonical: list[tuple], fresh: list[tuple], *, key: int) -> list[tuple[tuple | None, tuple | None]]:
    """Outcome rows that differ between two scorings, as (canonical row, fresh row) pairs.

    The first ``key`` columns identify a row (e.g. frame, split, session, zoom, model), the
    rest are its outcome; a row present on one side only pairs with ``None``.
    """
    a = {tuple(r[:key]): tuple(r) for r in canonical}
    b = {tuple(r[:key]): tuple(r) for r in fresh}
    return [(a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
