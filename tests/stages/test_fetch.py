"""fetch-and-verify: local and http sources, tampering, missing files, interrupted fetches."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from candor_eval.common import verify
from candor_eval.common.atomic import temp_file
from candor_eval.common.errors import run_main
from candor_eval.common.manifest import Entry, format_manifest
from candor_eval.stages import fetch

ROOT = Path(__file__).resolve().parents[2]


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def make_set(root: Path, files: dict[str, bytes], *, sources: dict[str, str] | None = None,
             present: set[str] | None = None) -> Path:
    """Write a data set folder with a manifest; only ``present`` files (default all) exist."""
    root.mkdir(parents=True, exist_ok=True)
    sources = sources or {}
    entries = [Entry(p, sha(b), len(b), sources.get(p)) for p, b in sorted(files.items())]
    for p, b in files.items():
        if present is None or p in present:
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_bytes(b)
    (root / "manifest.csv").write_text(format_manifest(entries, with_source=bool(sources)))
    return root


def run(tmp_path: Path, capsys, params: str = "{}\n") -> tuple[int, str]:
    (tmp_path / "params.yaml").write_text(params)
    code = run_main(fetch.main, ["verify", "--data", str(tmp_path / "data"), "--models", str(tmp_path / "models"),
                                 "--params", str(tmp_path / "params.yaml"), "--out", str(tmp_path / "out")])
    return code, capsys.readouterr().err


def test_verifies_and_writes_records(tmp_path, capsys):
    make_set(tmp_path / "data" / "demo", {"a.jpg": b"aaa", "sub/b.txt": b"b"})
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.onnx").write_bytes(b"onnx")
    (tmp_path / "models" / "m.yaml").write_text(f"onnx: m.onnx\nsha256: {sha(b'onnx')}\n")
    code, err = run(tmp_path, capsys)
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "data-demo.json").read_text())
    listing = f"{sha(b'aaa')}  a.jpg\n{sha(b'b')}  sub/b.txt\n".encode()
    assert record["sha256"] == sha(listing) and record["files"] == 2 and record["bytes"] == 4
    assert json.loads((tmp_path / "out" / "model-m.json").read_text())["sha256"] == sha(b"onnx")


def test_every_bad_file_is_listed_and_nothing_written(tmp_path, capsys):
    root = make_set(tmp_path / "data" / "demo", {"a.jpg": b"aaa", "b.jpg": b"bbb", "c.jpg": b"ccc"},
                    present={"a.jpg", "b.jpg"})
    (root / "a.jpg").write_bytes(b"tampered")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.onnx").write_bytes(b"other bytes")
    (tmp_path / "models" / "m.yaml").write_text(f"onnx: m.onnx\nsha256: {sha(b'onnx')}\n")
    code, err = run(tmp_path, capsys)
    assert code == 2
    assert f"a.jpg: SHA-256 mismatch (expected {sha(b'aaa')}, got {sha(b'tampered')})" in err
    assert f"c.jpg: missing (expected {sha(b'ccc')}, got missing)" in err
    assert "m.onnx: SHA-256 mismatch" in err and "declared by" in err
    assert "b.jpg" not in err
    assert not (tmp_path / "out").exists()


def test_fetches_missing_file_from_relative_and_file_url_sources(tmp_path, capsys):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "a.jpg").write_bytes(b"aaa")
    (mirror / "b.jpg").write_bytes(b"bbb")
    root = make_set(tmp_path / "data" / "demo", {"a.jpg": b"aaa", "b.jpg": b"bbb"},
                    sources={"a.jpg": "../../mirror/a.jpg", "b.jpg": (mirror / "b.jpg").as_uri()},
                    present=set())
    code, err = run(tmp_path, capsys)
    assert code == 0, err
    assert (root / "a.jpg").read_bytes() == b"aaa" and (root / "b.jpg").read_bytes() == b"bbb"


def test_fetches_over_http_from_loopback(tmp_path, capsys, http_root):
    served, url = http_root
    (served / "frame.jpg").write_bytes(b"jpeg bytes")
    root = make_set(tmp_path / "data" / "demo", {"img/frame.jpg": b"jpeg bytes"},
                    sources={"img/frame.jpg": f"{url}/frame.jpg"}, present=set())
    code, err = run(tmp_path, capsys)
    assert code == 0, err
    assert (root / "img" / "frame.jpg").read_bytes() == b"jpeg bytes"


def test_fetched_bytes_that_do_not_match_are_not_kept(tmp_path, capsys, http_root):
    served, url = http_root
    (served / "frame.jpg").write_bytes(b"wrong bytes")
    root = make_set(tmp_path / "data" / "demo", {"frame.jpg": b"right bytes"},
                    sources={"frame.jpg": f"{url}/frame.jpg"}, present=set())
    code, err = run(tmp_path, capsys)
    assert code == 2 and "fetched from" in err and "SHA-256 mismatch" in err
    assert not (root / "frame.jpg").exists()
    assert list(root.glob("*.part")) == [] and list(root.glob(".*")) == []


def test_http_404_is_reported_per_file(tmp_path, capsys, http_root):
    _, url = http_root
    make_set(tmp_path / "data" / "demo", {"frame.jpg": b"x"}, sources={"frame.jpg": f"{url}/nope.jpg"},
             present=set())
    code, err = run(tmp_path, capsys)
    assert code == 2 and "frame.jpg: missing, and fetching it from" in err


def test_interrupted_fetch_leaves_no_partial_file(tmp_path, monkeypatch):
    """A download that dies half-way (here: KeyboardInterrupt after the first chunk) leaves nothing."""
    import fsspec

    class Broken:
        def __init__(self):
            self.calls = 0

        def read(self, n):
            self.calls += 1
            if self.calls > 1:
                raise KeyboardInterrupt
            return b"half of the file"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(fsspec, "open", lambda *a, **k: Broken())
    final = tmp_path / "set" / "a.jpg"
    final.parent.mkdir()
    with pytest.raises(KeyboardInterrupt), temp_file(final) as tmp:
        verify.fetch_to("http://127.0.0.1:9/a.jpg", tmp)
    assert not final.exists()
    assert list((tmp_path / "set").iterdir()) == []


def test_bad_manifest_rows_are_rejected_before_reading_files(tmp_path, capsys):
    root = tmp_path / "data" / "demo"
    root.mkdir(parents=True)
    (root / "manifest.csv").write_text(f"path,sha256,bytes\n../escape.jpg,{'0' * 64},1\n")
    code, err = run(tmp_path, capsys)
    assert code == 2 and "manifest.csv:row 2.path" in err and "'..'" in err


def test_manifest_command_writes_sorted_manifest_with_columns(tmp_path, capsys):
    root = tmp_path / "mine"
    (root / "images").mkdir(parents=True)
    (root / "images" / "b.jpg").write_bytes(b"b")
    (root / "images" / "a.jpg").write_bytes(b"a")
    cols = tmp_path / "cols.csv"
    cols.write_text("path,split\nimages/a.jpg,dev\nimages/b.jpg,test\n")
    assert run_main(fetch.main, ["manifest", str(root), "--columns", str(cols)]) == 0
    text = (root / "manifest.csv").read_text()
    assert text.splitlines() == [
        "path,sha256,bytes,split",
        f"images/a.jpg,{sha(b'a')},1,dev",
        f"images/b.jpg,{sha(b'b')},1,test",
    ]


def test_help_explains_inputs_and_outputs(capsys):
    with pytest.raises(SystemExit) as exit_:
        fetch.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "manifest.csv" in out and "data-<set>.json" in out


def test_rewriting_a_manifest_keeps_its_columns_and_sources(tmp_path, capsys):
    root = tmp_path / "mine"
    root.mkdir()
    (root / "a.jpg").write_bytes(b"a2")           # changed on purpose
    (root / "c.jpg").write_bytes(b"c")            # new file
    (root / "manifest.csv").write_text(
        "path,sha256,bytes,source,split\n"
        f"a.jpg,{sha(b'a')},1,http://x/a.jpg,dev\n"
        f"b.jpg,{sha(b'b')},1,http://x/b.jpg,test\n")   # b.jpg is gone: its row drops out
    assert run_main(fetch.main, ["manifest", str(root)]) == 0
    assert (root / "manifest.csv").read_text().splitlines() == [
        "path,sha256,bytes,source,split",
        f"a.jpg,{sha(b'a2')},2,http://x/a.jpg,dev",
        f"c.jpg,{sha(b'c')},1,,",
    ]
    cols = tmp_path / "cols.csv"
    cols.write_text("path,split,zoom\nc.jpg,test,2\n")
    assert run_main(fetch.main, ["manifest", str(root), "--columns", str(cols), "--source-prefix", "s3://b/"]) == 0
    assert (root / "manifest.csv").read_text().splitlines() == [
        "path,sha256,bytes,source,split,zoom",
        f"a.jpg,{sha(b'a2')},2,s3://b/a.jpg,dev,",
        f"c.jpg,{sha(b'c')},1,s3://b/c.jpg,test,2",
    ]


def fetch_with_one_good_and_one_bad_source(tmp_path: Path) -> list[str]:
    """The argv of ``candor fetch verify`` on a set whose ``a.txt`` is fetched and ``b.txt`` cannot be."""
    (tmp_path / "src.txt").write_bytes(b"a\n")
    make_set(tmp_path / "data" / "s", {"a.txt": b"a\n", "b.txt": b"b\n"},
             sources={"a.txt": (tmp_path / "src.txt").as_uri(), "b.txt": (tmp_path / "gone.txt").as_uri()},
             present=set())
    (tmp_path / "params.yaml").write_text("{}\n")
    return [sys.executable, "-m", "candor_eval.stages.fetch", "verify", "--data", str(tmp_path / "data"),
            "--models", str(tmp_path / "models"), "--params", str(tmp_path / "params.yaml"), "--out",
            str(tmp_path / "out")]


def test_a_log_gets_no_progress_bar_for_the_error_to_land_on(tmp_path):
    """stderr to a file (CI's log): no ``\\r`` bar; the error line starts its line."""
    done = subprocess.run(fetch_with_one_good_and_one_bad_source(tmp_path), capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    err = done.stderr.decode()                       # bytes: text mode would turn each \r into a newline
    assert done.returncode == 2 and "\r" not in err
    assert any(line.startswith("error: ") and "b.txt" in line for line in err.split("\n"))


def test_on_a_terminal_the_bar_is_cleared_before_a_line_prints(tmp_path):
    """stderr a terminal: the bar shows, and the log line and the error each print on a cleared line
    (what is left on screen of each line, after its last ``\\r``, starts with the message)."""
    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))    # a 100-column terminal
    proc = subprocess.Popen(fetch_with_one_good_and_one_bad_source(tmp_path), stdout=sub, stderr=sub,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"})
    os.close(sub)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=60) == 2
    os.close(main)
    text = b"".join(chunks).decode()
    assert "\rverify " in text and "0%|" in text                                # the bar was there
    shown = [line.rstrip("\r").rsplit("\r", 1)[-1].strip() for line in text.split("\n")]
    assert any(s.startswith("INFO candor.fetch: fetched") for s in shown)
    assert any(s.startswith("error: ") and "b.txt" in s for s in shown)
