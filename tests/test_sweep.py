"""`make sweep` on a fresh clone, as the README's "Sweeps" block runs it (the block's quoted output
checked, the one sweep of the suite): a three-value queued sweep through DVC's queue; inference
never reruns and each experiment's headline metrics move the way a higher threshold must move them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CANDOR, reproduced_copy
from tests.test_pipeline import sh
from tests.test_readme import blocks, status, walk

pytestmark = pytest.mark.slow

VALUES = (0.15, 0.25, 0.3)


@pytest.fixture(scope="module")
def swept(reproduced_once, tmp_path_factory) -> Path:
    repo = reproduced_copy(reproduced_once, tmp_path_factory.mktemp("sweep"))     # a fresh clone, reproduced
    sweep = blocks("Sweeps")[0]
    assert sweep[0].command == f'make sweep PARAM=thresholds.deer VALUES="{" ".join(map(str, VALUES))}"'
    walk(repo, sweep)                  # the README's sweep as a reader runs it, its quoted lines checked
    assert status(repo) == ""          # queued experiments run in temporary copies
    return repo


def experiments(repo: Path) -> dict[float, dict]:
    """deer threshold -> (experiment name, headline metrics) of every experiment of the sweep."""
    out = {}
    for commit in json.loads(sh(["dvc", "exp", "show", "--json"], cwd=repo)):
        for exp in commit.get("experiments") or []:
            for rev in exp["revs"]:
                data = rev["data"]
                deer = data["params"]["params.yaml"]["data"]["thresholds"]["deer"]
                out[deer] = (rev["name"], data["metrics"]["metrics/headline.json"]["data"])
    return out


def test_every_value_became_an_experiment_that_reran_scoring_only(swept):
    exps = experiments(swept)
    assert sorted(exps) == list(VALUES)
    for name, _ in exps.values():
        log = sh(["dvc", "queue", "logs", name], cwd=swept)
        assert "Running stage 'score-detection@detector'" in log, log[-2000:]
        assert "Running stage 'detect@" not in log and "Stage 'detect@detector' didn't change" in log


def test_a_higher_deer_threshold_keeps_fewer_detections(swept):
    """FP per frame and recall can only fall as one class's threshold rises (same raw boxes)."""
    exps = experiments(swept)
    for model in ("demo-v1", "demo-v2"):
        fp = [exps[v][1]["detection"]["detector"][model]["fp_per_frame"] for v in VALUES]
        recall = [exps[v][1]["detection"]["detector"][model]["recall"] for v in VALUES]
        assert fp[0] > fp[1] > fp[2] and recall[0] >= recall[1] >= recall[2], (model, fp, recall)


def test_the_sweep_reads_in_100_columns(swept):
    """``make sweep`` ends with the ranking (stages/sweep_table.py): every value, the swept param and the
    sort key visible, no line wider than 100 characters."""
    out = sh([*CANDOR, "sweep-table", "--param", "thresholds.deer",
              "--sort", "metrics/headline.json:detection.detector.demo-v2.dev.f1"], cwd=swept)
    lines = out.splitlines()
    assert max(map(len, lines)) <= 100, out
    assert lines[0].split()[:3] == ["experiment", "thresholds.deer", "f1"]
    rows = lines[2:next(i for i, line in enumerate(lines) if line.startswith("ranked by"))]
    assert {float(line.split()[1]) for line in rows} >= set(VALUES)
