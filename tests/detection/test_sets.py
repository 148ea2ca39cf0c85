"""The README's "Bring your own" walk on a fresh clone: a COCO-labelled set and an Ultralytics export
added with one manifest command and one line of params.yaml; nothing of the demo set reruns."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.test_pipeline import fresh_clone, sh

pytestmark = pytest.mark.slow

EXPORT = ROOT / "tests" / "data" / "ultralytics"
LINE = "    birds: [demo-v2, yolov8-tiny]\n"


@pytest.fixture(scope="module")
def walked(tmp_path_factory) -> tuple[Path, str]:
    """A reproduced fresh clone, then the walk: the set, the export's card, the manifest, one line."""
    repo = fresh_clone(tmp_path_factory.mktemp("walk"))
    sh(["dvc", "repro"], cwd=repo)
    sh([sys.executable, "-m", "tools.demo.coco_set", "data/birds", "--frames", "6"], cwd=repo)
    shutil.copyfile(EXPORT / "tiny-yolov8.onnx", repo / "models" / "yolov8-tiny.onnx")
    card = yaml.safe_load((EXPORT / "tiny-yolov8.yaml").read_text())
    (repo / "models" / "yolov8-tiny.yaml").write_text(yaml.safe_dump({**card, "onnx": "yolov8-tiny.onnx"},
                                                                     sort_keys=False))
    assert "wrote data/birds/manifest.csv: 7 files" in sh([sys.executable, "-m", "stages.fetch", "manifest",
                                                           "data/birds"], cwd=repo)
    params = (repo / "params.yaml").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(params) if line.startswith("    detector:")) + 1
    while params[at].startswith("    - "):                  # after the demo set's models
        at += 1
    (repo / "params.yaml").write_text("".join(params[:at] + [LINE] + params[at:]))
    return repo, sh(["dvc", "repro"], cwd=repo)


def test_the_params_change_is_one_line(walked):
    repo, _ = walked
    assert sh(["git", "diff", "--numstat", "params.yaml"], cwd=repo).split()[:2] == ["1", "0"]


def test_only_the_new_set_is_inferred_and_scored(walked):
    _, out = walked
    for stage in ("detect@birds", "score-detection@birds", "stats"):
        assert f"Running stage '{stage}'" in out, out
    for stage in ("detect@detector", "score-detection@detector", "score-lots"):
        assert f"Stage '{stage}' didn't change, skipping" in out, out


def test_the_new_set_has_its_own_metrics_outcomes_and_paired_tests(walked):
    repo, _ = walked
    for model in ("demo-v2", "yolov8-tiny"):
        assert (repo / "metrics" / "detection" / "birds" / f"{model}.json").is_file()
    frames = (repo / "metrics" / "outcomes" / "birds" / "detection-frames.csv").read_text().splitlines()
    assert len(frames) == 1 + 6 * 2 and frames[1].split(",")[1] == "test"   # no frames.csv: all test
    stats = json.loads((repo / "metrics" / "stats.json").read_text())
    assert stats["reference"]["detection.birds"] == "demo-v2"               # the set's first model
    paired = stats["paired"]["detection.birds.test.label_found"]
    assert list(paired["candidates"]) == ["yolov8-tiny"]
    assert paired["candidates"]["yolov8-tiny"]["a"]["unit"] == "label"
    assert stats["rates"]["detection.birds.demo-v2.test.micro.recall"]["unit"] == "label"
    assert not any(k.startswith("detection.birds.") and "demo-v1" in k for k in stats["rates"])


def test_the_pipeline_scores_the_coco_set_as_the_standalone_coco_mode_does(walked):
    """Two independent paths over the same COCO ground truth: the set's served detections, re-scored
    by `stages.coco_eval` (thresholds and NMS are idempotent on them), give the same micro counts."""
    repo, _ = walked
    out = repo / "build" / "coco-eval.json"
    sh([sys.executable, "-m", "stages.coco_eval", "--coco-gt", "data/birds/coco.json", "--coco-results",
        "build/coco-results/birds/demo-v2.json", "--params", "params.yaml", "--out", str(out)], cwd=repo)
    standalone = json.loads(out.read_text())["all"]["micro"]
    piped = json.loads((repo / "metrics/detection/birds/demo-v2.json").read_text())["all"]["micro"]
    assert piped["tp"] > 0
    assert [piped[k] for k in ("tp", "fp", "fn")] == [standalone[k] for k in ("tp", "fp", "fn")]


def test_after_the_walk_everything_is_up_to_date(walked):
    repo, _ = walked
    assert "Running stage" not in sh(["dvc", "repro"], cwd=repo)
