"""Defaults of ``params.yaml: match`` (:class:`candor.detection.config.MatchParams`), constants only.

A leaf module: scoring without a params file (the standalone COCO mode of
``stages.score``) reads them without importing YAML or pydantic, and the stages that
read ``detector`` params (detect, latency) do not come to depend on scoring code.
"""
from __future__ import annotations

MATCH_IOU = 0.5                 # a detection hits a label at IoU >= this
MIN_SUPPORT = 10                # a class with fewer labels is unqualified
BAND_EDGES = (16.0, 48.0)       # size-band edges, sqrt(w*h) in model-input pixels
