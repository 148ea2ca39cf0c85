"""Defaults of ``params.yaml: match`` (:class:`candor_eval.detection.config.MatchParams`), constants only.

The one place these numbers are written: :class:`~candor_eval.detection.config.MatchParams` takes
them as its defaults, and scoring without a params file (the standalone COCO mode,
:mod:`candor_eval.detection.scoring.coco_pair`) reads them without importing YAML or pydantic.
"""
from __future__ import annotations

MATCH_IOU = 0.5                 # a detection hits a label at IoU >= this
MIN_SUPPORT = 10                # a class with fewer labels is unqualified
BAND_EDGES = (16.0, 48.0)       # size-band edges, sqrt(w*h) in model-input pixels
