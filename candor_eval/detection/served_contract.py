"""A model's served contract: what is held fixed so that a change of weights is the checkpoint's effect.

A detector is served as a *package*: the weights and everything around them. The contract of a
model on a detection set (:func:`contract`) is everything of the package but the weights:

- ``preprocess``: how a frame becomes the input tensor (the card's
  :class:`~candor_eval.detection.model_card.Preprocess`), ``input_size`` and ``output_layout``
  (the card's; ``None`` when the card does not say);
- ``thresholds``: the served per-class thresholds (class -> value, ``thresholds`` with the
  model's ``thresholds_by_model`` keys applied);
- ``nms``: the served NMS (``iou``, ``agnostic``, ``max_det``: ``detector.nms_*`` with the
  model's ``nms_by_model`` keys applied).

Beside it (never compared) the ONNX file's SHA-256 and the card's ``training_sessions``. The
score stage writes every model's contract to ``<outcomes>/<set>/served.json`` (:data:`FILE`).

A *weights experiment* compares two models whose contracts are equal, so that a difference is
the checkpoint's; :func:`differing_keys` names the keys where two contracts differ
(``thresholds.deer``, ``nms.iou``, ``preprocess.resize``). A *package comparison* compares
them deliberately, contracts and all (the release gate's ``gate.comparison``).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from candor_eval.detection.config import ServedNms
from candor_eval.detection.model_card import ModelCard

FILE = "served.json"
COMPARED = ("preprocess", "input_size", "output_layout", "thresholds", "nms")


def contract(card: ModelCard, *, onnx_sha256: str, thresholds: Mapping[str, float], nms: ServedNms) -> dict[str, Any]:
    """The served contract of a model (module docstring), as written to ``served.json``."""
    return {"preprocess": card.preprocess.model_dump(),
            "input_size": None if card.input_size is None else list(card.input_size),
            "output_layout": card.output_layout,
            "thresholds": {c: float(t) for c, t in thresholds.items()},
            "nms": {"iou": nms.iou, "agnostic": nms.agnostic, "max_det": nms.max_det},
            "onnx_sha256": onnx_sha256,
            "training_sessions": card.training_sessions}


def _leaves(doc: Any, prefix: str) -> dict[str, Any]:
    if isinstance(doc, Mapping):
        out: dict[str, Any] = {}
        for k, v in doc.items():
            out |= _leaves(v, f"{prefix}.{k}")
        return out
    return {prefix: doc}


def differing_keys(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The dotted keys of the compared parts (:data:`COMPARED`) where contracts ``a`` and ``b`` differ,
    sorted (a key present on one side only differs).

    >>> a = {"thresholds": {"deer": 0.3, "boar": 0.4}, "nms": {"iou": 0.5}}
    >>> differing_keys(a, {"thresholds": {"deer": 0.2, "boar": 0.4}, "nms": {"iou": 0.5}})
    ['thresholds.deer']
    """
    la = {k: v for part in COMPARED for k, v in _leaves(a.get(part), part).items()}
    lb = {k: v for part in COMPARED for k, v in _leaves(b.get(part), part).items()}
    return sorted(k for k in la.keys() | lb.keys() if la.get(k, KeyError) != lb.get(k, KeyError))

