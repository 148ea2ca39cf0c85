"""DVC's own output proves that thresholds / NMS changes rerun scoring and never inference.

A temporary copy of the checkout's dvc.yaml, params.yaml, candor/ and stages/, with a tiny data set and
two tiny constant ONNX models named like the demo ones, in a fresh git + DVC repo.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.support_detect import constant_model, make_dataset, ultralytics_output, write_card

pytestmark = pytest.mark.slow

CLASSES = ["villager", "sheep", "deer", "boar", "berry_bush", "tree", "gold_mine", "stone_mine", "relic", "mill"]


def sh(args: list[str], cwd: Path) -> str:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               DVC_NO_ANALYTICS="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    import tests.support_detect as support

    root = tmp_path_factory.mktemp("dvcrepo")
    shutil.copytree(ROOT / "plots/templates", root / "plots/templates")     # dvc.yaml's plots use them
    for name in ("dvc.yaml", "params.yaml", "candor.lock"):
        shutil.copy(ROOT / name, root / name)
    old = support.CLASSES
    support.CLASSES = CLASSES
    try:
        make_dataset(root, {"a": {"size": (128, 64), "labels": ["2 0.5 0.5 0.25 0.25"]},
                            "b": {"size": (128, 64), "split": "test", "labels": ["1 0.5 0.5 0.25 0.25"]}})
        (root / "models").mkdir()
        rows = [[32, 32, 16, 8] + [0.0, 0.3] + [0.0] * 8,          # sheep 0.3
                [32, 32, 16, 8] + [0.0, 0.0, 0.25] + [0.0] * 7,    # deer 0.25, same place
                [10, 10, 8, 8] + [0.0] * 9 + [0.6]]                # mill 0.6
        for name in ("demo-v1", "demo-v2"):
            sha = constant_model(root / "models" / f"{name}.onnx", ultralytics_output(rows, n_classes=10))
            write_card(root / "models", name, sha)
    finally:
        support.CLASSES = old
    (root / ".gitignore").write_text("/build\n__pycache__/\n")
    sh(["git", "init", "-q"], root)
    sh(["dvc", "init", "-q"], root)
    shutil.copy(ROOT / ".dvcignore", root / ".dvcignore")     # __pycache__ is not part of a code dep
    sh(["dvc", "repro", "score-detection"], root)
    sh(["git", "add", "-A"], root)
    sh(["git", "commit", "-qm", "base"], root)
    return root


def test_base_run_produced_metrics(repo):
    assert (repo / "metrics/detection/detector/demo-v1.json").is_file()
    assert (repo / "build/detections/detector/demo-v2.jsonl").is_file()
    assert "Running stage" not in sh(["dvc", "repro", "score-detection"], repo)


def deer_tp(repo: Path, model: str = "demo-v1") -> int:
    import json

    return json.loads((repo / f"metrics/detection/detector/{model}.json").read_text())["all"]["per_class"]["deer"]["tp"]


def assert_scoring_only(out: str) -> None:
    assert "Running stage 'score-detection@detector'" in out, out
    assert "Running stage 'detect@" not in out, out
    assert "Stage 'detect@detector' didn't change, skipping" in out, out


def test_threshold_experiment_reruns_scoring_only_and_moves_the_metric(repo):
    assert deer_tp(repo) == 1                      # deer scored 0.25 >= thresholds.deer 0.2
    out = sh(["dvc", "exp", "run", "score-detection", "-S", "thresholds.deer=0.3", "-n", "deer03"], repo)
    assert_scoring_only(out)
    assert deer_tp(repo) == 0                      # 0.25 < 0.3: the deer is now missed
    assert yaml.safe_load((repo / "params.yaml").read_text())["thresholds"]["deer"] == 0.3
    assert sh(["git", "diff", "--numstat", "params.yaml"], repo).split()[:2] == ["1", "1"]   # one line
    assert "deer03" in sh(["dvc", "exp", "show", "--csv"], repo)


def test_per_model_thresholds_score_each_model_at_its_own(repo):
    """suggest-thresholds' line for demo-v2 (shlex-split, as a shell would) changes demo-v2 only; with the
    shared deer at 0.3, demo-v1 misses the deer (0.25) and demo-v2, serving 0.2, finds it; scoring only reruns."""
    import shlex

    from candor_eval.detection.scoring.suggest import exp_run_line

    line = shlex.split(exp_run_line("demo-v2", {"deer": 0.2}))
    out = sh([*line[:3], "score-detection", *line[3:], "-S", "thresholds.deer=0.3"], repo)
    assert_scoring_only(out)
    assert (deer_tp(repo, "demo-v1"), deer_tp(repo, "demo-v2")) == (0, 1)
    params = yaml.safe_load((repo / "params.yaml").read_text())
    assert params["thresholds_by_model"] == {"demo-v2": {"deer": 0.2}} and params["thresholds"]["deer"] == 0.3


def test_nms_change_reruns_scoring_only(repo):
    assert_scoring_only(sh(["dvc", "exp", "run", "score-detection", "-S", "detector.nms_iou=0.4"], repo))


def test_floor_change_does_rerun_inference(repo):
    """The control: the test above could fail, because a detect param does rerun inference."""
    out = sh(["dvc", "exp", "run", "score-detection", "-S", "detector.floor=0.1"], repo)
    assert "Running stage 'detect@detector'" in out, out
    assert "Running stage 'score-detection@detector'" in out, out


def test_plots_and_metrics_are_readable_by_dvc(repo):
    import json

    plots = json.loads(sh(["dvc", "plots", "show", "--json"], repo))
    assert not plots.get("errors"), plots.get("errors")
    ids = set(plots.get("data", plots))
    assert "plots/detection/pr/detector/demo-v1/deer.csv" in ids
    assert "plots/detection/confusion/detector/demo-v2.csv" in ids
    assert not any(i.endswith(".png") for i in ids)          # PNGs are drawn by `make figures`, not dvc
    # the detailed metrics are outputs, not DVC metrics: `dvc metrics` lists only metrics/headline.json
    shown = sh(["dvc", "metrics", "show", "--json"], repo)
    assert "demo-v2.json" not in shown and "metrics/headline.json" in shown
