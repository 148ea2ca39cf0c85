"""candor_eval.common.atomic: where a write may not go is an input error, and nothing is left behind."""
from __future__ import annotations

import pytest

from candor_eval.common.atomic import write_text
from candor_eval.common.errors import InputError


def test_a_folder_at_the_output_path_is_named(tmp_path):
    (tmp_path / "out.csv").mkdir()
    with pytest.raises(InputError, match="out.csv: is a folder"):
        write_text(tmp_path / "out.csv", "x")
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_a_file_where_a_parent_folder_should_be_is_named(tmp_path):
    (tmp_path / "a").write_text("x")
    with pytest.raises(InputError, match="a: is a file"):
        write_text(tmp_path / "a" / "b" / "out.csv", "x")
    assert (tmp_path / "a").read_text() == "x"


def test_pretty_json_and_the_list_writer_are_json_dumps_byte_for_byte():
    import io
    import json
    import random

    from candor_eval.common.atomic import JsonListWriter, dumps_json, pretty_json
    rng = random.Random(4)
    leaves = [0, -1, 2**70, 0.1, 1e-7, 1e22, -0.0, "a\"b\n\\", "é✓", True, False, None, [], {}]

    def value(depth=0):
        r = rng.random()
        if depth > 3 or r < 0.4:
            return rng.choice(leaves)
        if r < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randint(0, 4))}

    for _ in range(500):
        items = [value() for _ in range(rng.randint(0, 6))]
        assert pretty_json(items) == json.dumps(items, indent=2, ensure_ascii=False, allow_nan=False)
        buf = io.StringIO()
        writer = JsonListWriter(buf)
        cut = rng.randint(0, len(items))
        for part in (items[:cut], [], items[cut:]):
            writer.extend(part)
        writer.close()
        assert buf.getvalue() == dumps_json(items)
    with pytest.raises(ValueError):
        pretty_json([float("nan")])


# --- remove_others: an owned output folder holds exactly what this run wrote


def test_remove_others_keeps_exactly_the_listed_files_and_drops_empty_folders(tmp_path):
    """Under ``root`` every file but ``keep`` (relative paths) goes, then every folder left empty
    (one emptied now or already empty); ``root`` itself stays, even when nothing is kept."""
    for rel in ("a.json", "sub/c.json", "sub/old.json", "gone/b.json", "gone/deeper/d.json"):
        (tmp_path / "out" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "out" / rel).write_text(rel)
    (tmp_path / "out" / "empty").mkdir()
    from candor_eval.common.atomic import remove_others
    remove_others(tmp_path / "out", keep=["a.json", "./sub/c.json"])
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")) == [
        "a.json", "sub", "sub/c.json"]
    assert (tmp_path / "out" / "sub" / "c.json").read_text() == "sub/c.json"
    remove_others(tmp_path / "out", keep=[])
    assert (tmp_path / "out").is_dir() and list((tmp_path / "out").iterdir()) == []


def test_remove_others_of_a_missing_folder_does_nothing(tmp_path):
    from candor_eval.common.atomic import remove_others
    remove_others(tmp_path / "never-written", keep=["a.json"])
    assert not (tmp_path / "never-written").exists()


def test_remove_others_removes_a_link_not_what_it_points_to(tmp_path):
    """A stale symlink in the folder goes; the file it points to, outside the folder, stays."""
    from candor_eval.common.atomic import remove_others
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere.json").write_text("x")
    (tmp_path / "out" / "link.json").symlink_to(tmp_path / "elsewhere.json")
    remove_others(tmp_path / "out", keep=[])
    assert list((tmp_path / "out").iterdir()) == [] and (tmp_path / "elsewhere.json").read_text() == "x"


def test_remove_others_keeps_a_file_named_by_another_path_to_it(tmp_path, monkeypatch):
    """A kept path is compared resolved (``./x``, a linked folder) when it is not the found path as it is;
    a folder whose files are all named as found resolves nothing (no call per file)."""
    from pathlib import Path

    from candor_eval.common.atomic import remove_others
    (tmp_path / "out" / "sub").mkdir(parents=True)
    for rel in ("sub/c.json", "sub/d.json", "e.json"):
        (tmp_path / "out" / rel).write_text(rel)
    (tmp_path / "out" / "alias").symlink_to(tmp_path / "out" / "sub", target_is_directory=True)
    remove_others(tmp_path / "out", keep=["alias/c.json", "e.json"])
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")) == [
        "alias", "e.json", "sub", "sub/c.json"]
    resolved = []
    real = Path.resolve
    monkeypatch.setattr(Path, "resolve", lambda self, *a, **k: resolved.append(self) or real(self, *a, **k))
    remove_others(tmp_path / "out", keep=["sub/c.json", "e.json"])
    assert resolved == [] and (tmp_path / "out" / "sub" / "c.json").is_file()


def test_replace_dir_files_with_clean_leaves_only_the_new_files(tmp_path):
    from candor_eval.common.atomic import replace_dir_files
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "stale.png").write_bytes(b"s")
    replace_dir_files(tmp_path, {"new/a.png": b"a", "b.png": b"b"}, clean=True)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "b.png", "new/a.png"]
    replace_dir_files(tmp_path, {"c.png": b"c"}, clean=False)
    assert (tmp_path / "b.png").read_bytes() == b"b" and (tmp_path / "c.png").read_bytes() == b"c"


def test_the_temporary_file_is_in_the_temporary_folder_never_beside_the_output(tmp_path, monkeypatch):
    from candor_eval.common.atomic import TMP_DIR, atomic_path
    monkeypatch.chdir(tmp_path)
    with atomic_path("metrics/detection/m.json") as tmp:
        assert tmp.parent == tmp_path / TMP_DIR and tmp.name.startswith("m.json.") and tmp.suffix == ".tmp"
        assert (tmp_path / TMP_DIR / ".gitignore").read_text().endswith("\n*\n")       # Git ignores the folder
        assert list((tmp_path / "metrics" / "detection").iterdir()) == []
        tmp.write_text("x")
    assert (tmp_path / "metrics" / "detection" / "m.json").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics"]                # the empty folder is gone


def test_outside_the_working_folder_the_temporary_folder_is_beside_the_output(tmp_path, monkeypatch):
    from candor_eval.common.atomic import TMP_DIR, temp_dir_for
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert temp_dir_for(tmp_path / "here" / "a.json") == tmp_path / "here" / TMP_DIR
    assert temp_dir_for(tmp_path / "there" / "a.json") == tmp_path / "there" / TMP_DIR
    write_text(tmp_path / "there" / "a.json", "x")
    assert sorted(p.name for p in (tmp_path / "there").iterdir()) == ["a.json"]


def test_a_write_sweeps_a_dead_writer_s_temporary_but_not_a_live_one_s(tmp_path, monkeypatch):
    import fcntl
    import os

    from candor_eval.common.atomic import TMP_DIR
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / TMP_DIR
    folder.mkdir()
    (folder / "a.json.dead.tmp").write_text("left by a kill")            # no process holds its lock
    (folder / "b.json.live.tmp").write_text("being written")
    (folder / "notes.txt").write_text("not a temporary")
    live = os.open(folder / "b.json.live.tmp", os.O_RDONLY)
    fcntl.flock(live, fcntl.LOCK_EX)
    try:
        write_text("out/c.json", "c")
        assert sorted(p.name for p in folder.iterdir()) == [".gitignore", "b.json.live.tmp", "notes.txt"]
    finally:
        os.close(live)                                                     # its writer dies
    (folder / "notes.txt").unlink()
    write_text("out/c.json", "c2")                                         # a change: "c" again writes nothing
    assert not folder.exists() and (tmp_path / "out" / "c.json").read_text() == "c2"


def test_a_failed_write_leaves_no_temporary(tmp_path, monkeypatch):
    from candor_eval.common.atomic import atomic_open
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError), atomic_open("out/a.json") as fh:
        fh.write("half")
        raise RuntimeError
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["out"]


def test_a_read_only_working_folder_puts_the_temporary_folder_beside_the_output(tmp_path, monkeypatch):
    from pathlib import Path

    from candor_eval.common.atomic import TMP_DIR
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    real_mkdir, used = Path.mkdir, []

    def mkdir(self, *args, **kwargs):             # as if the working folder were read-only (root ignores chmod)
        if self == tmp_path / TMP_DIR:
            raise PermissionError(13, "Permission denied", str(self))
        used.append(self)
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    write_text("out/a.json", "x")
    assert Path("out", TMP_DIR) in used
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["out", "out/a.json"]


def test_a_temporary_folder_is_locked_swept_when_dead_and_removed_after(tmp_path, monkeypatch):
    from candor_eval.common.atomic import TMP_DIR, temp_file
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / TMP_DIR / "set.dead.tmp" / "images").mkdir(parents=True)   # a killed `add set`'s
    (tmp_path / TMP_DIR / "set.dead.tmp" / "images" / "a.png").write_bytes(b"a")
    with temp_file(tmp_path / "data" / "set", folder=True) as stage:
        assert stage.is_dir() and stage.parent == tmp_path / TMP_DIR
        assert sorted(p.name for p in (tmp_path / TMP_DIR).iterdir()) == [".gitignore", stage.name]
        with temp_file(tmp_path / "data" / "other") as tmp:        # a nested write does not sweep the live one
            assert stage.is_dir() and tmp.is_file()
        (stage / "f.txt").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"] and not any((tmp_path / "data").iterdir())


@pytest.fixture
def fsyncs(monkeypatch):
    """Every fsync the writes make (its file descriptor), in order."""
    import os

    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd) or real(fd))
    return calls


def identity(path):
    st = path.stat()
    return st.st_ino, st.st_mtime_ns


def test_replace_dir_files_writes_only_the_files_whose_bytes_differ(tmp_path, fsyncs, monkeypatch):
    from candor_eval.common.atomic import replace_dir_files
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "plots"
    replace_dir_files(out, {"a.svg": b"a", "b.svg": b"b", "sub/c.svg": b"c"}, clean=True)
    assert len(fsyncs) == 3
    before = {n: identity(out / n) for n in ("a.svg", "b.svg", "sub/c.svg")}
    fsyncs.clear()
    replace_dir_files(out, {"a.svg": b"a", "b.svg": b"B", "sub/c.svg": b"c", "d.svg": b"d"}, clean=True)
    assert len(fsyncs) == 2                                                      # b changed, d is new
    assert identity(out / "a.svg") == before["a.svg"] and identity(out / "sub/c.svg") == before["sub/c.svg"]
    assert identity(out / "b.svg") != before["b.svg"] and (out / "b.svg").read_bytes() == b"B"
    assert (out / "d.svg").read_bytes() == b"d"
    fsyncs.clear()
    replace_dir_files(out, {"a.svg": b"a"}, clean=True)                        # unchanged, the others removed
    assert fsyncs == [] and identity(out / "a.svg") == before["a.svg"]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["a.svg"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plots"]              # no temporary folder left


def test_an_unchanged_json_or_text_file_gets_no_temporary_at_all(tmp_path, monkeypatch):
    import tempfile

    from candor_eval.common.atomic import write_json
    monkeypatch.chdir(tmp_path)
    write_json("m.json", {"a": [1, 2.5]})
    write_text("r.md", "# r\n")
    mtimes = identity(tmp_path / "m.json"), identity(tmp_path / "r.md")

    def no_temporary(*args, **kwargs):
        raise AssertionError("a temporary file for an unchanged output")

    monkeypatch.setattr(tempfile, "mkstemp", no_temporary)
    write_json("m.json", {"a": [1, 2.5]})
    write_text("r.md", "# r\n")
    assert (identity(tmp_path / "m.json"), identity(tmp_path / "r.md")) == mtimes
    with pytest.raises(AssertionError, match="unchanged"):
        write_json("m.json", {"a": [1, 2.25]})                                  # a change needs its temporary


def test_a_streamed_write_of_the_same_bytes_is_discarded_and_of_other_bytes_moved_in(tmp_path, fsyncs, monkeypatch):
    from candor_eval.common.atomic import atomic_open
    monkeypatch.chdir(tmp_path)
    with atomic_open("out/t.csv") as fh:
        fh.write("x,y\n" * 1000)
    before = identity(tmp_path / "out" / "t.csv")
    fsyncs.clear()
    with atomic_open("out/t.csv") as fh:
        fh.write("x,y\n" * 1000)
    assert fsyncs == [] and identity(tmp_path / "out" / "t.csv") == before
    for text in ("x,y\n" * 999 + "x,z\n", "x,y\n" * 1001, "x,y\n"):            # same size, longer, shorter
        with atomic_open("out/t.csv") as fh:
            fh.write(text)
        assert (tmp_path / "out" / "t.csv").read_text() == text
    assert len(fsyncs) == 3 and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_same_bytes_behind_a_link_or_another_mode_are_written_as_a_regular_0644_file(tmp_path):
    import os
    import stat

    from candor_eval.common.atomic import holds, replace_dir_files
    (tmp_path / "target.json").write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "target.json")
    (tmp_path / "private.json").write_bytes(b"{}")
    os.chmod(tmp_path / "private.json", 0o600)
    os.chmod(tmp_path / "target.json", 0o644)
    assert holds(tmp_path / "target.json", b"{}") and not holds(tmp_path / "target.json", b"{ }")
    assert not holds(tmp_path / "link.json", b"{}") and not holds(tmp_path / "private.json", b"{}")
    assert not holds(tmp_path / "missing.json", b"") and not holds(tmp_path, b"")
    replace_dir_files(tmp_path, {"link.json": b"{}", "private.json": b"{}"}, clean=False)
    for name in ("link.json", "private.json"):
        st = os.lstat(tmp_path / name)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644, name
    assert (tmp_path / "target.json").read_bytes() == b"{}"


def test_an_error_midway_loses_nothing_and_leaves_no_half_file(tmp_path, monkeypatch):
    from candor_eval.common.atomic import replace_dir_files
    monkeypatch.chdir(tmp_path)
    replace_dir_files("out", {"a.json": b"a", "b.json": b"b"}, clean=True)
    (tmp_path / "out" / "c.json").mkdir()                                     # a folder where an output goes
    with pytest.raises(InputError, match="c.json"):
        replace_dir_files("out", {"a.json": b"a", "b.json": b"B", "c.json": b"c"}, clean=True)
    assert (tmp_path / "out" / "a.json").read_bytes() == b"a" and (tmp_path / "out" / "b.json").read_bytes() == b"B"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]              # no temporary left
