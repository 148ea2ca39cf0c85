"""Bring a detection set or a model into a candor project: what ``candor add set`` and ``candor add model`` write.

    candor add set NAME --from DATA_YAML [--split val] [--split-as test|dev] [--dir DIR]
    candor add set NAME --coco FILE --images FOLDER [--split-as test|dev] [--dir DIR]
    candor add model NAME --onnx PATH [--set SET] [--classes a,b,...] [--dir DIR]

``DIR`` (default ``.``) is the candor project's folder: its ``params.yaml`` (``candor init``),
``data/`` and ``models/``.

``set`` writes the detection set ``DIR/data/NAME/`` (:mod:`candor_eval.adopt.set_files`) from one
split of an Ultralytics ``data.yaml`` (:mod:`candor_eval.adopt.ultralytics_data`; ``--split``:
``val`` by default) or from a COCO annotation file and the folder of its images
(:mod:`candor_eval.adopt.coco_data`): a copy of every image and label file, ``classes.txt`` (YOLO)
or ``coco.json`` (COCO), ``manifest.csv`` naming the user's files as the copies' ``source``, so
``candor fetch`` copies them in on a fresh clone, and a ``.gitignore`` for the copies. The frames
are ``test`` frames (a held-out evaluation); ``--split-as dev`` marks them ``dev`` (the frames
thresholds are tuned on) in ``frames.csv``. Every label line is checked by candor's YOLO reader
first (a class index beyond the names, a box outside its image, a segment polygon: each named by
file and line). The set is assembled in a temporary folder (``.candor-tmp/``, never in
``data/``: :func:`candor_eval.common.atomic.temp_file`), read back by candor's own readers
(frames, ground truth, manifest) and only then moved into place; a rerun rewrites the
set (a folder holding files ``add set`` does not write is refused). Last, ``NAME: []`` goes under
``detector.sets`` in ``params.yaml`` unless the set is there (:mod:`candor_eval.adopt.params_edit`:
no other line of the file changes).

``model`` reads the ONNX file with onnxruntime and writes ``DIR/models/NAME.onnx`` (a copy, unless
``PATH`` is that file) and the model card ``DIR/models/NAME.yaml`` (:mod:`candor_eval.adopt.onnx_card`:
classes, input size and output layout from the export's metadata and shapes; the preprocessing
Ultralytics' predictor serves). The card's classes must be the set's (or its ``class_map`` must place
them). Then NAME goes into ``detector.sets.SET`` (``--set``; default: the only set) unless listed.
Rerun after a retrain, it rewrites the copy and the card (a new ``sha256``) and leaves
``params.yaml`` as it is: it can be the last line of the export step of a training pipeline.

NAME follows the rule of names (:mod:`candor_eval.common.names`: one path segment of ASCII letters,
digits, ``_``, ``-`` and ``.``, starting with a letter or a digit): it becomes a folder or file name and
a word of dvc.yaml's commands.

Exit codes: 0 ok; 2 bad input (a NAME that is not a name, a missing data.yaml key or split, a label that
does not fit the names, a model that is not a static detect export or whose head does not fit its classes,
an unknown or ambiguous set, a params file that cannot take the line): the error names the file, key or
line and nothing is written.
"""
from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import yaml

from candor_eval.adopt.coco_data import read_coco_set
from candor_eval.adopt.onnx_card import card_fields, read_facts, with_kept
from candor_eval.adopt.params_edit import add_model, add_set, choose_set, detector_sets
from candor_eval.adopt.set_files import (
    CLASSES,
    COCO,
    GITIGNORE,
    IMAGES,
    SetFile,
    foreign,
    gitignore_text,
    manifest_text,
    plan,
    source_ref,
)
from candor_eval.adopt.ultralytics_data import label_path, label_problems, read_split
from candor_eval.common.atomic import atomic_path, temp_file, write_text
from candor_eval.common.errors import InputError, Problem, fail, run_main
from candor_eval.common.manifest import MANIFEST_NAME, load_manifest, sha256_file
from candor_eval.common.names import check_name
from candor_eval.common.params import DEFAULT_PARAMS, load_yaml, validate
from candor_eval.common.tables import read_bytes, read_text
from candor_eval.detection.frames import SPLITS, find_images, image_size, load_frames
from candor_eval.detection.model_card import ModelCard
from candor_eval.detection.scoring.class_names import class_name_problems
from candor_eval.detection.scoring.coco import read_coco
from candor_eval.detection.scoring.scope import class_scope
from candor_eval.detection.scoring.truth import read_truth
from candor_eval.detection.scoring.yolo import read_classes
from candor_eval.stages.cli_help import StageParser

log = logging.getLogger("candor.add")


def params_file(folder: Path) -> tuple[Path, str]:
    """The project's ``params.yaml`` and its text (it must exist: ``candor init`` writes it)."""
    path = folder / DEFAULT_PARAMS
    if not path.is_file():
        raise fail(str(path), "not found", expected="the params.yaml of a candor project",
                   hint="create the project first: candor init" + ("" if folder == Path(".") else f" {folder}"))
    load_yaml(path)                               # the checked loader: repeated keys, anchors, bad YAML
    return path, read_text(path)


def repository(folder: Path) -> Path | None:
    """The git work tree holding ``folder`` (absolute), or None."""
    for p in (folder, *folder.parents):
        if (p / ".git").exists():
            return p
    return None


# --- add set


def gather(args: argparse.Namespace) -> tuple[list[SetFile], str]:
    """The set's files (:func:`candor_eval.adopt.set_files.plan`) from the user's data, checked, and
    a one-line description of it."""
    if args.coco:
        coco = Path(args.coco).absolute()
        found = read_coco_set(coco, images=Path(args.images))
        problems = class_name_problems(found.classes, where=f"{coco}:categories")
        files, more = plan(found.images, split=args.split_as, coco=coco)
        what = f"{len(found.images)} images, COCO {coco.name}"
    else:
        data_yaml = Path(args.source)
        split = read_split(data_yaml, split=args.split)
        if all(x is None for x in split.labels):
            raise fail(f"{data_yaml}:{args.split}", "no label file for any image of the split",
                       expected=f"labels beside the images, e.g. {label_path(split.images[0])}",
                       hint="Ultralytics' rule: the image path with /images/ replaced by /labels/, suffix .txt")
        problems = class_name_problems(split.names, where=f"{data_yaml}:names") + label_problems(split)
        files, more = plan(split.images, split=args.split_as, labels=split.labels, names=split.names)
        what = (f"{len(split.images)} images, {sum(x is not None for x in split.labels)} label files, "
                f"{len(split.names)} classes from {data_yaml}:{args.split}")
    if problems or more:
        raise InputError([*problems, *more], hint="fix the data (or pick the split with --split), then rerun")
    return files, what


def check_place(folder: Path, files: Sequence[SetFile]) -> None:
    """``folder`` may be (re)written: absent, or a set folder of ``add set``; and no file of the set
    is copied from inside it."""
    if folder.exists() and not folder.is_dir():
        raise fail(str(folder), "is a file", expected="a folder for the data set (or nothing)")
    if folder.is_dir() and (others := foreign([p.name for p in folder.iterdir()])):
        raise fail(str(folder), "holds files `candor add set` does not write", expected=", ".join(others) + " gone",
                   got=others, hint="move them away, or pick another set name")
    inside = [f.source for f in files if f.source is not None and f.source.resolve().is_relative_to(folder.resolve())]
    if inside:
        raise fail(str(folder), "the data to copy is inside the set folder itself", got=[str(p) for p in inside[:5]],
                   hint="keep the data elsewhere (its source), or pick another set name")


def assemble(stage: Path, files: Sequence[SetFile], *, final: Path, repo: Path | None) -> None:
    """Write the set into the empty folder ``stage`` (copies, written files, manifest, .gitignore);
    the manifest's sources are relative to ``final``, where the folder will be."""
    digests, sources = {}, {}
    for f in files:
        target = stage / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if f.source is not None:
            shutil.copyfile(f.source, target)
            sources[f.path] = source_ref(f.source.resolve(), folder=final.resolve(), repo=repo)
        else:
            target.write_text(f.text or "", encoding="utf-8", newline="\n")
        digests[f.path] = (sha256_file(target), target.stat().st_size)
    (stage / MANIFEST_NAME).write_text(manifest_text(files, digests=digests, sources=sources), encoding="utf-8",
                                       newline="\n")
    (stage / GITIGNORE).write_text(gitignore_text(files), encoding="utf-8", newline="\n")


def read_back(stage: Path, *, final: Path) -> None:
    """The assembled set read by candor's own readers (frames, ground truth, manifest); a problem is
    reported at the path the set is meant for."""
    try:
        load_manifest(stage / MANIFEST_NAME)
        frames = load_frames(stage)
        images = find_images(stage / IMAGES)
        read_truth(stage, frames=frames.frames, sizes={f: image_size(images[f]) for f in frames.frames})
    except InputError as err:
        raise InputError([Problem(p.where.replace(str(stage), str(final)), p.what, p.expected, p.got)
                          for p in err.problems], hint=err.hint) from None


def put_in_place(stage: Path, final: Path) -> None:
    """Move the assembled ``stage`` to ``final``, replacing an earlier set folder there (moved
    aside into a temporary folder, :func:`candor_eval.common.atomic.temp_file`, then removed)."""
    if not final.exists():
        os.replace(stage, final)
        return
    with temp_file(final, folder=True) as old:
        os.replace(final, old / final.name)
        try:
            os.replace(stage, final)
        except OSError:
            os.replace(old / final.name, final)
            raise


def cmd_set(args: argparse.Namespace) -> int:
    name = check_name(args.name, what="set", where="NAME")
    folder = Path(args.dir)
    params, text = params_file(folder)
    new_text = add_set(text, name, where=str(params))
    files, what = gather(args)
    data = folder / "data"
    final = data / name
    check_place(final, files)
    data.mkdir(parents=True, exist_ok=True)
    with temp_file(final, folder=True) as stage:  # never in data/: a kill leaves nothing there
        stage.chmod(0o755)                        # mkdtemp's is 0700: the set folder is an ordinary one
        assemble(stage, files, final=final, repo=repository(folder.resolve()))
        read_back(stage, final=final)
        put_in_place(stage, final)
    if new_text != text:
        write_text(params, new_text)
    print(f"wrote {final}: {what}" + (f" (frames.csv: every frame {args.split_as})" if args.split_as == "dev" else "")
          + f"; {params}: detector.sets.{name} " + ("added" if new_text != text else "already there"))
    print(f"next: candor add model MODEL --onnx MODEL.onnx --set {name}" + (f" --dir {args.dir}" if args.dir != "."
                                                                                else ""))
    return 0


# --- add model


def data_classes(folder: Path) -> tuple[str, ...] | None:
    """The class names of the data set ``folder``: its ``classes.txt``, else its ``coco.json``'s
    categories; None when it has neither (yet)."""
    if (folder / CLASSES).is_file():
        return read_classes(folder / CLASSES)
    if (folder / COCO).is_file():
        return read_coco(folder / COCO, classes=None)[0].classes
    return None


def cmd_model(args: argparse.Namespace) -> int:
    name = check_name(args.name, what="model", where="NAME")
    folder = Path(args.dir)
    params, text = params_file(folder)
    set_name = choose_set(detector_sets(text, where=str(params)), args.set, where=str(params))
    new_text = add_model(text, name, set_name=set_name, where=str(params))
    onnx, models = Path(args.onnx), folder / "models"
    target, card_path = models / f"{name}.onnx", models / f"{name}.yaml"
    blob = read_bytes(onnx, expected="an ONNX file")
    sha = hashlib.sha256(blob).hexdigest()
    classes = [c.strip() for c in args.classes.split(",")] if args.classes is not None else None
    if classes is not None and not all(classes):
        raise fail("--classes", "an empty class name", expected="a,b,... in output order", got=args.classes)
    old = load_yaml(card_path) if card_path.is_file() else None
    card = with_kept(card_fields(read_facts(blob, where=str(onnx)), onnx=target.name, sha256=sha, classes=classes,
                                 where=str(onnx)), old if isinstance(old, dict) else None)
    checked = validate(ModelCard, card, where=str(card_path))
    data = data_classes(folder / "data" / set_name)
    if data is not None:
        class_scope(data, checked.classes or [], class_map=checked.class_map, where=str(card_path))
    else:
        log.warning("%s has no classes.txt or coco.json: the card's classes are checked when the set is scored",
                    folder / "data" / set_name)
    copied = not (target.exists() and os.path.samefile(onnx, target))
    if copied:
        with atomic_path(target) as tmp:
            tmp.write_bytes(blob)
    write_text(card_path, yaml.safe_dump(card, sort_keys=False, allow_unicode=True, width=100))
    if new_text != text:
        write_text(params, new_text)
    print(f"wrote {card_path} (sha256 {sha[:12]}..., {len(card['classes'])} classes, input {card['input_size']}, "
          f"{card['output_layout']})" + (f" and {target}" if copied else "")
          + f"; {params}: detector.sets.{set_name} " + ("lists it now" if new_text != text else "already lists it"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = StageParser(prog="candor add", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("set", help="bring a detection set: data/NAME/ and its line in params.yaml",
                       description=__doc__)
    s.add_argument("name", metavar="NAME", help="the set's name: its folder data/NAME/ and its key in detector.sets")
    source = s.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="source", metavar="DATA_YAML", help="an Ultralytics data.yaml")
    source.add_argument("--coco", metavar="FILE", help="a COCO annotation file (instances.json); needs --images")
    s.add_argument("--split", default="val", help="the data.yaml split to bring (default: val)")
    s.add_argument("--images", metavar="FOLDER", help="with --coco: the folder of its images")
    s.add_argument("--split-as", choices=SPLITS, default="test",
                   help="what candor uses the frames for: test (held out, the default) or dev (threshold tuning)")
    s.add_argument("--dir", default=".", help="the candor project folder (default: .)")
    s.set_defaults(func=cmd_set)
    m = sub.add_parser("model", help="bring an ONNX detector: models/NAME.onnx, its card, its set's line",
                       description=__doc__)
    m.add_argument("name", metavar="NAME", help="the model's name: models/NAME.onnx and models/NAME.yaml")
    m.add_argument("--onnx", required=True, metavar="PATH", help="the exported ONNX file")
    m.add_argument("--set", help="the detection set it is scored on (default: the only set)")
    m.add_argument("--classes", help="class names in output order, comma-separated (a model without names "
                   "metadata needs them)")
    m.add_argument("--dir", default=".", help="the candor project folder (default: .)")
    m.set_defaults(func=cmd_model)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "set" and args.coco and not args.images:
        parser.error("--coco needs --images FOLDER")
    if args.command == "set" and args.images and not args.coco:
        parser.error("--images goes with --coco")
    if args.command == "set" and args.coco and args.split != "val":
        parser.error("--split goes with --from (a COCO file is one split)")
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
