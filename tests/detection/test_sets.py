"""Tests for candor_eval/detection/sets.py: the configured detection sets, their folders by convention,
the fetch stage's per-set records; and (slow) the README's "Bring your own" walk on a fresh clone:
a COCO-labelled set and an Ultralytics export added with one manifest command and one line of
params.yaml, nothing of the demo set rerunning."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from candor_eval.common.errors import InputError
from candor_eval.common.manifest import sha256_file
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.sets import DetectionSet, detection_sets, find_set, set_folders, set_records
from tests.conftest import CANDOR, ROOT, reproduced_copy
from tests.test_pipeline import sh

EXPORT = ROOT / "tests" / "data" / "ultralytics"
LINE = "    birds: [demo-v2, yolov8-tiny]\n"


PARAMS = DetectorParams(sets={"detector": ["demo-v1", "demo-v2"], "birds": ["demo-v2", "yolov8-tiny"]})


def test_sets_in_params_order_each_with_its_reference_first():
    sets = detection_sets(PARAMS)
    assert sets == [DetectionSet("detector", ("demo-v1", "demo-v2")), DetectionSet("birds", ("demo-v2", "yolov8-tiny"))]
    assert [s.reference for s in sets] == ["demo-v1", "demo-v2"]


def test_find_set_defaults_to_the_first_and_names_the_key_of_an_unknown_set():
    assert find_set(PARAMS, None).name == "detector" and find_set(PARAMS, "birds").models == ("demo-v2", "yolov8-tiny")
    with pytest.raises(InputError, match=r"p.yaml:gate.set: unknown detection set") as err:
        find_set(PARAMS, "fish", where="p.yaml", key="gate.set")
    assert "detector, birds" in str(err.value)
    with pytest.raises(InputError, match=r"params.yaml:detector.sets: no detection set configured"):
        find_set(DetectorParams(), None)


def test_set_folders_by_convention_or_as_given():
    s, data, detections = set_folders(PARAMS, "birds")
    assert (s.name, data, detections) == ("birds", Path("data/birds"), Path("build/detections/birds"))
    _, data, detections = set_folders(PARAMS, None, data="elsewhere/d", detections=Path("x"))
    assert (data, detections) == (Path("elsewhere/d"), Path("x"))


def test_set_records_hold_the_data_record_and_each_models_card_hash(tmp_path):
    """One ``detection-<set>.json`` per set with a verified data folder and a card for every model;
    else a Problem naming the manifest or the card, and no record of that set."""
    for m in ("demo-v1", "demo-v2"):
        (tmp_path / f"{m}.yaml").write_text(f"card of {m}\n")
    records, problems = set_records(detection_sets(PARAMS), data_records={"detector": {"sha256": "d"}},
                                    model_records={"demo-v1": {"sha256": "a"}, "demo-v2": {"sha256": "b"}},
                                    models=tmp_path)
    assert list(records) == ["detection-detector.json"]
    assert records["detection-detector.json"] == {
        "set": "detector", "data": {"sha256": "d"},
        "models": {m: {"sha256": sha, "card_sha256": sha256_file(tmp_path / f"{m}.yaml")}
                   for m, sha in (("demo-v1", "a"), ("demo-v2", "b"))}}
    assert [(p.where, p.what) for p in problems] == [
        ("data/birds/manifest.csv", "detection set has no manifest"),
        (f"{tmp_path / 'yolov8-tiny'}.yaml", "model card of detection set 'birds' not found")]


def test_a_set_with_a_file_its_manifest_does_not_list_has_no_record_and_a_problem_naming_it(tmp_path):
    """Fetch never reports verified a set whose readers would read an unverified file."""
    from candor_eval.common.manifest import build_manifest_rows, format_manifest
    folder = tmp_path / "data" / "detector"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "a.png").write_bytes(b"a")
    (folder / "manifest.csv").write_text(format_manifest(build_manifest_rows(folder)))
    (folder / "images" / "b.png").write_bytes(b"b")                     # added, not listed
    for m in ("demo-v1", "demo-v2"):
        (tmp_path / f"{m}.yaml").write_text(f"card of {m}\n")
    one = DetectorParams(sets={"detector": ["demo-v1", "demo-v2"]})
    args = dict(data_records={"detector": {"sha256": "d"}}, model_records={"demo-v1": {}, "demo-v2": {}},
                models=tmp_path, data_root=tmp_path / "data")
    records, problems = set_records(detection_sets(one), **args)
    assert records == {} and [p.where for p in problems] == [str(folder / "images" / "b.png")]
    (folder / "images" / "b.png").unlink()
    assert list(set_records(detection_sets(one), **args)[0]) == ["detection-detector.json"]


@pytest.fixture(scope="module")
def walked(reproduced_once, tmp_path_factory) -> tuple[Path, str]:
    """A reproduced fresh clone (a copy of the session's), then the walk: the set, the export's card, the
    manifest, one line."""
    repo = reproduced_copy(reproduced_once, tmp_path_factory.mktemp("walk"))
    sh([sys.executable, "-m", "tools.demo.coco_set", "data/birds", "--frames", "6"], cwd=repo)
    shutil.copyfile(EXPORT / "tiny-yolov8.onnx", repo / "models" / "yolov8-tiny.onnx")
    card = yaml.safe_load((EXPORT / "tiny-yolov8.yaml").read_text())
    (repo / "models" / "yolov8-tiny.yaml").write_text(yaml.safe_dump({**card, "onnx": "yolov8-tiny.onnx"},
                                                                     sort_keys=False))
    assert "wrote data/birds/manifest.csv: 7 files" in sh([*CANDOR, "fetch", "manifest",
                                                           "data/birds"], cwd=repo)
    params = (repo / "params.yaml").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(params) if line.startswith("    detector:")) + 1
    while params[at].startswith("    - "):                  # after the demo set's models
        at += 1
    (repo / "params.yaml").write_text("".join(params[:at] + [LINE] + params[at:]))
    return repo, sh(["dvc", "repro"], cwd=repo)


@pytest.mark.slow
def test_the_params_change_is_one_line(walked):
    repo, _ = walked
    assert sh(["git", "diff", "--numstat", "params.yaml"], cwd=repo).split()[:2] == ["1", "0"]


@pytest.mark.slow
def test_only_the_new_set_is_inferred_and_scored(walked):
    _, out = walked
    for stage in ("detect@birds", "score-detection@birds", "stats"):
        assert f"Running stage '{stage}'" in out, out
    for stage in ("detect@detector", "score-detection@detector", "score-lots"):
        assert f"Stage '{stage}' didn't change, skipping" in out, out


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_pipeline_scores_the_coco_set_as_the_standalone_coco_mode_does(walked):
    """Two independent paths over the same COCO ground truth: the set's served detections, re-scored
    by `stages.coco_eval` (thresholds and NMS are idempotent on them), give the same micro counts."""
    repo, _ = walked
    out = repo / "build" / "coco-eval.json"
    sh([*CANDOR, "coco-eval", "--coco-gt", "data/birds/coco.json", "--coco-results",
        "build/coco-results/birds/demo-v2.json", "--params", "params.yaml", "--out", str(out)], cwd=repo)
    standalone = json.loads(out.read_text())["all"]["micro"]
    piped = json.loads((repo / "metrics/detection/birds/demo-v2.json").read_text())["all"]["micro"]
    assert piped["tp"] > 0
    assert [piped[k] for k in ("tp", "fp", "fn")] == [standalone[k] for k in ("tp", "fp", "fn")]


@pytest.mark.slow
def test_after_the_walk_everything_is_up_to_date(walked):
    repo, _ = walked
    assert "Running stage" not in sh(["dvc", "repro"], cwd=repo)
