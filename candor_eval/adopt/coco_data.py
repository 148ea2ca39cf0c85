"""A COCO detection set brought as an annotation file and the folder of its images.

The set is the file's ``images``: for each entry, the file ``<folder>/<file_name>``, or, when that
is missing, ``<folder>/<base name of file_name>`` (exports write ``val2017/000001.jpg`` or the
base name alone). The file is read by candor's checked COCO reader
(:func:`candor_eval.detection.scoring.coco.read_coco`: every bad entry named; frame ids, the
``file_name`` stems, unique); each image must exist, be of a format candor reads, and have the
width and height the entry says. Images of the folder that the file does not list are not part
of the set. Every problem names the annotation file and the entry.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from candor_eval.common.errors import InputError, Problem
from candor_eval.detection.frames import IMAGE_SUFFIXES, image_size
from candor_eval.detection.scoring.coco import parse_coco_json, read_coco, read_coco_bytes, stem

SHOWN = 20      # problems of one kind named in an error


@dataclass(frozen=True)
class CocoSet:
    """A COCO set: its ``classes`` (category names by ascending id) and its ``images`` (one per
    entry of the file, absolute, sorted by frame id)."""

    classes: tuple[str, ...]
    images: tuple[Path, ...]


def find_image(file_name: str, folder: Path) -> Path | None:
    """The image file of a ``file_name`` in ``folder`` (module docstring), or None."""
    for candidate in (folder / file_name, folder / PurePosixPath(file_name).name):
        if candidate.is_file():
            return candidate.absolute()
    return None


def read_coco_set(coco: Path, *, images: Path) -> CocoSet:
    """The classes and images of the COCO file ``coco`` whose images are in ``images`` (module docstring)."""
    gt, _, _ = read_coco(coco, classes=None)
    entries = parse_coco_json(read_coco_bytes(coco), where=str(coco))["images"]
    size = {f: (int(w), int(h)) for f, (w, h) in zip(gt.frames, gt.sizes.tolist())}
    problems: list[Problem] = []
    found: dict[str, Path] = {}
    for index, entry in enumerate(entries):
        name, where = entry["file_name"], f"{coco}:images[{index}]"
        path = find_image(name, images)
        if path is None:
            problems.append(Problem(where, "image not found", expected=f"{images / name}", got=name))
        elif path.suffix.lower() not in IMAGE_SUFFIXES:
            problems.append(Problem(where, "an image format candor does not read",
                                    expected=" ".join(IMAGE_SUFFIXES), got=name))
        elif (real := image_size(path)) != size[stem(name)]:
            said = size[stem(name)]
            problems.append(Problem(where, "width and height differ from the image's",
                                    expected=f"{real[0]} x {real[1]} ({path})", got=f"{said[0]} x {said[1]}"))
        else:
            found[stem(name)] = path
    if problems:
        raise InputError(problems[:SHOWN], hint=f"{len(problems)} image(s) of {coco} are missing or differ"
                         if len(problems) > SHOWN else None)
    if not found:
        raise InputError(Problem(f"{coco}:images", "no images listed", expected="an entry per image of the set"))
    return CocoSet(classes=gt.classes, images=tuple(found[f] for f in sorted(found)))
