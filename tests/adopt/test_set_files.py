"""Which file of a set folder comes from where (candor_eval/adopt/set_files.py): hand-written cases."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.adopt.set_files import (
    SetFile,
    foreign,
    frames_text,
    gitignore_text,
    manifest_text,
    plan,
    source_ref,
)
from candor_eval.common.manifest import parse_manifest

A, B = Path("/r/ds/images/val/a.jpg"), Path("/r/ds/images/val/b.png")
LA = Path("/r/ds/labels/val/a.txt")


def test_a_yolo_set_copies_images_and_label_files_and_writes_classes():
    files, problems = plan([A, B], labels=[LA, None], names=["cat", "dog"], split="test")
    assert problems == []
    assert [(f.path, f.source, f.text) for f in files] == [
        ("classes.txt", None, "cat\ndog\n"), ("images/a.jpg", A, None), ("images/b.png", B, None),
        ("labels/a.txt", LA, None)]


def test_a_coco_set_copies_the_file_and_dev_frames_get_a_frames_csv():
    coco = Path("/r/ann/instances.json")
    files, _ = plan([A, B], coco=coco, split="dev")
    assert [(f.path, f.source, f.text) for f in files] == [
        ("coco.json", coco, None), ("frames.csv", None, "frame,session,zoom,split\na,,,dev\nb,,,dev\n"),
        ("images/a.jpg", A, None), ("images/b.png", B, None)]


def test_two_images_with_one_stem_and_a_name_a_manifest_refuses_are_problems():
    files, problems = plan([A, Path("/r/ds/images/train/a.png"), Path("/r/ds/images/val/ b.jpg")],
                           names=["cat"], split="test")
    assert [(p.where, p.what) for p in problems] == [
        ("/r/ds/images/train/a.png", "two images share the frame id (file stem)"),
        ("/r/ds/images/val/ b.jpg", "a path component starts or ends with whitespace (a reader that trims it "
                                    "names another file)")]
    assert [f.path for f in files] == ["classes.txt", "images/ b.jpg", "images/a.jpg"]


def test_frames_text():
    assert frames_text([], split="dev") == "frame,session,zoom,split\n"
    assert frames_text(["s1-0"], split="test") == "frame,session,zoom,split\ns1-0,,,test\n"


@pytest.mark.parametrize("source, repo, ref", [
    ("/r/ds/images/val/a.jpg", "/r", "../../../ds/images/val/a.jpg"),      # both in the repository: relative
    ("/r/eval/raw/a.jpg", "/r", "../../raw/a.jpg"),
    ("/mnt/data/a.jpg", "/r", "/mnt/data/a.jpg"),                           # outside it: absolute
    ("/r/ds/a.jpg", None, "/r/ds/a.jpg"),                                   # no repository: absolute
])
def test_source_ref(source, repo, ref):
    assert source_ref(Path(source), folder=Path("/r/eval/data/pets"), repo=Path(repo) if repo else None) == ref


def test_the_gitignore_lists_the_copies_only():
    files = [SetFile("coco.json", source=Path("/c.json")), SetFile("images/a.jpg", source=A),
             SetFile("frames.csv", text="x"), SetFile("manifest.csv", text="x")]
    assert gitignore_text(files).splitlines()[1:] == ["/coco.json", "/images/"]


def test_the_manifest_has_every_file_with_its_digest_and_the_copies_source():
    files = [SetFile("images/a.jpg", source=A), SetFile("classes.txt", text="cat\n")]
    digests = {"images/a.jpg": ("a" * 64, 10), "classes.txt": ("b" * 64, 4)}
    text = manifest_text(files, digests=digests, sources={"images/a.jpg": "../../ds/a.jpg"})
    assert text == (f"path,sha256,bytes,source\nclasses.txt,{'b' * 64},4,\nimages/a.jpg,{'a' * 64},10,../../ds/a.jpg\n")
    entries = parse_manifest(text, file=Path("data/pets/manifest.csv")).entries      # candor's reader takes it
    assert [(e.path, e.source) for e in entries] == [("classes.txt", None), ("images/a.jpg", "../../ds/a.jpg")]


def test_foreign_names_what_add_set_does_not_write():
    assert foreign(["images", "labels", "classes.txt", "coco.json", "frames.csv", "manifest.csv", ".gitignore"]) == []
    assert foreign(["notes.md", "images", ".dvc"]) == [".dvc", "notes.md"]
