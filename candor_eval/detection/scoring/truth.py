"""A detector data set's ground truth: YOLO txt, COCO JSON, or both (then they must agree).

A data set folder holds its labels as

- YOLO: ``labels/<frame>.txt`` with ``classes.txt`` (:mod:`candor_eval.detection.scoring.yolo`), and/or
- COCO: ``coco.json`` (:mod:`candor_eval.detection.scoring.coco`, the reader of the standalone COCO
  mode; a frame is an image's ``file_name`` stem).

Both are read by the same checked readers as everywhere else. Rules:

- neither ``labels/`` nor ``coco.json``: an input error naming the folder (a data set
  without ground truth would score every detection as a false positive);
- the data set's classes: ``classes.txt`` when present, else the COCO category names by
  ascending id; each must be able to name a plot file and appear in the plots page and the report
  as it is (no ``all`` or ``background``, no markup or control character, no two that map to
  one file name: :func:`candor_eval.detection.scoring.class_names.class_name_problems`);
- COCO: every frame to score must be an image of ``coco.json`` (other images are ignored), with
  the image's real width and height;
- both: ``classes.txt`` and the COCO category names must be the same names, and every frame must
  hold the same labels: per class the same number of boxes, paired one to one with every
  coordinate within :data:`AGREEMENT_PX` original-image pixels (so a COCO export with boxes
  rounded to whole pixels agrees; a moved, added, dropped or relabelled box does not). A crowd
  annotation (COCO only) has no YOLO twin, so it is a disagreement. Disagreeing frames are one
  input error naming the folder and each frame. The YOLO labels are then the ones scored
  (their label indices are the outcome tables').
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.detection.scoring.boxes import iter_group_pairs, stable_key_order, within_group_ranks
from candor_eval.detection.scoring.class_names import class_name_problems
from candor_eval.detection.scoring.coco import read_coco
from candor_eval.detection.scoring.columns import GroundTruth
from candor_eval.detection.scoring.yolo import read_classes, read_yolo

LABELS = "labels"
CLASSES = "classes.txt"
COCO = "coco.json"
AGREEMENT_PX = 1.0      # per coordinate, original px: YOLO and COCO labels of a frame agree within it
SHOWN = 10              # disagreeing frames named in the error


@dataclass(frozen=True)
class Truth:
    """The scored labels ``gt`` (frames in the requested order) and, when the data set has a
    ``coco.json``, its ids: ``image_ids`` (frame -> image id) and ``category_ids`` (class -> id)."""

    gt: GroundTruth
    image_ids: dict[str, int] | None
    category_ids: dict[str, int] | None


def read_truth(data: Path, *, frames: Sequence[str], sizes: dict[str, tuple[int, int]]) -> Truth:
    """The ground truth of ``frames`` of the data set ``data`` (see the module docstring);
    ``sizes``: frame -> (width, height) of its image."""
    data = Path(data)
    has_yolo, has_coco = (data / LABELS).is_dir(), (data / COCO).is_file()
    if not (has_yolo or has_coco):
        raise fail(str(data), "no ground truth in the data set folder",
                   expected=f"{LABELS}/<frame>.txt (YOLO, with {CLASSES}) or {COCO} (COCO), or both",
                   got=", ".join(sorted(p.name for p in data.iterdir())) if data.is_dir() else "no folder")
    yolo = read_yolo(data, frames=list(frames), sizes=sizes) if has_yolo else None
    if yolo is not None:
        check_class_names(yolo.classes, where=str(data / CLASSES))
    if not has_coco and yolo is not None:      # without coco.json the YOLO labels are there (checked above)
        return Truth(gt=yolo, image_ids=None, category_ids=None)
    classes = yolo.classes if yolo else (read_classes(data / CLASSES) if (data / CLASSES).is_file() else None)
    full, img_map, cat_map = read_coco(data / COCO, classes=classes)
    names = {full.classes[i] for i in cat_map.values()}
    if names != set(full.classes):
        raise fail(f"{data / COCO}:categories", f"the category names are not the classes of {CLASSES}",
                   expected=f"[{', '.join(full.classes)}]",
                   got=f"[{', '.join(n for n in full.classes if n in names)}]")
    check_class_names(full.classes, where=f"{data / COCO}:categories")
    coco = select_frames(full, frames=frames, sizes=sizes, where=str(data / COCO))
    if yolo is not None:
        check_agreement(yolo, coco, where=str(data))
    image_ids = {full.frames[fi]: iid for iid, fi in img_map.items()}
    category_ids = {full.classes[ci]: cid for cid, ci in cat_map.items()}
    return Truth(gt=yolo if yolo is not None else coco, image_ids=image_ids, category_ids=category_ids)


def check_class_names(classes: tuple[str, ...], *, where: str) -> None:
    """The data set's class names can name plot files and page content
    (:func:`candor_eval.detection.scoring.class_names.class_name_problems`); else an InputError naming ``where``."""
    problems = class_name_problems(classes, where=where)
    if problems:
        raise InputError(problems, hint="rename the class in the ground truth (and the model card's classes "
                                        "or class_map)")


def select_frames(gt: GroundTruth, *, frames: Sequence[str], sizes: dict[str, tuple[int, int]],
                  where: str) -> GroundTruth:
    """``gt`` restricted to ``frames``, in that order (labels by frame, then label index). A frame
    missing from ``gt``, or listed with another size than ``sizes``, is an input error."""
    pos = {f: i for i, f in enumerate(gt.frames)}
    missing = [f for f in frames if f not in pos]
    if missing:
        raise fail(f"{where}:images", f"{len(missing)} frame(s) of the data set are not images of the file",
                   expected="an image per frame (file_name stem = frame id)", got=missing[:SHOWN])
    idx = np.array([pos[f] for f in frames], dtype=np.int64)
    wrong = [(f, tuple(int(v) for v in gt.sizes[i]), tuple(sizes[f])) for f, i in zip(frames, idx.tolist())
             if f in sizes and tuple(int(v) for v in gt.sizes[i]) != tuple(sizes[f])]
    if wrong:
        raise InputError([Problem(f"{where}:images {f}", "width and height differ from the image's",
                                  expected=f"{real[0]} x {real[1]}", got=f"{said[0]} x {said[1]}")
                          for f, said, real in wrong[:SHOWN]])
    new = np.full(len(gt.frames), -1, dtype=np.int64)
    new[idx] = np.arange(len(idx))
    frame = new[gt.label_frame]
    keep = np.flatnonzero(frame >= 0)
    keep = keep[np.lexsort((gt.label_index[keep], frame[keep]))]
    return GroundTruth(classes=gt.classes, frames=tuple(frames), sizes=gt.sizes[idx].reshape(-1, 2),
                       label_frame=frame[keep], label_index=gt.label_index[keep], label_class=gt.label_class[keep],
                       label_boxes=gt.label_boxes[keep], label_crowd=gt.label_crowd[keep])


def frame_disagreement(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray, np.ndarray], *,
                       classes: tuple[str, ...], tol: float) -> str | None:
    """Why one frame's labels ``a`` (classes, boxes) and ``b`` (classes, boxes, crowd) differ, or None.

    Per class, boxes are paired greedily in ``a``'s order, each with the closest (largest
    coordinate difference smallest) unpaired box of ``b``, which must lie within ``tol``.

    >>> box = np.array([[0.0, 0, 10, 10]])
    >>> frame_disagreement((np.array([0]), box), (np.array([0]), box + 0.4, np.array([False])),
    ...                    classes=("deer",), tol=1)
    >>> frame_disagreement((np.array([0]), box), (np.array([0]), box + 2, np.array([False])), classes=("deer",), tol=1)
    'deer: box [0.0, 0.0, 10.0, 10.0] of the YOLO labels has no twin in coco.json'
    """
    a_cls, a_box = a
    b_cls, b_box, b_crowd = b
    if b_crowd.any():
        return f"{int(b_crowd.sum())} crowd annotation(s) in coco.json (YOLO has no crowd)"
    for c in sorted(set(a_cls.tolist()) | set(b_cls.tolist())):
        pa, pb = a_box[a_cls == c], b_box[b_cls == c]
        if len(pa) != len(pb):
            return f"{classes[c]}: {len(pa)} box(es) in the YOLO labels, {len(pb)} in coco.json"
        free = np.ones(len(pb), bool)
        for box in pa:
            d = np.where(free, np.abs(pb - box).max(axis=1), np.inf)
            j = int(np.argmin(d))
            if d[j] > tol:
                return (f"{classes[c]}: box {[round(float(v), 3) for v in box]} of the YOLO labels "
                        "has no twin in coco.json")
            free[j] = False
    return None


def twinned_frames(yolo: GroundTruth, coco: GroundTruth, *, tol: float) -> np.ndarray:
    """``(F,)`` True for each frame whose labels :func:`frame_disagreement` surely finds agreeing: no crowd
    annotation, per class as many boxes in both, and each YOLO box's closest COCO box of its class (the
    first on a tie, of all of them) is the one at its own position in the class, within ``tol``. Then the
    greedy pairing takes exactly those twins, so the frame agrees. False says nothing (the frame is
    checked box by box); the test runs on every frame at once."""
    n_k = len(yolo.frames) * max(len(yolo.classes), 1)
    ka = yolo.label_frame * max(len(yolo.classes), 1) + yolo.label_class
    kb = coco.label_frame * max(len(yolo.classes), 1) + coco.label_class
    bad_key = np.bincount(ka, minlength=n_k) != np.bincount(kb, minlength=n_k)
    bad_key[kb[coco.label_crowd]] = True
    order = stable_key_order(ka)
    own = np.empty(len(ka), np.int64)                  # each YOLO box's position among its key's boxes
    own[order] = within_group_ranks(ka[order])[0]
    twin = np.zeros(len(ka), bool)
    for ia, ib in iter_group_pairs(ka, kb):            # by YOLO box, then its key's COCO boxes in order
        d = np.abs(coco.label_boxes[ib] - yolo.label_boxes[ia]).max(axis=1)
        starts = np.flatnonzero(np.r_[True, ia[1:] != ia[:-1]])
        run = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(ia)]))
        low = np.minimum.reduceat(d, starts)
        at_low = np.flatnonzero(d == low[run])        # none for a run holding a NaN: not twinned
        first = np.full(len(starts), -1)
        hit_runs = run[at_low]
        keep = np.r_[True, hit_runs[1:] != hit_runs[:-1]] if len(at_low) else np.zeros(0, bool)
        first[hit_runs[keep]] = at_low[keep] - starts[hit_runs[keep]]
        a = ia[starts]
        twin[a] = (first == own[a]) & (low <= tol)
    bad_frame = np.zeros(len(yolo.frames), bool)
    bad_frame[np.flatnonzero(bad_key) // max(len(yolo.classes), 1)] = True
    bad_frame[yolo.label_frame[~twin]] = True
    return ~bad_frame


def check_agreement(yolo: GroundTruth, coco: GroundTruth, *, where: str, tol: float = AGREEMENT_PX) -> None:
    """Both ground truths (same frames, same classes) hold the same labels per frame (see the module
    docstring); else one InputError naming ``where`` and each disagreeing frame."""
    n = len(yolo.frames)
    ya, ca = np.argsort(yolo.label_frame, kind="stable"), np.argsort(coco.label_frame, kind="stable")
    ys = np.searchsorted(yolo.label_frame[ya], np.arange(n + 1))
    cs = np.searchsorted(coco.label_frame[ca], np.arange(n + 1))
    problems = []
    for fi in np.flatnonzero(~twinned_frames(yolo, coco, tol=tol)).tolist():
        frame = yolo.frames[fi]
        y, c = ya[ys[fi]:ys[fi + 1]], ca[cs[fi]:cs[fi + 1]]
        why = frame_disagreement((yolo.label_class[y], yolo.label_boxes[y]),
                                 (coco.label_class[c], coco.label_boxes[c], coco.label_crowd[c]),
                                 classes=yolo.classes, tol=tol)
        if why:
            problems.append(Problem(f"{where}: frame {frame}", f"{LABELS}/ and {COCO} disagree",
                                    expected=f"the same boxes per class within {tol:g} px", got=why))
    if problems:
        raise InputError(problems[:SHOWN], hint=f"{len(problems)} frame(s) of {where} differ: fix the labels, or keep "
                                                f"one format (remove {LABELS}/ or {COCO})")
