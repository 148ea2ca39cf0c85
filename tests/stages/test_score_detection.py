"""Tests for the score-detection stage (stages/score_detection.py, and through it
candor_eval/detection/scoring/evaluation.py) on a tiny ONNX model."""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages import detect, fetch, score_detection
from tests.detection.scoring.test_truth import COCO as COCO_GT
from tests.support_detect import constant_model, make_dataset, ultralytics_output, write_card

# input 64x64, frames 128x64: scale 0.5, pad_y 16
ROWS = [[32, 32, 16, 8, 0.0, 0.9, 0.0],      # sheep 0.9 -> [48, 24, 80, 40]
        [32, 32, 16, 8, 0.3, 0.0, 0.0],      # deer 0.3 at the same place
        [10, 20, 4, 4, 0.0, 0.0, 0.6],       # relic 0.6 -> [16, 4, 24, 12] (relic is never labelled)
        [32, 32.5, 16, 8, 0.0, 0.8, 0.0],    # duplicate sheep 0.8 -> NMS
        [50, 40, 8, 8, 0.5, 0.0, 0.0]]       # deer 0.5 -> [92, 40, 108, 56]
FRAMES = {
    "a": {"size": (128, 64), "split": "dev", "zoom": "1", "session": "s1",
          "labels": ["1 0.5 0.5 0.25 0.25", "0 0.78125 0.75 0.125 0.25"]},
    "b": {"size": (128, 64), "split": "test", "zoom": "2", "session": "s2",
          "labels": ["0 0.0625 0.125 0.125 0.25"]},
}
PARAMS = """detector:
  sets: {detector: [tiny]}
  floor: 0.05
  nms_iou: 0.5
  providers: [CPUExecutionProvider]
thresholds:
  default: 0.35
  deer: 0.2
match:
  iou: 0.5
  min_support: 2
  critical: [deer, sheep]
  bands: [16, 48]
"""


def make_repo(tmp_path: Path) -> Path:
    """The tiny workspace in ``tmp_path`` (the current folder): data set, model ``tiny``, params,
    fetched and detected (shared with the tests of the stages that read its detections)."""
    make_dataset(tmp_path, FRAMES)
    (tmp_path / "models").mkdir()
    sha = constant_model(tmp_path / "models" / "tiny.onnx", ultralytics_output(ROWS))
    write_card(tmp_path / "models", "tiny", sha, input_size=[64, 64])
    (tmp_path / "params.yaml").write_text(PARAMS)
    assert run_main(fetch.main, ["verify", "--data", "data", "--models", "models", "--out", "build/verified"]) == 0
    assert run_main(detect.main, ["--set", "detector", "--out", "build/detections/detector"]) == 0
    return tmp_path


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return make_repo(tmp_path)


def run_score(*extra):
    return run_main(score_detection.main, ["--params", "params.yaml", *extra])


def test_pipeline_metrics_hand_computed(repo):
    assert run_score() == 0
    m = json.loads(Path("metrics/detection/detector/tiny.json").read_text())
    assert list(m) == ["all", "dev", "test", "ap", "counts"]
    # AP (every box after NMS): deer by score a-0.5 TP, b-0.5 FP, a-0.3 FP, b-0.3 FP of 2 labels: precision 1
    # up to recall 0.5 (51 of 101 points), at every IoU (the TP is exact); sheep a-0.9 TP first: 1; relic no labels
    ap = m["ap"]["all"]
    assert ap["per_class"]["deer"]["ap50"] == pytest.approx(51 / 101, abs=1e-12)
    assert ap["per_class"]["sheep"]["ap50_95"] == pytest.approx(1.0, abs=1e-12)
    assert ap["per_class"]["relic"] == {"category_id": 3, "ap50": None, "ap50_95": None}
    assert ap["map50"] == pytest.approx((51 / 101 + 1) / 2, abs=1e-12)
    # frame a: the deer at 0.3 on the sheep is a class confusion, the relic background; frame b: all four
    # boxes on nothing (background), its deer missed with nothing aimed at it; both TPs are exact boxes
    none = {"localisation": 0, "class_confusion": 0, "duplicate": 0, "both": 0}
    assert m["all"]["micro"] == {"precision": 0.25, "recall": 0.666667, "f1": 0.363636, "tp": 2, "fp": 6, "fn": 1,
                                 "fp_per_frame": 3.0, "frames": 2,
                                 "fp_anatomy": {**none, "class_confusion": 1, "background": 5},
                                 "fn_anatomy": {"aimed": 0, "missed": 1},
                                 "tp_quality": {"tp": 2, "iou_median": 1.0, "iou_p10": 1.0, "edge_error_px": 0.0}}
    assert (m["dev"]["micro"]["tp"], m["dev"]["micro"]["fp"], m["dev"]["micro"]["fn"]) == (2, 2, 0)
    assert (m["test"]["micro"]["tp"], m["test"]["micro"]["fp"], m["test"]["micro"]["fn"]) == (0, 4, 1)
    assert m["all"]["per_class"]["relic"] == {"precision": 0.0, "recall": None, "f1": 0.0, "support": 0, "tp": 0,
                                              "fp": 2, "fn": 0, "qualified": False,
                                              "fp_anatomy": {**none, "background": 2},
                                              "fn_anatomy": {"aimed": 0, "missed": 0},
                                              "tp_quality": {"tp": 0, "iou_median": None, "iou_p10": None,
                                                             "edge_error_px": None}}
    assert m["all"]["per_class"]["deer"]["qualified"] is True and m["all"]["per_class"]["deer"]["support"] == 2
    assert m["all"]["critical"] == {"deer": {"missed": 1, "wrong": 1}, "sheep": {"missed": 0, "wrong": 0},
                                    "total": {"missed": 1, "wrong": 1}}
    assert list(m["all"]["by_zoom"]) == ["zoom_1", "zoom_2"]
    assert list(m["all"]["by_band"]) == ["lt16", "16to48", "ge48"]


def test_outcome_tables_follow_conventions(repo):
    assert run_score() == 0
    frames = Path("metrics/outcomes/detector/detection-frames.csv").read_text()
    # then fp_localisation, fp_class_confusion, fp_duplicate, fp_background, fp_both, fn_aimed, fn_missed, tp_strict
    assert frames == ("frame,split,session,zoom,model,tp,fp,fn,fp_localisation,fp_class_confusion,fp_duplicate,"
                      "fp_background,fp_both,fn_aimed,fn_missed,tp_strict\n"
                      "a,dev,s1,1,tiny,2,2,0,0,1,0,1,0,0,0,2\nb,test,s2,2,tiny,0,4,1,0,0,0,4,0,0,1,0\n")
    labels = list(csv.DictReader(open("metrics/outcomes/detector/detection-labels.csv")))
    assert [(r["frame"], r["label"], r["class"], r["found"]) for r in labels] == [
        ("a", "0", "sheep", "1"), ("a", "1", "deer", "1"), ("b", "0", "deer", "0")]
    assert list(labels[0]) == ["frame", "split", "label", "class", "model", "found"]


def test_threshold_change_moves_the_operating_point(repo):
    Path("params.yaml").write_text(PARAMS.replace("deer: 0.2", "deer: 0.35"))
    assert run_score() == 0
    m = json.loads(Path("metrics/detection/detector/tiny.json").read_text())
    assert (m["all"]["micro"]["tp"], m["all"]["micro"]["fp"], m["all"]["micro"]["fn"]) == (2, 4, 1)
    assert m["all"]["critical"]["deer"]["wrong"] == 0


def test_outputs_are_byte_deterministic_and_hold_no_png(repo):
    def snapshot():
        return {p: p.read_bytes() for root in ("plots", "metrics") for p in sorted(Path(root).rglob("*"))
                if p.is_file()}

    assert run_score() == 0
    first = snapshot()
    assert len(first) > 10 and not any(p.suffix == ".png" for p in first)   # PNGs: stages.figures
    assert run_score() == 0
    assert snapshot() == first


def test_plot_data_files(repo):
    assert run_score() == 0
    pr = Path("plots/detection/pr/detector/tiny/deer.csv").read_text().splitlines()
    assert pr[0] == "threshold,precision,recall"
    f1 = {r["threshold"]: r for r in csv.DictReader(open("plots/detection/f1/detector/tiny/all.csv"))}
    # one threshold 0.35 for every class: TP 2, FP 4, FN 1 -> F1 = 4 / 9
    assert f1["0.35"]["f1"] == "0.444444"
    conf = list(csv.DictReader(open("plots/detection/confusion/detector/tiny.csv")))
    assert len(conf) == 4 * 4                                           # every cell: 3 classes + background
    count = {(r["actual"], r["predicted"]): int(r["count"]) for r in conf}
    # on the headline split, test: frame b alone, no TP, its 4 FPs on background, its deer missed
    assert sum(n for (a, p), n in count.items() if a == p != "background") == 0
    assert sum(n for (a, _), n in count.items() if a == "background") == 4      # every FP of frame b
    assert sum(n for (_, p), n in count.items() if p == "background") == 1      # the missed deer
    assert count[("deer", "background")] == 1 and float(next(
        r["row_share"] for r in conf if r["actual"] == "deer" and r["predicted"] == "background")) == 1
    bars = list(csv.DictReader(open("plots/detection/per_class/detector/f1.csv")))
    assert [(r["model"], r["class"]) for r in bars] == [("tiny", "deer"), ("tiny", "sheep"), ("tiny", "relic")]
    # the comparison files are on the headline split: test is frame b alone (TP 0, FP 4, FN 1 at 0.35)
    f1_test = {r["threshold"]: r for r in csv.DictReader(open("plots/detection/f1_models/detector/all.csv"))}
    assert (f1_test["0.35"]["model"], f1_test["0.35"]["f1"]) == ("tiny", "0")
    assert {r["support"] for r in bars} == {"1", "0"}          # deer: the one test label; the others none


def test_coco_export_of_served_detections(repo):
    assert run_score() == 0
    res = json.loads(Path("build/coco-results/detector/tiny.json").read_text())
    # served: 6 FP + 2 TP = 8 kept detections (the NMS duplicate is gone)
    assert len(res) == 8
    assert {"image_id", "category_id", "bbox", "score"} == set(res[0])
    sheep = [r for r in res if r["category_id"] == 2 and r["image_id"] == 1]
    assert sheep == [{"image_id": 1, "category_id": 2, "bbox": [48.0, 24.0, 32.0, 16.0], "score": 0.9}]


@pytest.mark.parametrize("thresholds, message", [
    ("  default: 0.35\n  moose: 0.2\n", "unknown class name"),
    ("  default: 0.35\n  deer: 0.01\n", ">= detector.floor = 0.05"),
    ("  deer: 0.2\n", "default"),
    ("  default: .nan\n  deer: 0.2\n", "params.yaml:thresholds.default: non-finite number"),   # NaN is no threshold
])
def test_threshold_config_errors(repo, capsys, thresholds, message):
    text = PARAMS.replace("  default: 0.35\n  deer: 0.2\n", thresholds)
    Path("params.yaml").write_text(text)
    assert run_score() == 2
    err = capsys.readouterr().err
    assert message in err
    if "moose" in thresholds:
        assert "deer, sheep, relic" in err
    assert not Path("metrics/detection/detector/tiny.json").exists()


def test_unknown_critical_class_is_a_config_error(repo, capsys):
    Path("params.yaml").write_text(PARAMS.replace("critical: [deer, sheep]", "critical: [deer, goat]"))
    assert run_score() == 2
    assert "goat" in capsys.readouterr().err


def test_stale_detections_are_refused(repo, capsys):
    Path("params.yaml").write_text(PARAMS.replace("floor: 0.05", "floor: 0.1"))
    assert run_score() == 2
    assert "another detector.floor" in capsys.readouterr().err


def test_detections_made_with_another_preprocessing_are_refused(repo, capsys):
    """A card whose preprocess changed after inference: its served pixels are not the ones scored."""
    card = Path("models/tiny.yaml")
    card.write_text(card.read_text() + "preprocess: {resize: opencv-linear}\n")
    assert run_score() == 2
    err = capsys.readouterr().err
    assert "another preprocessing" in err and "opencv-linear" in err
    assert not Path("metrics/detection/detector/tiny.json").exists()


def test_frozen_evaluation_reproduced_and_differences(repo, caplog):
    import yaml

    from candor_eval.common.manifest import load_manifest

    card_path = Path("models/tiny.yaml")
    card = yaml.safe_load(card_path.read_text())
    card["eval_manifest_sha256"] = load_manifest(Path("data/detector/manifest.csv")).sha256
    card["evaluation"] = {"micro": {"precision": 0.25, "recall": 0.666667, "f1": 0.363636, "tp": 2},
                          "test": {"micro": {"fn": 1}}}
    card_path.write_text(yaml.safe_dump(card))
    assert run_score() == 0
    fz = json.loads(Path("metrics/detection/detector/tiny.json").read_text())["frozen"]
    assert fz == {"model_sha256_matches": True, "manifest_sha256_matches": True, "comparable": True,
                  "compared": 5, "reproduced": True, "differing": []}
    card["evaluation"]["micro"]["tp"] = 3
    card["evaluation"]["per_class"] = {"deer": {"recall": 0.9}}
    card_path.write_text(yaml.safe_dump(card))
    assert run_score() == 0
    fz = json.loads(Path("metrics/detection/detector/tiny.json").read_text())["frozen"]
    assert fz["reproduced"] is False and fz["differing"] == ["micro.tp", "per_class.deer.recall"]
    assert "did NOT reproduce; differing: micro.tp, per_class.deer.recall" in caplog.text
    card["eval_manifest_sha256"] = "0" * 64
    card_path.write_text(yaml.safe_dump(card))
    assert run_score() == 0
    fz = json.loads(Path("metrics/detection/detector/tiny.json").read_text())["frozen"]
    assert fz["manifest_sha256_matches"] is False and fz["comparable"] is False and fz["reproduced"] is False
    assert "cannot be reproduced: the evaluation set is not the card's" in caplog.text


def test_the_served_contract_of_each_model_is_written_for_the_gate(repo):
    set_card(training_sessions=["s0"])
    assert run_score() == 0
    served = json.loads(Path("metrics/outcomes/detector/served.json").read_text())
    tiny = served["tiny"]
    assert tiny["training_sessions"] == ["s0"] and tiny["preprocess"]["resize"] == "pillow-bilinear"
    assert set(tiny["thresholds"]) == {"deer", "sheep", "relic"} and tiny["nms"]["iou"] == 0.5


def test_counts_block_holds_k_and_n_of_every_rate(repo):
    """precision: TP of TP + FP detections; recall: TP of TP + FN labels; F1: 2 TP of 2 TP + FP + FN;
    FP/frame: FP per frame (a mean); one entry per rate, None rates too, each with its frame cluster sums."""
    assert run_score() == 0
    m = json.loads(Path("metrics/detection/detector/tiny.json").read_text())
    counts = m["counts"]
    def plain(c):
        return {k: c[k] for k in ("k", "n", "unit")}
    assert plain(counts["all.micro.precision"]) == {"k": 2, "n": 8, "unit": "detection"}     # TP 2, FP 6
    assert plain(counts["all.micro.recall"]) == {"k": 2, "n": 3, "unit": "label"}             # TP 2, FN 1
    assert plain(counts["test.per_class.relic.recall"]) == {"k": 0, "n": 0, "unit": "label"}  # recall null: n 0
    assert plain(counts["dev.by_zoom.zoom_1.precision"]) == {"k": 2, "n": 4, "unit": "detection"}
    # two frames: dev (TP 2, FP 2) and test (FP 4, FN 1), by hand
    assert counts["all.micro.precision"] | {} == {"k": 2, "n": 8, "unit": "detection", "cluster": "frame",
                                                  "clusters": 2, "sum_k2": 4, "sum_kn": 8, "sum_n2": 32}
    assert counts["all.micro.fp_per_frame"] == {"k": 6, "n": 2, "unit": "frame", "estimate": "mean",
                                                "cluster": "frame", "clusters": 2, "sum_k2": 20, "sum_kn": 6,
                                                "sum_n2": 2}
    for key, c in counts.items():
        split, group, *name, rate = key.split(".")
        block = m[split][group] if group == "micro" else m[split][group][".".join(name)]
        assert block[rate] == (None if c["n"] == 0 else round(c["k"] / c["n"], 6)), key
        assert c["cluster"] == "frame"
    rates = {f"{split}.{g}.{r}" for split in ("all", "dev", "test") for g in ["micro"]
             + [f"{grp}.{n}" for grp in ("per_class", "by_band", "by_zoom") for n in m[split][grp]]
             for r in ("precision", "recall", "f1", *(("fp_per_frame",) if g == "micro" or g.startswith("by_zoom")
                                                      else ()))}
    assert set(counts) == rates


def micro(model: str) -> tuple[int, int, int]:
    m = json.loads(Path(f"metrics/detection/detector/{model}.json").read_text())["all"]["micro"]
    return m["tp"], m["fp"], m["fn"]


def test_each_model_is_scored_at_its_own_served_thresholds(repo):
    """Two models, one ONNX file: ``twin`` serves deer at 0.4 (thresholds_by_model), ``tiny`` the shared 0.2.
    At 0.4 the deer 0.3 on the sheep (a FP in both frames) is dropped: FP 6 -> 4."""
    Path("models/twin.yaml").write_text(Path("models/tiny.yaml").read_text())
    Path("build/detections/detector/twin.jsonl").write_text(
        Path("build/detections/detector/tiny.jsonl").read_text().replace('"model":"tiny"', '"model":"twin"', 1))
    Path("params.yaml").write_text(PARAMS.replace("sets: {detector: [tiny]}", "sets: {detector: [tiny, twin]}")
                                   + "thresholds_by_model:\n  twin:\n    deer: 0.4\n")
    assert run_score() == 0
    assert micro("tiny") == (2, 6, 1) and micro("twin") == (2, 4, 1)
    frames = Path("metrics/outcomes/detector/detection-frames.csv").read_text().splitlines()
    assert [",".join(r.split(",")[:8]) for r in frames[1:]] == [
        "a,dev,s1,1,tiny,2,2,0", "a,dev,s1,1,twin,2,1,0", "b,test,s2,2,tiny,0,4,1", "b,test,s2,2,twin,0,3,1"]


@pytest.mark.parametrize("by_model, message", [
    ("  tyni:\n    deer: 0.4\n", ["params.yaml:thresholds_by_model.tyni", "not a model of detector.sets", "tiny"]),
    ("  tiny:\n    moose: 0.4\n", ["params.yaml:thresholds_by_model.tiny.moose", "unknown class name"]),
    ("  tiny:\n    deer: 0.01\n", ["params.yaml:thresholds_by_model.tiny.deer", ">= detector.floor = 0.05"]),
    ("  tiny: 0.4\n", ["params.yaml:thresholds_by_model.tiny", "valid dictionary"]),
])
def test_thresholds_by_model_errors(repo, capsys, by_model, message):
    Path("params.yaml").write_text(PARAMS + "thresholds_by_model:\n" + by_model)
    assert run_score() == 2
    err = capsys.readouterr().err
    assert all(m in err for m in message), err
    assert not Path("metrics/detection/detector/tiny.json").exists()


def test_a_card_with_thresholds_is_refused(repo, capsys):
    card = Path("models/tiny.yaml")
    card.write_text(card.read_text() + "thresholds:\n  default: 0.3\n")
    assert run_score() == 2
    assert "a model card holds no thresholds" in capsys.readouterr().err


def add_boar(labels_a: str = "2 0.1 0.2 0.1 0.2\n") -> None:
    """The data set gains a class the model does not detect (boar), with one label in frame a."""
    Path("data/detector/classes.txt").write_text("deer\nsheep\nrelic\nboar\n")
    with open("data/detector/labels/a.txt", "a") as fh:
        fh.write(labels_a.replace("2 ", "3 ", 1))


def set_card(**keys) -> None:
    import yaml

    card = Path("models/tiny.yaml")
    card.write_text(yaml.safe_dump(yaml.safe_load(card.read_text()) | keys, sort_keys=False))


def test_card_classes_must_be_the_data_classes(repo, capsys):
    add_boar()
    assert run_score() == 2
    err = capsys.readouterr().err
    assert "models/tiny.yaml:classes" in err and "card classes [deer, sheep, relic]" in err
    assert "data classes [deer, sheep, relic, boar]" in err and "class_map" in err


def test_a_declared_subset_reports_out_of_scope_labels_apart(repo):
    """boar is out of scope for tiny: its label is no FN (micro as without it) and is counted apart."""
    add_boar()
    set_card(class_map={"deer": "deer", "sheep": "sheep", "relic": "relic"})
    assert run_score() == 0
    m = json.loads(Path("metrics/detection/detector/tiny.json").read_text())
    assert micro("tiny") == (2, 6, 1)
    assert list(m["all"]["per_class"]) == ["deer", "sheep", "relic"]
    assert m["all"]["out_of_scope"] == {"labels": 1, "per_class": {"boar": 1}}
    assert m["dev"]["out_of_scope"] == {"labels": 1, "per_class": {"boar": 1}}
    assert m["test"]["out_of_scope"] == {"labels": 0, "per_class": {"boar": 0}}
    labels = list(csv.DictReader(open("metrics/outcomes/detector/detection-labels.csv")))
    assert "boar" not in {r["class"] for r in labels}


def test_class_map_renames_card_classes(repo):
    """The card calls its outputs cervid/ovine/relic; mapped onto the data's names, scoring is unchanged."""
    import yaml

    card = yaml.safe_load(Path("models/tiny.yaml").read_text())
    before = (run_score(), Path("metrics/detection/detector/tiny.json").read_text())
    raw = Path("build/detections/detector/tiny.jsonl")
    raw.write_text(raw.read_text().replace('"classes":["deer","sheep","relic"]', '"classes":["cervid","ovine","relic"]',
                                           1))
    set_card(classes=["cervid", "ovine", "relic"], class_map={"cervid": "deer", "ovine": "sheep", "relic": "relic"})
    assert card["classes"] == ["deer", "sheep", "relic"]
    assert (run_score(), Path("metrics/detection/detector/tiny.json").read_text()) == before


def test_coco_ground_truth_scores_like_the_yolo_labels(repo):
    """The same labels as COCO JSON: alone, or beside the YOLO labels (agreeing), the metrics are the same."""
    import shutil

    assert run_score() == 0
    yolo = Path("metrics/detection/detector/tiny.json").read_text()
    Path("data/detector/coco.json").write_text(json.dumps(COCO_GT))   # the same labels, ids 7 and 8
    assert run_score() == 2                                           # not in the manifest: never read
    relist()
    assert run_score() == 0
    assert Path("metrics/detection/detector/tiny.json").read_text() == yolo
    res = json.loads(Path("build/coco-results/detector/tiny.json").read_text())
    assert {r["image_id"] for r in res} == {7, 8}                    # the ids of coco.json
    shutil.rmtree("data/detector/labels")
    relist()
    assert run_score() == 0
    assert Path("metrics/detection/detector/tiny.json").read_text() == yolo


def relist() -> None:
    """``candor fetch manifest data/detector``: the set's manifest lists its files as they are now."""
    assert run_main(fetch.main, ["manifest", "data/detector"]) == 0


def test_a_data_set_without_ground_truth_is_refused(repo, capsys):
    import shutil

    shutil.rmtree("data/detector/labels")
    assert run_score() == 2
    err = capsys.readouterr().err
    assert "data/detector: no ground truth" in err and "coco.json" in err


def two_models() -> None:
    """The set scores ``tiny`` and ``twin`` (the same ONNX file, card and raw boxes)."""
    Path("models/twin.yaml").write_text(Path("models/tiny.yaml").read_text())
    raw = Path("build/detections/detector")
    (raw / "twin.jsonl").write_text((raw / "tiny.jsonl").read_text().replace('"model":"tiny"', '"model":"twin"', 1))
    Path("params.yaml").write_text(PARAMS.replace("sets: {detector: [tiny]}", "sets: {detector: [tiny, twin]}"))


def test_models_scored_in_worker_processes_give_the_same_outputs(repo, monkeypatch):
    """One process per model (forced to two even on one core): each model's outputs are the ones it
    gets scored alone, and its streamed COCO export is whole."""
    assert run_score() == 0
    alone = {p: Path(p).read_bytes() for p in ("metrics/detection/detector/tiny.json",
                                               "build/coco-results/detector/tiny.json")}
    two_models()
    monkeypatch.setattr("candor_eval.common.parallel.usable_cores", lambda: 2)
    assert run_score() == 0
    for path, blob in alone.items():
        assert Path(path).read_bytes() == blob
        assert Path(path.replace("tiny", "twin")).read_bytes() == blob
    assert sorted(p.name for p in Path("build/coco-results/detector").iterdir()) == ["tiny.json", "twin.json"]


def test_an_error_in_a_worker_process_is_the_stage_error_and_nothing_is_written(repo, capsys, monkeypatch):
    two_models()
    raw = Path("build/detections/detector/twin.jsonl")        # the second model: scored by the worker
    lines = raw.read_text().splitlines()
    lines[1] = lines[1].replace('"boxes":[[', '"boxes":[[NaN,', 1)
    raw.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr("candor_eval.common.parallel.usable_cores", lambda: 2)
    assert run_score() == 2
    err = capsys.readouterr().err
    assert "twin.jsonl:2: frame a, boxes[0]: bad box row" in err
    assert not Path("metrics/detection/detector").exists()
    assert not Path("build/coco-results/detector").exists() or not any(Path("build/coco-results/detector").iterdir())


@pytest.mark.parametrize("nms, expected", [
    # class-agnostic: the deer 0.3 on the sheep 0.9 (IoU 1) is suppressed in both frames
    ("{nms_agnostic: true}", (2, 4, 1)),
    # at most 2 boxes per frame, of those above the thresholds: sheep 0.9 and relic 0.6; the deer 0.5 is cut
    # (frame a: its TP becomes FN; frame b: its FP goes)
    ("{max_det: 2}", (1, 3, 2)),
    ("{nms_iou: 0.5}", (2, 6, 1)),                                    # the shared values: unchanged
])
def test_served_nms_per_model(repo, nms, expected):
    by_model = f"  nms_iou: 0.5\n  nms_by_model: {{tiny: {nms}}}\n"
    Path("params.yaml").write_text(PARAMS.replace("  nms_iou: 0.5\n", by_model))
    assert run_score() == 0
    assert micro("tiny") == expected
    m = json.loads(Path("metrics/detection/detector/tiny.json").read_text())["all"]["micro"]
    assert sum(m["fp_anatomy"].values()) == m["fp"]


def test_agnostic_nms_runs_after_the_thresholds(repo):
    """Served: thresholds, then NMS. With the sheep served at 0.95 the sheep 0.9 is dropped before it
    could suppress the deer 0.3 (at the floor it would), so the deer 0.3 is served in both frames (3
    deer FPs, not 2): in frame a a class confusion on the sheep."""
    Path("params.yaml").write_text(PARAMS.replace("  nms_iou: 0.5\n", "  nms_iou: 0.5\n  nms_agnostic: true\n")
                                   + "thresholds_by_model:\n  tiny:\n    sheep: 0.95\n")
    assert run_score() == 0
    m = json.loads(Path("metrics/detection/detector/tiny.json").read_text())["all"]
    assert m["per_class"]["deer"]["fp"] == 3 and m["per_class"]["sheep"]["tp"] == 0
    assert m["micro"]["fp_anatomy"]["class_confusion"] == 1


def test_nms_by_model_must_name_a_model(repo, capsys):
    misspelled = "  nms_iou: 0.5\n  nms_by_model: {tyni: {max_det: 3}}\n"
    Path("params.yaml").write_text(PARAMS.replace("  nms_iou: 0.5\n", misspelled))
    assert run_score() == 2
    assert "tyni" in capsys.readouterr().err


# --- a kill (SIGKILL) at any point leaves no debris (docs/reliability.md, "Nothing lost") ---

ROOT = Path(__file__).resolve().parents[2]
# the stage in a real process that SIGKILLs itself just before its Nth move into place (its temporary
# files, the COCO exports' among them, all there and locked), or never (N = 0)
KILLER = """
import os, signal, sys
from candor_eval.common.errors import run_main
from candor_eval.stages import score_detection
n, calls, replace = int(sys.argv[1]), [0], os.replace
def dying_replace(src, dst):
    calls[0] += 1
    if calls[0] == n:
        os.kill(os.getpid(), signal.SIGKILL)
    replace(src, dst)
os.replace = dying_replace
raise SystemExit(run_main(score_detection.main, ["--params", "params.yaml"]))
"""


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def stage(ws: Path, kill_at: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", KILLER, str(kill_at)], cwd=ws, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A fetched and detected workspace, and the tree a clean score-detection run leaves in it."""
    ws = tmp_path_factory.mktemp("pristine")
    cwd = Path.cwd()
    os.chdir(ws)
    try:
        make_repo(ws)
    finally:
        os.chdir(cwd)
    clean = ws.parent / "clean"
    shutil.copytree(ws, clean)
    assert stage(clean, 0).wait() == 0
    return ws, tree(clean)


@pytest.mark.parametrize("kill_at", [1, 4, 7])
def test_a_kill_leaves_no_file_in_an_output_and_a_rerun_equals_a_clean_run(pristine, tmp_path, kill_at):
    """Killed just before its 1st (a COCO export's), 4th or 7th move into place: every file
    present is one a clean run writes, byte for byte; the temporaries are only in the ignored
    temporary folder; the rerun sweeps them and leaves exactly the clean run's tree."""
    ws, clean = pristine
    shutil.copytree(ws, tmp_path / "ws")
    ws = tmp_path / "ws"
    proc = stage(ws, kill_at)
    assert proc.wait() == -signal.SIGKILL, proc.stderr.read().decode() if proc.stderr else ""
    after = tree(ws)
    debris = {rel for rel in after if rel.startswith(".candor-tmp/")}
    assert debris and ".candor-tmp/.gitignore" in debris and after[".candor-tmp/.gitignore"].endswith(b"\n*\n")
    assert {rel: blob for rel, blob in after.items() if rel not in debris}.items() <= clean.items()
    assert stage(ws, 0).wait() == 0
    assert tree(ws) == clean and not (ws / ".candor-tmp").exists()


def test_a_kill_from_outside_mid_run_leaves_no_debris_after_the_rerun(pristine, tmp_path):
    """SIGKILL sent by another process as soon as the stage's first temporary file exists."""
    ws, clean = pristine
    shutil.copytree(ws, tmp_path / "ws")
    ws = tmp_path / "ws"
    proc = stage(ws, 0)
    deadline = time.monotonic() + 15
    while not list((ws / ".candor-tmp").glob("*.tmp")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert {rel: blob for rel, blob in tree(ws).items() if not rel.startswith(".candor-tmp/")}.items() <= clean.items()
    assert stage(ws, 0).wait() == 0
    assert tree(ws) == clean


def test_frames_without_a_recorded_zoom_say_no_zoom_claim_follows(repo, caplog):
    frames = Path("data/detector/frames.csv")
    frames.write_text(frames.read_text().replace("b,s2,2,test", "b,s2,,test"))
    relist()
    assert run_score() == 0
    m = json.loads(Path("metrics/detection/detector/tiny.json").read_text())
    assert m["all"]["by_zoom"]["zoom_unknown"]["frames"] == 1
    assert "1 frame(s) of set detector have no recorded zoom (zoom_unknown): no zoom-robustness claim" in caplog.text
