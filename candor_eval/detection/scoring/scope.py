"""Which of the data set's classes a model is scored on: its card's classes against the data's.

Rules (docs/detector.md, "Card classes and data classes"):

- Without a ``class_map`` in the card, the card's class names must be the data set's class
  names (the same set; the model's output order is free: classes are matched by name).
- With ``class_map`` (card class -> data class), its keys must be exactly the card's classes
  and its values distinct data classes. The model is then scored on those data classes only:
  the others are **out of scope** for it. Their labels are neither true positives nor false
  negatives: they are counted apart (:func:`out_of_scope_block`), never dropped silently.
- Anything else (a card class that is no data class, a data class the card neither names
  nor maps, a mapping onto an unknown or repeated data class) is an input error naming both
  lists.

The scored classes keep the data set's order, so a model's per-class blocks, plots and
outcome rows list classes in the same order for every model.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from candor_eval.common.errors import fail
from candor_eval.common.unique import repeated


@dataclass(frozen=True)
class ClassScope:
    """A model's classes placed among the data set's.

    ``data``: the data set's classes; ``classes``: those the model is scored on (data order);
    ``out_of_scope``: the rest; ``model_to_class``: ``(M,)`` int64, card class index -> index
    into ``classes``; ``data_to_class``: ``(K,)`` int64, data class index -> index into
    ``classes`` (-1 when out of scope).
    """

    data: tuple[str, ...]
    classes: tuple[str, ...]
    out_of_scope: tuple[str, ...]
    model_to_class: np.ndarray
    data_to_class: np.ndarray


def class_scope(data: Sequence[str], card: Sequence[str], *, class_map: dict[str, str] | None,
                where: str) -> ClassScope:
    """Place the card's classes ``card`` (output order) among the data set's ``data`` (see the
    module docstring); ``where`` names the card in errors.

    >>> s = class_scope(["deer", "sheep", "boar"], ["sheep", "cervid"], class_map={"sheep": "sheep", "cervid": "deer"},
    ...                 where="m.yaml")
    >>> s.classes, s.out_of_scope, s.model_to_class.tolist(), s.data_to_class.tolist()
    (('deer', 'sheep'), ('boar',), [1, 0], [0, 1, -1])
    """
    data, card = tuple(data), tuple(card)
    lists = f"card classes [{', '.join(card)}]; data classes [{', '.join(data)}]"
    if class_map is None:
        if set(card) != set(data):
            raise fail(f"{where}:classes", "the card's classes are not the data set's classes",
                       expected="the same names (any order), or a class_map in the card (card class -> data class; "
                                "data classes it does not name are out of scope)", got=lists)
        target = {c: c for c in card}
    else:
        if set(class_map) != set(card) or not set(class_map.values()) <= set(data) or repeated(class_map.values()):
            raise fail(f"{where}:class_map", "class_map does not map the card's classes onto distinct data classes",
                       expected="one entry per card class, each onto a different data class",
                       got=f"class_map {class_map}; {lists}")
        target = class_map
    scored = set(target.values())
    classes = tuple(c for c in data if c in scored)
    index = {c: i for i, c in enumerate(classes)}
    return ClassScope(data=data, classes=classes, out_of_scope=tuple(c for c in data if c not in scored),
                      model_to_class=np.array([index[target[c]] for c in card], dtype=np.int64),
                      data_to_class=np.array([index.get(c, -1) for c in data], dtype=np.int64))


@dataclass(frozen=True)
class OutOfScope:
    """The labels of out-of-scope classes: ``classes`` (the out-of-scope names), per label its
    frame index ``label_frame`` and its index into ``classes`` ``label_class``; crowd labels excluded."""

    classes: tuple[str, ...]
    label_frame: np.ndarray
    label_class: np.ndarray


def out_of_scope_block(out: OutOfScope, *, frame_mask: np.ndarray) -> dict:
    """``{"labels": n, "per_class": {name: n}}``: the out-of-scope labels of the frames in ``frame_mask``.

    >>> o = OutOfScope(("boar",), np.array([0, 1, 1]), np.array([0, 0, 0]))
    >>> out_of_scope_block(o, frame_mask=np.array([False, True]))
    {'labels': 2, 'per_class': {'boar': 2}}
    """
    keep = frame_mask[out.label_frame] if len(out.label_frame) else np.zeros(0, bool)
    per = np.bincount(out.label_class[keep], minlength=len(out.classes))
    return {"labels": int(keep.sum()), "per_class": {c: int(per[i]) for i, c in enumerate(out.classes)}}
