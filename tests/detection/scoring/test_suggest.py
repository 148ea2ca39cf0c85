"""Tests for candor_eval/detection/scoring/suggest.py: per class, the threshold of best F1 on the dev frames
only (ties: the highest), classes under ``match.min_support`` keeping the model's served default.

The tiny workspace (tests/stages/test_score_detection.py): dev frame ``a`` has a sheep and a deer label;
the model serves there a sheep at 0.9 (TP), a deer at 0.3 on the sheep (FP), a deer at 0.5 on the deer
(TP) and a relic at 0.6 (never labelled). Deer F1 is 2/3 up to 0.3 and 1 up to 0.5: best 0.5."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.config import DetectorParams, MatchParams, ThresholdParams
from candor_eval.detection.model_card import load_card
from candor_eval.detection.scoring.suggest import Suggestion, exp_run_line, suggest_thresholds
from tests.stages.test_score_detection import make_repo

SHARED = ThresholdParams({"default": 0.35, "deer": 0.2})


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    """The tiny workspace of tests/stages/test_score_detection.py, as the current folder."""
    monkeypatch.chdir(tmp_path)
    return make_repo(tmp_path)


def suggest(*, min_support: int, threshold_params: ThresholdParams = SHARED, data: str = "data/detector"):
    return suggest_thresholds("tiny", card=load_card(Path("models/tiny.yaml")), data=Path(data),
                              detections=Path("build/detections/detector"),
                              detector=DetectorParams(sets={"detector": ["tiny"]}, floor=0.05),
                              match=MatchParams(min_support=min_support), threshold_params=threshold_params)


def test_best_f1_per_class_on_the_dev_frame(repo):
    s = suggest(min_support=1)
    assert (s.frames, s.classes, s.default) == (1, ("deer", "sheep", "relic"), 0.35)
    assert s.support == {"deer": 1, "sheep": 1, "relic": 0}
    assert s.current == {"deer": 0.2, "sheep": 0.35, "relic": 0.35}
    assert s.best == {"deer": 0.5, "sheep": 0.9, "relic": 0.35}       # relic: no label, keeps the default
    assert s.changes() == {"deer": 0.5, "sheep": 0.9}


def test_under_supported_classes_keep_the_models_served_default(repo):
    """min_support 2: no class qualifies; each keeps the model's default (0.4 from its own keys)."""
    own = ThresholdParams({"default": 0.35, "deer": 0.2}, {"tiny": {"default": 0.4}})
    s = suggest(min_support=2, threshold_params=own)
    assert s.default == 0.4 and s.best == {"deer": 0.4, "sheep": 0.4, "relic": 0.4}
    assert s.changes() == {"deer": 0.4}                                 # deer serves 0.2 today


def test_a_data_set_without_dev_frames_is_refused(repo):
    frames = Path("data/detector/frames.csv")
    frames.write_text(frames.read_text().replace(",dev", ",test"))
    with pytest.raises(InputError, match="no dev frames to tune on"):
        suggest(min_support=1)


def test_changes_are_the_classes_whose_suggestion_differs():
    s = Suggestion(model="m", frames=3, default=0.35, classes=("a", "b"), support={"a": 5, "b": 5},
                   current={"a": 0.3, "b": 0.4}, best={"a": 0.3 + 1e-12, "b": 0.41})
    assert s.changes() == {"b": 0.41}


def test_exp_run_line_quotes_names():
    assert exp_run_line("demo-v2", {"deer": 0.27, "big deer": 0.4}) == (
        "dvc exp run -S ++thresholds_by_model.demo-v2.deer=0.27 -S '++thresholds_by_model.demo-v2.big deer=0.4'")
