"""Tests for candor_eval/detection/match_defaults.py: the ``match`` defaults are written once, and both
readers take them: the params model and the standalone COCO mode (which imports no pydantic)."""
from __future__ import annotations

import inspect
import subprocess
import sys

from candor_eval.detection import match_defaults as md
from candor_eval.detection.config import MatchParams
from candor_eval.detection.scoring.coco_pair import score_coco_pair
from tests.conftest import ROOT


def test_the_params_model_defaults_are_the_constants():
    m = MatchParams()
    assert (m.iou, m.min_support, tuple(m.bands)) == (md.MATCH_IOU, md.MIN_SUPPORT, md.BAND_EDGES)


def test_the_coco_mode_defaults_are_the_constants():
    defaults = {k: p.default for k, p in inspect.signature(score_coco_pair).parameters.items()}
    assert (defaults["iou"], defaults["min_support"], tuple(defaults["bands"])) == (
        md.MATCH_IOU, md.MIN_SUPPORT, md.BAND_EDGES)


def test_the_values_are_a_valid_match_section():
    """IoU in (0, 1], support a count, band edges positive and strictly ascending."""
    assert 0 < md.MATCH_IOU <= 1 and isinstance(md.MIN_SUPPORT, int) and md.MIN_SUPPORT >= 0
    assert all(0 < a < b for a, b in zip(md.BAND_EDGES, md.BAND_EDGES[1:])) and md.BAND_EDGES[0] > 0


def test_the_module_imports_nothing():
    """Constants only: importing it loads neither pydantic nor YAML."""
    code = ("import sys; import candor_eval.detection.match_defaults; "
            "print(sorted(m for m in ('pydantic', 'yaml', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
