"""candor_eval.common.verify: a data set's files checked against its manifest, the missing ones fetched.

Per entry (:func:`verify_entry`): a present file is hashed and its size compared (a Problem when
either differs); a missing one without a source is ``missing``; a missing one with a source is
fetched beside its final path and moved into place only when hash and size match, else nothing is
left behind; a path that leads out of the set's folder (a symlink, of the file or of a folder on the
way) or holds a folder is a Problem before anything is read or fetched. A source's user-info never
reaches a Problem. Every bad file of every manifest is collected (:func:`verify_sets`).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.common.manifest import Entry, manifest_sha256
from candor_eval.common.verify import (
    find_manifests,
    outside,
    resolve_source,
    rewrite_manifest,
    verify_entry,
    verify_manifest,
    verify_sets,
)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def listed(root: Path, path: str, data: bytes, *, source: str | None = None, write: bool = True) -> Entry:
    """The manifest entry of ``data`` at ``root/path``; the file is written unless ``write`` is False."""
    if write:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return Entry(path, digest(data), len(data), source)


def left_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_resolve_source_keeps_a_url_and_roots_a_plain_path(tmp_path):
    assert resolve_source("https://h.example/a.png", root=tmp_path) == "https://h.example/a.png"
    assert resolve_source("../mirror/a.png", root=tmp_path / "set") == str((tmp_path / "mirror" / "a.png").resolve())


def test_outside_sees_a_symlinked_file_or_folder_leading_out(tmp_path):
    root, elsewhere = tmp_path / "set", tmp_path / "elsewhere"
    (root / "img").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "a.png").write_bytes(b"a")
    (root / "img" / "in.png").write_bytes(b"i")
    (root / "img" / "out.png").symlink_to(elsewhere / "a.png")
    (root / "img" / "alias.png").symlink_to(root / "img" / "in.png")     # a link that stays inside
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    assert outside(root / "img" / "in.png", root=root) is None
    assert outside(root / "img" / "alias.png", root=root) is None
    assert outside(root / "img" / "missing.png", root=root) is None
    assert outside(root / "img" / "out.png", root=root) == (elsewhere / "a.png").resolve()
    assert outside(root / "linked" / "a.png", root=root) == (elsewhere / "a.png").resolve()


def test_a_present_file_that_matches_is_no_problem(tmp_path):
    assert verify_entry(listed(tmp_path, "a/b.png", b"abc"), root=tmp_path, where="b.png") is None


def test_a_changed_file_is_a_hash_mismatch_naming_both_digests(tmp_path):
    entry = listed(tmp_path, "a.png", b"abc")
    (tmp_path / "a.png").write_bytes(b"abd")
    problem = verify_entry(entry, root=tmp_path, where="set/a.png")
    assert (problem.where, problem.what, problem.expected, problem.got) == (
        "set/a.png", "SHA-256 mismatch", digest(b"abc"), digest(b"abd"))


def test_a_missing_file_without_a_source_is_missing(tmp_path):
    entry = listed(tmp_path, "a.png", b"abc", write=False)
    assert str(verify_entry(entry, root=tmp_path, where="a.png")) == f"a.png: missing (expected {digest(b'abc')}, " \
                                                                      "got missing)"


def test_a_missing_file_is_fetched_from_its_source_and_moved_into_place(tmp_path):
    mirror, root = tmp_path / "mirror", tmp_path / "set"
    mirror.mkdir()
    (mirror / "a.png").write_bytes(b"abc")
    entry = listed(root, "img/a.png", b"abc", source="../mirror/a.png", write=False)
    assert verify_entry(entry, root=root, where="a.png") is None
    assert (root / "img" / "a.png").read_bytes() == b"abc" and left_in(root / "img") == ["a.png"]


@pytest.mark.parametrize("served, what", [
    (b"abd", "fetched from '../mirror/a.png' but SHA-256 mismatch"),
    (None, "missing, and fetching it from '../mirror/a.png' failed: FileNotFoundError"),
])
def test_a_bad_or_failed_fetch_leaves_nothing_behind(tmp_path, served, what):
    mirror, root = tmp_path / "mirror", tmp_path / "set"
    mirror.mkdir()
    if served is not None:
        (mirror / "a.png").write_bytes(served)
    (root / "img").mkdir(parents=True)
    entry = listed(root, "img/a.png", b"abc", source="../mirror/a.png", write=False)
    assert verify_entry(entry, root=root, where="a.png").what.startswith(what)
    assert left_in(root / "img") == []


def test_a_fetched_file_of_the_wrong_size_is_not_kept(tmp_path):
    """The manifest's bytes disagree with a file whose hash matches: refused, the temp file removed."""
    (tmp_path / "mirror.png").write_bytes(b"abc")
    entry = Entry("a.png", digest(b"abc"), 4, "mirror.png")
    assert str(verify_entry(entry, root=tmp_path, where="a.png")) == \
        "a.png: size differs from the manifest's bytes (expected 4 bytes, got 3 bytes)"
    assert left_in(tmp_path) == ["mirror.png"]


def test_a_source_with_a_password_is_never_quoted(tmp_path):
    entry = listed(tmp_path, "a.png", b"abc", source="file://ann:hunter2@localhost/nowhere/a.png", write=False)
    problem = verify_entry(entry, root=tmp_path, where="a.png")
    assert problem.what.startswith("missing, and fetching it from") and "hunter2" not in str(problem)
    assert "file://***@localhost/nowhere/a.png" in problem.what


def test_a_symlink_out_is_refused_before_anything_is_read_or_fetched(tmp_path):
    root, secret = tmp_path / "set", tmp_path / "secret.txt"
    root.mkdir()
    secret.write_bytes(b"key")
    (root / "a.png").symlink_to(secret)
    entry = Entry("a.png", digest(b"key"), 3, "http://127.0.0.1:9/a.png")   # even a matching hash
    problem = verify_entry(entry, root=root, where="a.png")
    assert (problem.what, problem.got) == ("a symlink out of its folder", str(secret.resolve()))


def test_a_folder_where_a_file_is_listed_is_named(tmp_path):
    (tmp_path / "a.png").mkdir()
    entry = Entry("a.png", digest(b"abc"), 3, "mirror.png")
    assert verify_entry(entry, root=tmp_path, where="a.png").what == "is a folder, not a file"


def test_verify_sets_collects_every_problem_and_records_each_good_set(tmp_path):
    data = tmp_path / "data"
    good = [listed(data / "good", "a.png", b"a"), listed(data / "good", "b.png", b"bb")]
    (data / "good" / "manifest.csv").write_text("path,sha256,bytes\n" + "".join(
        f"{e.path},{e.sha256},{e.bytes}\n" for e in good))
    bad = [listed(data / "bad", "x.png", b"x", write=False), listed(data / "bad", "y.png", b"y")]
    (data / "bad" / "y.png").write_bytes(b"Y")
    (data / "bad" / "manifest.csv").write_text("path,sha256,bytes\n" + "".join(
        f"{e.path},{e.sha256},{e.bytes}\n" for e in bad))
    (data / "broken").mkdir()
    (data / "broken" / "manifest.csv").write_text("path,sha256\n")
    (data / ".cache").mkdir()                                                  # hidden: not a data set
    sets, problems = verify_sets(data)
    assert sets == {"good": {"manifest": (data / "good" / "manifest.csv").as_posix(), "sha256": manifest_sha256(good),
                             "files": 2, "bytes": 3},
                    "bad": {"manifest": (data / "bad" / "manifest.csv").as_posix(), "sha256": manifest_sha256(bad),
                            "files": 2, "bytes": 2}}
    wheres = [p.where.removeprefix(data.as_posix() + "/") for p in problems]
    assert wheres[:2] == ["bad/x.png", "bad/y.png"] and [p.what for p in problems[:2]] == ["missing",
                                                                                           "SHA-256 mismatch"]
    assert len(problems) == 3 and "broken/manifest.csv" in str(problems[2])


def test_verify_manifest_names_each_file_under_its_set(tmp_path):
    from candor_eval.common.manifest import load_manifest

    entry = listed(tmp_path, "a.png", b"a", write=False)
    (tmp_path / "manifest.csv").write_text(f"path,sha256,bytes\n{entry.path},{entry.sha256},1\n")
    (problem,) = verify_manifest(load_manifest(tmp_path / "manifest.csv"))
    assert problem.where == (tmp_path / "a.png").as_posix()


def test_find_manifests_needs_a_folder(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="file: not a folder"):
        find_manifests(tmp_path / "file")
    assert find_manifests(tmp_path) == []
    (tmp_path / "set").mkdir()
    (tmp_path / "set/manifest.csv").symlink_to("/dev/zero")    # there, not regular: load_manifest names why
    assert find_manifests(tmp_path) == [tmp_path / "set/manifest.csv"]


def test_a_source_prefix_with_user_info_is_refused(tmp_path):
    (tmp_path / "a.png").write_bytes(b"a")
    with pytest.raises(InputError) as err:
        rewrite_manifest(tmp_path, source_prefix="https://ann:hunter2@h.example/set")
    assert err.value.problems[0].what == "holds user-info (a user name or password)"
    assert "hunter2" not in err.value.message and not (tmp_path / "manifest.csv").exists()
    assert rewrite_manifest(tmp_path, source_prefix="https://h.example/set/") == (
        f"path,sha256,bytes,source\na.png,{digest(b'a')},1,https://h.example/set/a.png\n", 1)
