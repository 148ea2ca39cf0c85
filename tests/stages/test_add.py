"""``candor add set`` and ``candor add model`` (candor_eval/stages/add.py) on a tiny training repository: the
set and the card they write are read by candor's own readers, fetched on a fresh clone, and run by detect;
bad inputs exit 2 and write nothing."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from candor_eval.common.errors import InputError
from candor_eval.common.manifest import load_manifest
from candor_eval.common.verify import verify_sets
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.model_card import load_card, verify_cards
from candor_eval.detection.sets import detection_sets, set_records
from candor_eval.stages import detect, fetch
from candor_eval.stages.add import main
from tests.support_adopt import FRAMES, NAMES, PARAMS, coco_export, ultralytics_onnx, ultralytics_repo


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (path -> bytes): what a refused command must leave as it was."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def sets_of(eval_dir: Path) -> dict[str, list[str]]:
    return yaml.safe_load((eval_dir / "params.yaml").read_text())["detector"]["sets"]


def check_with_candors_readers(eval_dir: Path) -> dict[str, dict]:
    """The records the fetch stage would write: every set and card verifies, every set has its models."""
    data, data_problems = verify_sets(eval_dir / "data")
    cards, card_problems = verify_cards(eval_dir / "models")
    records, problems = set_records(detection_sets(DetectorParams(sets=sets_of(eval_dir))), data_records=data,
                                    model_records=cards, models=eval_dir / "models")
    assert data_problems == card_problems == problems == []
    return records


@pytest.mark.parametrize("names", [NAMES, dict(enumerate(NAMES))])
def test_add_set_and_model_make_a_set_candor_verifies_fetches_and_runs(tmp_path, names, capsys):
    data_yaml = ultralytics_repo(tmp_path, names=names)
    ev = tmp_path / "eval"
    (tmp_path / "runs").mkdir()
    ultralytics_onnx(tmp_path / "runs" / "best.onnx")
    assert main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)]) == 0
    assert "next: candor add model MODEL --onnx MODEL.onnx --set pets" in capsys.readouterr().out
    assert sets_of(ev) == {"pets": []}
    assert main(["model", "yolo-v1", "--onnx", str(tmp_path / "runs" / "best.onnx"), "--dir", str(ev)]) == 0
    # params.yaml: one line changed, comments kept
    assert (ev / "params.yaml").read_text() == PARAMS.replace(
        "  sets: {}                     # set", "  sets:                        # set").replace(
        "`candor add model`\n", "`candor add model`\n    pets: [yolo-v1]\n")
    s = ev / "data" / "pets"
    assert (s / "classes.txt").read_text() == "person\ncar\ndog\n"
    assert not (s / "frames.csv").exists()                                   # every frame a test frame
    assert (s / ".gitignore").read_text().splitlines()[1:] == ["/images/", "/labels/"]
    manifest = load_manifest(s / "manifest.csv")
    assert {e.path: e.source for e in manifest.entries} == {
        "classes.txt": None, "images/a.jpg": "../../../datasets/pets/images/val/a.jpg",
        "images/b.jpg": "../../../datasets/pets/images/val/b.jpg", "images/c.png":
            "../../../datasets/pets/images/val/c.png", "labels/a.txt": "../../../datasets/pets/labels/val/a.txt",
        "labels/c.txt": "../../../datasets/pets/labels/val/c.txt"}
    card = load_card(ev / "models" / "yolo-v1.yaml")
    assert card.classes == NAMES and card.input_size == [64, 64] and card.output_layout == "ultralytics"
    assert card.preprocess.resize == "opencv-linear" and card.preprocess.exif == "apply"
    assert card.sha256 == hashlib.sha256((ev / "models" / "yolo-v1.onnx").read_bytes()).hexdigest()
    records = check_with_candors_readers(ev)
    assert records["detection-pets.json"]["data"]["files"] == 6
    # a fresh clone has none of the ignored copies: fetch copies them in from their source
    shutil.rmtree(s / "images")
    shutil.rmtree(s / "labels")
    check_with_candors_readers(ev)
    assert sorted(p.name for p in (s / "images").iterdir()) == ["a.jpg", "b.jpg", "c.png"]
    # and candor's pipeline runs the model on the set
    assert fetch.main(["verify", "--data", str(ev / "data"), "--models", str(ev / "models"),
                       "--params", str(ev / "params.yaml"), "--out", str(ev / "build" / "verified")]) == 0
    assert detect.main(["--set", "pets", "--models", str(ev / "models"), "--data", str(s), "--params",
                        str(ev / "params.yaml"), "--verified", str(ev / "build" / "verified"),
                        "--out", str(ev / "build" / "detections" / "pets")]) == 0
    assert (ev / "build" / "detections" / "pets" / "yolo-v1.jsonl").read_text().count('"frame"') == 3


def test_a_coco_set_and_a_model_without_names(tmp_path):
    coco, images = coco_export(tmp_path / "export")
    ev = tmp_path / "eval"
    ev.mkdir()
    (ev / "params.yaml").write_text(PARAMS)
    ultralytics_onnx(tmp_path / "m.onnx", names=["cat", "dog"], drop=("names",))
    assert main(["set", "animals", "--coco", str(coco), "--images", str(images), "--split-as", "dev",
                 "--dir", str(ev)]) == 0
    assert main(["model", "m", "--onnx", str(tmp_path / "m.onnx"), "--classes", "dog, cat", "--dir", str(ev)]) == 0
    s = ev / "data" / "animals"
    assert (s / "frames.csv").read_text() == "frame,session,zoom,split\nx,,,dev\ny,,,dev\n"
    assert (s / ".gitignore").read_text().splitlines()[1:] == ["/coco.json", "/images/"]
    sources = {e.path: e.source for e in load_manifest(s / "manifest.csv").entries}
    assert sources["coco.json"] == str(coco.absolute())           # no repository here: absolute sources
    assert load_card(ev / "models" / "m.yaml").classes == ["dog", "cat"]
    check_with_candors_readers(ev)


def test_rerunning_rewrites_the_set_whole_and_leaves_params(tmp_path):
    data_yaml = ultralytics_repo(tmp_path)
    ev = tmp_path / "eval"
    assert main(["set", "pets", "--from", str(data_yaml), "--split-as", "dev", "--dir", str(ev)]) == 0
    params = (ev / "params.yaml").read_text()
    assert (ev / "data" / "pets" / "frames.csv").is_file()
    (data_yaml.parent / "images" / "val" / "b.jpg").unlink()
    assert main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)]) == 0
    assert (ev / "params.yaml").read_text() == params
    s = ev / "data" / "pets"
    assert sorted(p.name for p in (s / "images").iterdir()) == ["a.jpg", "c.png"]
    assert not (s / "frames.csv").exists()
    assert [e.path for e in load_manifest(s / "manifest.csv").entries] == [
        "classes.txt", "images/a.jpg", "images/c.png", "labels/a.txt", "labels/c.txt"]
    assert [p.name for p in (ev / "data").iterdir()] == ["pets"]               # no staging folder left


def test_a_retrained_model_gets_a_new_copy_and_card_and_keeps_the_cards_own_fields(tmp_path):
    data_yaml = ultralytics_repo(tmp_path)
    ev = tmp_path / "eval"
    main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)])
    ultralytics_onnx(tmp_path / "best.onnx")
    main(["model", "yolo", "--onnx", str(tmp_path / "best.onnx"), "--dir", str(ev)])
    card_file = ev / "models" / "yolo.yaml"
    card_file.write_text(card_file.read_text() + "description: our detector\n")
    params = (ev / "params.yaml").read_text()
    sha = ultralytics_onnx(tmp_path / "best.onnx", metadata={"date": "retrained"})
    assert main(["model", "yolo", "--onnx", str(tmp_path / "best.onnx"), "--dir", str(ev)]) == 0
    card = load_card(card_file)
    assert card.sha256 == sha and card.description == "our detector"
    assert (ev / "params.yaml").read_text() == params
    # an export step that writes models/NAME.onnx itself: the card only
    ultralytics_onnx(ev / "models" / "yolo.onnx", metadata={"date": "again"})
    assert main(["model", "yolo", "--onnx", str(ev / "models" / "yolo.onnx"), "--dir", str(ev)]) == 0
    assert load_card(card_file).sha256 == hashlib.sha256((ev / "models" / "yolo.onnx").read_bytes()).hexdigest()
    check_with_candors_readers(ev)


def test_a_set_name_given_twice_is_one_set(tmp_path):
    data_yaml = ultralytics_repo(tmp_path)
    ev = tmp_path / "eval"
    main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)])
    before = tree(ev)
    assert main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)]) == 0
    assert tree(ev) == before


def bring(tmp_path: Path, **repo) -> tuple[Path, Path]:
    return ultralytics_repo(tmp_path, **repo), tmp_path / "eval"


@pytest.mark.parametrize("repo, argv, message", [
    (dict(data_yaml="path: .\ntrain: images/train\nnames: [a]\n"), [], "data.yaml:val: no such split"),
    (dict(data_yaml="path: .\nval: images/val\n"), [], "data.yaml:names: missing"),
    (dict(), ["--split", "test"], "data.yaml:test: no such split"),
    (dict(frames={**FRAMES, "d": ((64, 48), ["3 0.5 0.5 0.2 0.2"])}), [], "labels/val/d.txt:1.class: class index out"),
    (dict(frames={"a": ((64, 48), None)}), [], "no label file for any image of the split"),
    (dict(names=["person", "all", "dog"]), [], "data.yaml:names"),                  # a class name candor refuses
])
def test_add_set_refuses_bad_data_and_writes_nothing(tmp_path, repo, argv, message):
    data_yaml, ev = bring(tmp_path, **repo)
    before = tree(ev)
    with pytest.raises(InputError, match=message):
        main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev), *argv])
    assert tree(ev) == before and not (ev / "data" / "pets").exists()


def test_add_set_refuses_a_folder_holding_other_files_and_a_missing_project(tmp_path):
    data_yaml, ev = bring(tmp_path)
    (ev / "data" / "pets").mkdir(parents=True)
    (ev / "data" / "pets" / "notes.md").write_text("mine")
    with pytest.raises(InputError, match="holds files `candor add set` does not write"):
        main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)])
    assert (ev / "data" / "pets" / "notes.md").read_text() == "mine"
    with pytest.raises(InputError, match="candor init"):
        main(["set", "pets", "--from", str(data_yaml), "--dir", str(tmp_path / "nowhere")])
    with pytest.raises(InputError, match="not a valid set name"):
        main(["set", "../pets", "--from", str(data_yaml), "--dir", str(ev)])


@pytest.mark.parametrize("argv", [["--coco", "x.json"], ["--images", "imgs", "--from", "data.yaml"],
                                  ["--coco", "x.json", "--images", "imgs", "--split", "test"]])
def test_coco_and_images_go_together(argv):
    with pytest.raises(SystemExit) as err:
        main(["set", "pets", *argv])
    assert err.value.code == 2


@pytest.mark.parametrize("build, argv, message", [
    (dict(metadata={"task": "segment"}), [], "not a detection model"),
    (dict(output=(1, 4 + 4, 16)), [], "output: unsupported output shape"),
    (dict(names=["person", "car", "cat"]), [], "the card's classes are not the data set's classes"),
    (dict(), ["--set", "birds"], "no detection set 'birds'"),
    (dict(), ["--classes", "a,,b"], "--classes: an empty class name"),
])
def test_add_model_refuses_and_writes_nothing(tmp_path, build, argv, message):
    data_yaml, ev = bring(tmp_path)
    main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)])
    ultralytics_onnx(tmp_path / "m.onnx", **build)
    before = tree(ev)
    with pytest.raises(InputError, match=message):
        main(["model", "m", "--onnx", str(tmp_path / "m.onnx"), "--dir", str(ev), *argv])
    assert tree(ev) == before


@pytest.mark.parametrize("name", ["../m", "m;touch PWNED", "my model", "$(id)", ".m"])
def test_add_refuses_a_name_that_is_not_a_name_and_writes_nothing(tmp_path, name):
    """NAME becomes data/NAME/, models/NAME.yaml and a word of dvc.yaml's commands: the rule of names."""
    data_yaml, ev = bring(tmp_path)
    main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)])
    ultralytics_onnx(tmp_path / "m.onnx")
    before = tree(ev)
    with pytest.raises(InputError, match="NAME: not a valid model name .*one path segment of ASCII letters"):
        main(["model", name, "--onnx", str(tmp_path / "m.onnx"), "--dir", str(ev)])
    with pytest.raises(InputError, match="NAME: not a valid set name .*one path segment of ASCII letters"):
        main(["set", name, "--from", str(data_yaml), "--dir", str(ev)])
    assert tree(ev) == before


def test_add_model_needs_set_when_there_are_several(tmp_path):
    data_yaml, ev = bring(tmp_path)
    main(["set", "pets", "--from", str(data_yaml), "--dir", str(ev)])
    main(["set", "more-pets", "--from", str(data_yaml), "--dir", str(ev)])
    ultralytics_onnx(tmp_path / "m.onnx")
    with pytest.raises(InputError, match="(?s)several detection sets.*pets, more-pets"):
        main(["model", "m", "--onnx", str(tmp_path / "m.onnx"), "--dir", str(ev)])
    assert main(["model", "m", "--onnx", str(tmp_path / "m.onnx"), "--set", "more-pets", "--dir", str(ev)]) == 0
    assert sets_of(ev) == {"pets": [], "more-pets": ["m"]}


def test_the_card_check_is_left_to_scoring_when_the_set_has_no_classes_yet(tmp_path, caplog):
    ev = tmp_path / "eval"
    ev.mkdir()
    (ev / "params.yaml").write_text(PARAMS.replace("sets: {}", "sets: {birds: []}"))
    ultralytics_onnx(tmp_path / "m.onnx")
    assert main(["model", "m", "--onnx", str(tmp_path / "m.onnx"), "--dir", str(ev)]) == 0
    assert "has no classes.txt or coco.json" in caplog.text
    assert sets_of(ev) == {"birds": ["m"]}
