"""The committed demo detectors load in onnxruntime and match their model cards (no torch)."""
from __future__ import annotations

import re

import numpy as np
import onnxruntime as ort
import pytest

from candor_eval.common.manifest import load_manifest, sha256_file
from candor_eval.detection.model_card import load_card, onnx_path
from tests.conftest import ROOT
from tools.demo.scenes import CLASSES

CARDS = [ROOT / "models" / "demo-v1.yaml", ROOT / "models" / "demo-v2.yaml"]


@pytest.mark.parametrize("card_file", CARDS, ids=lambda p: p.stem)
def test_card_matches_onnx_and_eval_set(card_file):
    card = load_card(card_file)
    onnx = onnx_path(card_file, card)
    assert sha256_file(onnx) == card.sha256
    assert onnx.stat().st_size <= 4 * 1024 * 1024
    assert card.classes == list(CLASSES)
    assert card.output_layout == "ultralytics [1, 4+C, N]"
    assert "thresholds" not in card_file.read_text()      # served thresholds live in params.yaml only
    assert card.class_map is None                           # the demo models detect every class of the set
    assert card.eval_manifest_sha256 == load_manifest(ROOT / "data" / "detector" / "manifest.csv").sha256
    assert card.training is not None and card.training["sessions"] and "seed" in card.training


@pytest.mark.parametrize("card_file", CARDS, ids=lambda p: p.stem)
def test_onnx_runs_with_declared_shapes(card_file):
    card = load_card(card_file)
    sess = ort.InferenceSession(str(onnx_path(card_file, card)), providers=["CPUExecutionProvider"])
    (inp,) = sess.get_inputs()
    h, w = card.input_size
    assert inp.shape == [1, 3, h, w]
    rng = np.random.default_rng(0)
    out = sess.run(None, {inp.name: rng.random((1, 3, h, w), dtype=np.float32)})
    assert len(out) == 1
    y = out[0]
    assert y.shape == (1, 4 + len(card.classes), (h // 8) * (w // 8))
    assert np.isfinite(y).all()
    scores = y[0, 4:]
    assert (scores >= 0).all() and (scores <= 1).all()
    assert (y[0, 2:4] > 0).all()  # widths and heights are positive


def test_the_two_models_differ():
    assert load_card(CARDS[0]).sha256 != load_card(CARDS[1]).sha256


def test_no_torch_in_the_library_stages_or_tests():
    """torch is a tools-only dependency: nothing CI imports may import it."""
    pattern = re.compile(r"^\s*(import torch|from torch)", re.M)
    for path in [*(ROOT / "candor_eval").rglob("*.py"), *(ROOT / "tests").rglob("*.py"),
                 *(ROOT / "tools" / "demo").glob("*.py")]:
        if path.name in ("train.py", "model.py") and path.parent.name == "demo":
            continue
        assert not pattern.search(path.read_text()), f"{path} imports torch"
