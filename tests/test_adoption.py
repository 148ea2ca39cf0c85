"""Adoption: candor installed from its wheel into a fresh venv, used in a stranger's Git + DVC repository.

No candor checkout is on any path: the wheel is built from a copy of this working tree, installed
with its dependencies into a new venv, and every command runs with that venv first on ``PATH``
and the repository's own ``.venv`` removed from it. The stranger's repository has its own
``stages/`` package, its own ``params.yaml`` with a ``train:`` section and its own ``train`` ->
``export`` pipeline (a stand-in for a real training run: it picks one of two ONNX detectors by
``train.epochs``); candor's project goes into ``eval/``, and is never written by hand:

- the detector shape (as docs/adopting.md walks it): ``candor init``, ``candor add set``, ``candor
  add model``, ``dvc repro``; ``dvc exp run -S train.epochs=...`` retrains and re-evaluates in one
  command, ``dvc exp run -S eval/params.yaml:thresholds.default=...`` reruns scoring and stats only,
  and ``dvc metrics diff`` shows the headline;
- the upgrade: a release of candor that changes one scoring module; ``candor check`` names the stage,
  ``candor lock`` rewrites the lock, and ``dvc status`` then lists scoring and no inference.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.adoption import build_wheel, new_repository, run
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

CLASSES = [line for line in (ROOT / "data/detector/classes.txt").read_text().split("\n") if line]

USER_DVC_YAML = """\
stages:
  train:
    cmd: python -m stages.train
    deps: [stages/train.py]
    params: [train]
    outs: [runs/train.txt]
  export:
    cmd: python -m stages.export && candor add model best --onnx models/best.onnx --dir eval --set val
    deps: [stages/export.py, runs/train.txt, weights]
    outs: [models/best.onnx, eval/models/best.onnx, eval/models/best.yaml]
"""
TRAIN = """\
import pathlib, yaml
epochs = yaml.safe_load(open("params.yaml"))["train"]["epochs"]
pathlib.Path("runs").mkdir(exist_ok=True)
pathlib.Path("runs/train.txt").write_text(f"epochs {epochs}\\n")
"""
EXPORT = """\
import pathlib, shutil
epochs = int(pathlib.Path("runs/train.txt").read_text().split()[1])
pathlib.Path("models").mkdir(exist_ok=True)
shutil.copy("weights/long.onnx" if epochs >= 5 else "weights/short.onnx", "models/best.onnx")
"""


def weights(dest: Path) -> None:
    """Two detectors as an Ultralytics export carries them: the demo's ONNX models with Ultralytics' metadata."""
    import onnx

    dest.mkdir(parents=True)
    for name, model in (("short", "demo-v1"), ("long", "demo-v2")):
        m = onnx.load(str(ROOT / f"models/{model}.onnx"))
        meta = {"task": "detect", "stride": "8", "batch": "1", "imgsz": "[320, 320]",
                "names": repr(dict(enumerate(CLASSES)))}
        for key, value in meta.items():
            m.metadata_props.add(key=key, value=value)
        onnx.save(m, str(dest / f"{name}.onnx"))


def dataset(root: Path) -> None:
    """An Ultralytics data set: images/val, labels/val and a data.yaml, from the demo's frames."""
    for sub in ("images", "labels"):
        (root / "datasets" / sub / "val").mkdir(parents=True)
        for f in sorted((ROOT / "data/detector" / sub).iterdir()):
            shutil.copy(f, root / "datasets" / sub / "val" / f.name)
    (root / "data.yaml").write_text(yaml.safe_dump({"path": "datasets", "train": "images/val", "val": "images/val",
                                                    "names": dict(enumerate(CLASSES))}, sort_keys=False))


@pytest.fixture(scope="module")
def detector_repo(installed) -> dict:
    """The detector-training repository, wired by candor's commands only, after its first ``dvc repro``."""
    env, repo = installed["env"], installed["base"] / "trainer"
    new_repository(repo, env)
    (repo / "stages").mkdir()
    (repo / "stages/__init__.py").write_text('"""The team\'s own stages."""\n')
    (repo / "stages/train.py").write_text(TRAIN)
    (repo / "stages/export.py").write_text(EXPORT)
    (repo / "params.yaml").write_text("train:\n  epochs: 3\n  seed: 1\n")
    (repo / "dvc.yaml").write_text(USER_DVC_YAML)
    weights(repo / "weights")
    dataset(repo)
    steps = {}
    steps["init"] = run(["candor", "init", "eval", "--track", "detector"], cwd=repo, env=env).stdout
    steps["add set"] = run(["candor", "add", "set", "val", "--from", "data.yaml", "--dir", "eval"],
                           cwd=repo, env=env).stdout
    steps["add model"] = run(["candor", "add", "model", "baseline", "--onnx", "weights/short.onnx", "--dir", "eval",
                              "--set", "val"], cwd=repo, env=env).stdout
    run(["git", "add", "-A"], cwd=repo, env=env)
    run(["git", "commit", "-qm", "candor"], cwd=repo, env=env)
    steps["repro"] = run(["dvc", "repro", "eval/dvc.yaml"], cwd=repo, env=env).stdout
    run(["git", "add", "-A"], cwd=repo, env=env)
    run(["git", "commit", "-qm", "first evaluation"], cwd=repo, env=env)
    return {"repo": repo, "env": env, "steps": steps}


def test_the_wheel_installs_only_candor_eval_and_runs_from_no_checkout(installed):
    import zipfile

    (wheel,) = (installed["base"] / "dist").glob("*.whl")
    tops = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"candor_eval"}
    where = run(["python", "-c", "import candor_eval, shutil; print(candor_eval.__file__, shutil.which('candor'))"],
                cwd=installed["base"], env=installed["env"]).stdout
    assert str(installed["venv"]) in where and str(ROOT) not in where


def test_init_writes_candors_project_beside_the_users_own(detector_repo):
    repo = detector_repo["repo"]
    assert (repo / "params.yaml").read_text() == "train:\n  epochs: 3\n  seed: 1\n"
    assert (repo / "dvc.yaml").read_text() == USER_DVC_YAML
    assert {"dvc.yaml", "params.yaml", "candor.lock"} <= {p.name for p in (repo / "eval").iterdir()}
    assert "candor add set" in detector_repo["steps"]["init"]


def test_the_first_repro_evaluates_both_models_with_the_users_pipeline(detector_repo):
    repo, out = detector_repo["repo"], detector_repo["steps"]["repro"]
    for stage in ("train", "export", "eval/dvc.yaml:fetch", "eval/dvc.yaml:detect@val",
                  "eval/dvc.yaml:score-detection@val", "eval/dvc.yaml:stats"):
        assert f"Running stage '{stage}'" in out, stage
    sets = yaml.safe_load((repo / "eval/params.yaml").read_text())["detector"]["sets"]
    assert sets == {"val": ["baseline", "best"]}
    headline = yaml.safe_load((repo / "eval/metrics/headline.json").read_text())
    assert "best" in str(headline) and "prompt" not in str(headline)
    assert not (repo / "eval/plots/report/details").exists() or not list(
        (repo / "eval/plots/report/details").glob("lots*"))


def test_retraining_reruns_training_then_evaluation_in_one_command(detector_repo):
    repo, env = detector_repo["repo"], detector_repo["env"]
    before = (repo / "eval/metrics/headline.json").read_text()
    out = run(["dvc", "exp", "run", "-S", "train.epochs=8", "eval/dvc.yaml"], cwd=repo, env=env).stdout
    for stage in ("train", "export", "eval/dvc.yaml:detect@val", "eval/dvc.yaml:score-detection@val",
                  "eval/dvc.yaml:stats"):
        assert f"Running stage '{stage}'" in out, stage
    assert (repo / "eval/metrics/headline.json").read_text() != before     # the other detector is evaluated
    diff = run(["dvc", "metrics", "diff", "HEAD"], cwd=repo, env=env).stdout
    assert "eval/metrics/headline.json" in diff and "best" in diff


def test_a_threshold_sweep_reruns_scoring_and_stats_only(detector_repo):
    repo, env = detector_repo["repo"], detector_repo["env"]
    out = run(["dvc", "exp", "run", "-S", "eval/params.yaml:thresholds.default=0.4", "eval/dvc.yaml"], cwd=repo,
              env=env).stdout
    assert "Running stage 'eval/dvc.yaml:score-detection@val'" in out and "Running stage 'eval/dvc.yaml:stats'" in out
    for stage in ("train", "export", "eval/dvc.yaml:fetch", "eval/dvc.yaml:detect@val"):
        assert f"Running stage '{stage}'" not in out, stage


def test_an_upgrade_that_changes_scoring_reruns_scoring_and_no_inference(detector_repo, installed):
    repo, env = detector_repo["repo"], detector_repo["env"]
    run(["git", "checkout", "-q", "--", "."], cwd=repo, env=env)          # back to the first evaluation
    run(["dvc", "checkout", "-q"], cwd=repo, env=env)
    src = installed["src"]
    metrics = src / "candor_eval/detection/scoring/metrics.py"
    metrics.write_text(metrics.read_text() + "\n# a release that changes scoring only\n")
    pyproject = src / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "', 'version = "9', 1))
    wheel = build_wheel(src, installed["base"] / "dist2")
    run([str(installed["venv"] / "bin/python"), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
         str(wheel)], cwd=repo, env=env)
    check = run(["candor", "check", "--dir", "eval"], cwd=repo, env=env, check=False)
    assert check.returncode == 2 and "code.score-detection" in check.stderr and "candor lock" in check.stderr
    assert "code.detect" not in check.stderr
    stale = run(["dvc", "repro", "-f", "-s", "eval/dvc.yaml:score-detection@val"], cwd=repo, env=env, check=False)
    assert stale.returncode != 0 and "candor lock" in stale.stdout + stale.stderr    # old lock, new code: refused
    run(["candor", "lock", "--dir", "eval"], cwd=repo, env=env)
    status = run(["dvc", "status"], cwd=repo, env=env).stdout
    assert "eval/dvc.yaml:score-detection@val" in status, status
    assert "detect@val" not in status.replace("score-detection@val", ""), status
    assert "train" not in status and "export" not in status, status
