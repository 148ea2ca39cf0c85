"""Tests for candor_eval/detection/frames.py: the frames.csv reader, and what is verified is what is read."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.common.manifest import build_manifest_rows, format_manifest
from candor_eval.detection.frames import (
    check_listed,
    check_sessions_within_splits,
    load_frames,
    read_files,
    read_frames,
)


def test_read_frames_validation(tmp_path):
    p = tmp_path / "frames.csv"
    p.write_text("frame,session,zoom,split\nb,s1,1,test\na,s1,0.5,dev\n")
    info = read_frames(p)
    assert info.frames == ("a", "b") and info.split == ("dev", "test") and info.zoom == ("0.5", "1")
    p.write_text("frame,session,zoom,split\na,s1,1,train\na,s1,1,dev\n")
    with pytest.raises(InputError) as err:
        read_frames(p)
    assert "row 2.split" in err.value.message and "row 3.frame" in err.value.message
    p.write_text("frame,zoom\na,1\n")
    with pytest.raises(InputError, match="missing column"):
        read_frames(p)


def a_set(root, files: dict[str, str]):
    """A set folder holding ``files`` (relative path -> text), listed in its manifest."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "manifest.csv").write_text(format_manifest(build_manifest_rows(root)))
    return root


def test_read_files_are_the_files_a_reader_reads(tmp_path):
    a_set(tmp_path, {"images/b.PNG": "", "images/a.jpg": "", "images/notes.md": "", "labels/a.txt": "",
                     "labels/x.json": "", "classes.txt": "", "coco.json": "", "README.md": "", ".gitignore": ""})
    assert read_files(tmp_path) == ["classes.txt", "coco.json", "images/a.jpg", "images/b.PNG", "labels/a.txt"]


def test_without_frames_csv_only_the_listed_images_are_frames_else_an_error_names_each_unlisted_file(tmp_path):
    a_set(tmp_path, {"images/a.png": "", "images/b.png": "", "labels/a.txt": ""})
    assert load_frames(tmp_path).frames == ("a", "b")
    (tmp_path / "images" / "c.png").write_text("")          # added to the folder, not to the manifest
    (tmp_path / "labels" / "c.txt").write_text("")
    with pytest.raises(InputError) as err:
        load_frames(tmp_path)
    assert [p.where for p in err.value.problems] == [str(tmp_path / "images" / "c.png"),
                                                      str(tmp_path / "labels" / "c.txt")]
    assert "not listed in" in err.value.message and f"candor fetch manifest {tmp_path}" in err.value.message


def test_an_unlisted_truth_or_frames_file_is_an_error_and_a_set_without_a_manifest_is_not_checked(tmp_path):
    a_set(tmp_path, {"images/a.png": "", "labels/a.txt": ""})
    (tmp_path / "frames.csv").write_text("frame,session,zoom,split\na,,,dev\n")
    with pytest.raises(InputError, match="frames.csv: not listed"):
        check_listed(tmp_path)
    (tmp_path / "manifest.csv").unlink()
    check_listed(tmp_path)                                     # the stages require the manifest themselves
    assert load_frames(tmp_path).split == ("dev",)


def test_a_session_lies_in_one_split(tmp_path):
    """A session with dev and test frames is named with its rows per split; the empty session is none."""
    p = tmp_path / "frames.csv"
    p.write_text("frame,session,zoom,split\nb,s1,1,test\na,s1,1,dev\nc,s2,1,test\nd,,1,dev\ne,,1,test\nf,s1,1,test\n")
    info = read_frames(p)
    assert info.rows == (3, 2, 4, 5, 6, 7)
    with pytest.raises(InputError) as err:
        check_sessions_within_splits(info, where="frames.csv")
    assert err.value.message.splitlines()[0] == \
        "frames.csv: session 's1' lies in two splits: dev row 3 (a); test row 2 (b), row 7 (f)"
    p.write_text("frame,session,zoom,split\na,s1,1,dev\nb,s2,1,test\n")
    check_sessions_within_splits(read_frames(p), where="frames.csv")


def test_frames_csv_is_a_regular_file_of_bounded_size(tmp_path, monkeypatch):
    """A symlink to /dev/zero (read whole, it never ends) or a file over the cap is named, never read."""
    import candor_eval.detection.frames as frames

    assert frames.FRAMES_MAX_BYTES == 64 * 2 ** 20
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"zero.csv: not a regular file .*expected a CSV file of at most"):
        read_frames(tmp_path / "zero.csv")
    text = "frame,session,zoom,split\na,s1,1,test\n"
    (tmp_path / "frames.csv").write_text(text)
    monkeypatch.setattr(frames, "FRAMES_MAX_BYTES", len(text))
    assert read_frames(tmp_path / "frames.csv").frames == ("a",)
    monkeypatch.setattr(frames, "FRAMES_MAX_BYTES", len(text) - 1)
    with pytest.raises(InputError, match=f"frames.csv: larger than {len(text) - 1} bytes"):
        read_frames(tmp_path / "frames.csv")


def test_a_manifest_that_is_not_a_regular_file_is_refused_not_taken_for_no_manifest(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "manifest.csv").symlink_to("/dev/zero")
    with pytest.raises(InputError, match="manifest.csv: not a regular file"):
        check_listed(tmp_path)
    (tmp_path / "manifest.csv").unlink()
    (tmp_path / "manifest.csv").symlink_to(tmp_path / "gone.csv")          # dangling
    with pytest.raises(InputError, match="manifest.csv: file not found"):
        check_listed(tmp_path)
    (tmp_path / "manifest.csv").unlink()
    check_listed(tmp_path)                                                  # no manifest: not checked
