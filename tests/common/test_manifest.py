"""Manifest parsing, path safety, and the manifest's own SHA-256."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.common.manifest import (
    Action,
    Entry,
    build_manifest_rows,
    decide,
    format_manifest,
    manifest_sha256,
    parse_manifest,
)

A = "a" * 64
B = "b" * 64


def parse(text: str):
    return parse_manifest(text, file=Path("data/x/manifest.csv"))


def test_parses_rows_in_order_with_source_and_extra_columns():
    m = parse(f"path,sha256,bytes,source,split\na.jpg,{A},3,http://h/a.jpg,dev\nb/c.txt,{B},0,,test\n")
    assert [e.path for e in m.entries] == ["a.jpg", "b/c.txt"]
    assert m.entries[0].source == "http://h/a.jpg" and m.entries[1].source is None
    assert m.entries[1].extra == {"split": "test"}
    assert m.total_bytes == 3


@pytest.mark.parametrize("row, field, needle", [
    (f"../x.jpg,{A},1", "row 2.path", "'..'"),
    (f"a/../../x.jpg,{A},1", "row 2.path", "'..'"),
    (f"/etc/passwd,{A},1", "row 2.path", "absolute"),
    (f"C:/x.jpg,{A},1", "row 2.path", "absolute"),
    (f"a\\b.jpg,{A},1", "row 2.path", "backslash"),
    (f"./a.jpg,{A},1", "row 2.path", "'.'"),
    (f"a.jpg,{A[:-1]},1", "row 2.sha256", "malformed digest"),
    (f"a.jpg,{A.upper()},1", "row 2.sha256", "malformed digest"),
    (f"a.jpg,sha256:{A},1", "row 2.sha256", "malformed digest"),
    (f"a.jpg,{A},-1", "row 2.bytes", "byte count"),
    (f"a.jpg,{A},1,extra", "row 2", "more fields"),
])
def test_bad_rows_are_rejected_naming_row_and_field(row, field, needle):
    with pytest.raises(InputError) as err:
        parse(f"path,sha256,bytes\n{row}\n")
    assert f"data/x/manifest.csv:{field}" in err.value.message
    assert needle in err.value.message


def test_duplicates_and_unsorted_rows_are_rejected():
    with pytest.raises(InputError, match=r"duplicate path \(first on row 2\)"):
        parse(f"path,sha256,bytes\na.jpg,{A},1\na.jpg,{B},1\n")
    with pytest.raises(InputError, match="not sorted"):
        parse(f"path,sha256,bytes\nb.jpg,{A},1\na.jpg,{B},1\n")


def test_all_problems_are_reported_at_once():
    with pytest.raises(InputError) as err:
        parse(f"path,sha256,bytes\n../a,{A},1\nb,zz,1\n")
    assert len(err.value.problems) == 2
    assert "candor fetch manifest data/x" in err.value.message


def test_missing_columns():
    with pytest.raises(InputError, match="missing column"):
        parse("path,md5\nx,y\n")


def test_manifest_sha256_is_sha256sum_listing_in_order():
    entries = [Entry("a.jpg", A, 1), Entry("b.txt", B, 2)]
    listing = f"{A}  a.jpg\n{B}  b.txt\n".encode()
    assert manifest_sha256(entries) == hashlib.sha256(listing).hexdigest()
    # order matters; metadata (source, extra columns) does not
    assert manifest_sha256(entries[::-1]) != manifest_sha256(entries)
    assert manifest_sha256([Entry("a.jpg", A, 1, "http://x", {"split": "dev"}), entries[1]]) == manifest_sha256(entries)


def test_build_format_and_parse_round_trip(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_bytes(b"bb")
    (tmp_path / "a.jpg").write_bytes(b"a")
    (tmp_path / ".hidden").write_bytes(b"x")
    (tmp_path / "manifest.csv").write_text("old")
    (tmp_path / "recordings.dvc").write_text("outs:\n- path: recordings\n")     # DVC's pointer, not data
    (tmp_path / "recordings").mkdir()
    (tmp_path / "recordings" / "p.jsonl").write_bytes(b"{}\n")
    rows = build_manifest_rows(tmp_path, extra={"a.jpg": {"split": "dev"}})
    assert [r.path for r in rows] == ["a.jpg", "recordings/p.jsonl", "sub/b.txt"]
    assert rows[0].sha256 == hashlib.sha256(b"a").hexdigest()
    text = format_manifest(rows, extra_columns=("split",))
    m = parse_manifest(text, file=tmp_path / "manifest.csv")
    assert [(e.path, e.sha256, e.bytes) for e in m.entries] == [(r.path, r.sha256, r.bytes) for r in rows]
    assert [e.extra for e in m.entries] == [{"split": "dev"}, {"split": ""}, {"split": ""}]


def test_decide(tmp_path):
    (tmp_path / "here").write_bytes(b"")
    assert decide(Entry("here", A, 0), root=tmp_path) is Action.VERIFY
    assert decide(Entry("gone", A, 0, source="x"), root=tmp_path) is Action.FETCH
    assert decide(Entry("gone", A, 0), root=tmp_path) is Action.MISSING


@pytest.mark.parametrize("size", ["\u0661\u0662", "\uff11", "+12", "1_2", " 12x"])
def test_bytes_must_be_ascii_digits(size):
    with pytest.raises(InputError, match=r"row 2.bytes: not a byte count"):
        parse(f"path,sha256,bytes\na.png,{'a' * 64},{size}\n")


def test_the_bytes_column_is_compared_with_the_file(tmp_path):
    from candor_eval.common.manifest import sha256_file, size_mismatch
    from candor_eval.common.verify import verify_entry
    (tmp_path / "a.png").write_bytes(b"12345")
    entry = Entry(path="a.png", sha256=sha256_file(tmp_path / "a.png"), bytes=6)
    assert str(verify_entry(entry, root=tmp_path, where="a.png")) == \
        "a.png: size differs from the manifest's bytes (expected 6 bytes, got 5 bytes)"
    assert size_mismatch(Entry(path="a.png", sha256="", bytes=None), where="a.png", actual_bytes=5) is None


def test_a_data_folder_without_a_manifest_is_named(tmp_path):
    from candor_eval.common.verify import find_manifests
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "manifest.csv").write_text("path,sha256,bytes\n")
    (tmp_path / "b").mkdir()
    with pytest.raises(InputError, match="b/manifest.csv: data set folder without a manifest"):
        find_manifests(tmp_path)


def test_a_manifest_is_a_regular_file_of_bounded_size(tmp_path, monkeypatch):
    """A symlink to /dev/zero (read whole, it never ends) or a file over the cap is named, never read."""
    import candor_eval.common.manifest as manifest

    assert manifest.MANIFEST_MAX_BYTES == 256 * 2 ** 20
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"zero.csv: not a regular file .*expected a manifest"):
        manifest.load_manifest(tmp_path / "zero.csv")
    text = f"path,sha256,bytes\na.txt,{A},3\n"
    (tmp_path / "manifest.csv").write_text(text)
    monkeypatch.setattr(manifest, "MANIFEST_MAX_BYTES", len(text))
    assert [e.path for e in manifest.load_manifest(tmp_path / "manifest.csv").entries] == ["a.txt"]
    monkeypatch.setattr(manifest, "MANIFEST_MAX_BYTES", len(text) - 1)
    with pytest.raises(InputError, match=f"manifest.csv: larger than {len(text) - 1} bytes"):
        manifest.load_manifest(tmp_path / "manifest.csv")
