"""Property-based fuzzing of every reader of a user file: only ``InputError`` may escape.

Each reader gets random bytes, its good file re-encoded (UTF-16, Latin-1, ...; with a BOM),
random JSON or YAML structures where it reads JSON or YAML, and random mutations of its good
CSV (cells dropped, doubled, swapped, replaced by random text). A reader may accept the input
or raise :class:`candor_eval.common.errors.InputError`; any other exception is a bug. Seeded
(``derandomize``) and bounded (``max_examples``): the whole file runs in a few seconds.
"""
from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from candor_eval.common.counts import read_counts
from candor_eval.common.errors import InputError
from candor_eval.common.manifest import load_manifest
from candor_eval.common.params import load_yaml, section
from candor_eval.common.tables import read_json, read_rows, read_text
from candor_eval.detection.config import MatchParams
from candor_eval.detection.model_card import load_card
from candor_eval.detection.scoring.coco import read_coco
from candor_eval.detection.scoring.yolo import read_classes, read_yolo
from candor_eval.lots.answers import normalise_line, read_answers
from candor_eval.lots.golden import read_lots
from candor_eval.lots.listings import read_listings
from candor_eval.lots.params import CompsParams, IdentifyParams
from candor_eval.lots.recording import RecordLine, load_recording, parse_answer
from candor_eval.review.params import GateParams, StatsParams
from candor_eval.stats.outcomes import parse_table, spec_of
from candor_eval.stats.paired import Paired
from candor_eval.stats.rates import Rate
from tests.conftest import ROOT

FUZZ = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
WORK = Path(tempfile.mkdtemp(prefix="candor-fuzz-"))
atexit.register(shutil.rmtree, WORK, ignore_errors=True)


def _at(name: str) -> Path:
    return WORK / name


def _yolo_labels(path: Path) -> Any:
    root = path.parent / "yolo"
    (root / "labels").mkdir(parents=True, exist_ok=True)
    (root / "images").mkdir(exist_ok=True)
    (root / "classes.txt").write_text("deer\nsheep\n", encoding="utf-8")
    target = root / "labels" / "a.txt"
    shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    target.mkdir() if path.is_dir() else shutil.copyfile(path, target)
    return read_yolo(root, frames=["a"], sizes={"a": (64, 32)})


def _params(path: Path) -> Any:
    return [section(m, n, path=path) for n, m in (("stats", StatsParams), ("gate", GateParams),
                                                  ("comps", CompsParams), ("identify", IdentifyParams),
                                                  ("match", MatchParams))]


def _line(**kw: Any) -> RecordLine:
    raw = json.dumps({"type": "item", "item": {"itemManufacturer": "Dell", "quantity": "2"}})
    parsed, why = parse_answer(raw)
    return RecordLine(case="T001", run=1, raw=raw, parsed=parsed, parse_error=why, provider="p", model="m",
                      prompt_sha256="0" * 64, gallery="all", **kw)


def _outcomes(path: Path) -> Any:
    return parse_table(spec_of("identification.csv"), read_text(path), where=str(path))


COCO = json.dumps({"images": [{"id": 1, "file_name": "a.png", "width": 64, "height": 32}],
                   "categories": [{"id": 1, "name": "deer"}],
                   "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]}]})
PARAMS = ("stats:\n  confidence: 0.95\n  alpha: 0.05\n  reference: {lots: p}\n"
          "gate: {reference: a, candidate: b, split: test}\nmatch: {iou: 0.5, critical: [deer], bands: [16, 48]}\n"
          "comps: {min_comps: 1, band: [0.5, 1.5]}\nidentify: {candidates: [p], runs: 2, timeout_s: 2}\n")

# name -> (reader of a path, a good file's text, its kind)
READERS: dict[str, tuple[Callable[[Path], Any], str, str]] = {
    "text": (read_text, "héllo\n", "text"),
    "json": (read_json, COCO, "json"),
    "csv": (lambda p: read_rows(p, columns=("a", "b")), "a,b\n1,x\n2,\"y,z\"\n", "csv"),
    "params": (_params, PARAMS, "yaml"),
    "yaml": (load_yaml, PARAMS, "yaml"),
    "model-card": (load_card, "onnx: m.onnx\nsha256: " + "a" * 64 + "\nclasses: [deer, sheep]\n", "yaml"),
    "manifest": (load_manifest, "path,sha256,bytes\na.png," + "b" * 64 + ",12\n", "csv"),
    "classes": (read_classes, "deer\nsheep\n", "text"),
    "yolo-labels": (_yolo_labels, "0 0.5 0.5 0.25 0.25\n1 0.2 0.2 0.1 0.1\n", "text"),
    "coco": (read_coco, COCO, "json"),
    "recording": (load_recording, _line().to_json() + "\n", "jsonl"),
    "answers": (read_answers, normalise_line(_line()).to_json() + "\n", "jsonl"),
    "listings": (read_listings, (ROOT / "tests/data/comps/listings.csv").read_text(encoding="utf-8"), "csv"),
    "lots": (read_lots, (ROOT / "tests/data/lots/lots.csv").read_text(encoding="utf-8"), "csv"),
    "outcomes": (_outcomes, "lot,tier,candidate,run,outcome,count_exact\nT1,held,p,1,hit,1\n", "csv"),
}
# readers of a JSON document already parsed (the records of the stats files)
DOC_READERS: dict[str, Callable[[Any], Any]] = {
    "counts": lambda d: read_counts(d, where="m.json"),
    "rate": lambda d: Rate.from_json(d, where="m.json"),
    "paired": lambda d: Paired.from_json(d, where="m.json"),
}


def only_input_errors(name: str, data: bytes) -> None:
    """Write ``data`` as reader ``name``'s file and read it: accepted, or an InputError."""
    path = _at(name) / ("in.yaml" if READERS[name][2] == "yaml" else "in.txt")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    try:
        READERS[name][0](path)
    except InputError:
        pass


def of_kind(*kinds: str) -> list[str]:
    return [n for n, (_, _, kind) in READERS.items() if kind in kinds]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from(["\ud800", "1", "", "\n", "deer"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "images", "annotations", "categories", "k", "n", "unit", "case", "run", "raw",
                         "bbox", "name", "a", "b", "rate", "lo", "hi", "counts", "verdict", "x"]), inner, max_size=5),
    max_leaves=12)


@pytest.mark.parametrize("name", sorted(READERS))
@FUZZ
@given(data=st.binary(max_size=200))
def test_random_bytes(name: str, data: bytes):
    only_input_errors(name, data)


@pytest.mark.parametrize("name", sorted(READERS))
@FUZZ
@given(encoding=st.sampled_from(["utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252", "utf-8-sig", "utf-7"]),
       accent=st.sampled_from(["é", "ß", "€", "\u00a0", "日本"]), at=st.integers(0, 200))
def test_other_encodings(name: str, encoding: str, accent: str, at: int):
    text = READERS[name][1]
    at = min(at, len(text))
    only_input_errors(name, (text[:at] + accent + text[at:]).encode(encoding, errors="replace"))


@pytest.mark.parametrize("name", sorted(READERS))
@FUZZ
@given(cut=st.integers(0, 400), junk=st.binary(max_size=8))
def test_cut_and_spliced(name: str, cut: int, junk: bytes):
    good = READERS[name][1].encode("utf-8")
    only_input_errors(name, good[:cut] + junk + good[cut:])


@pytest.mark.parametrize("name", of_kind("json", "jsonl"))
@FUZZ
@given(doc=json_values, lines=st.integers(1, 3))
def test_json_structures(name: str, doc: Any, lines: int):
    text = json.dumps(doc, ensure_ascii=True)
    only_input_errors(name, ("\n".join([text] * lines) + "\n").encode("utf-8"))


@pytest.mark.parametrize("name", of_kind("json", "jsonl", "yaml"))
@pytest.mark.parametrize("depth", [50, 5000, 100_000])
def test_deep_nesting(name: str, depth: int):
    only_input_errors(name, ("[" * depth + "]" * depth + "\n").encode())
    only_input_errors(name, ('{"images": ' + "[" * depth + "]" * depth + "}\n").encode())


@pytest.mark.parametrize("name", of_kind("yaml"))
@FUZZ
@given(doc=json_values, section_=st.sampled_from(["stats", "gate", "match", "comps", "identify", "classes",
                                                 "onnx", "sha256"]))
def test_yaml_structures(name: str, doc: Any, section_: str):
    only_input_errors(name, yaml.safe_dump({section_: doc}, allow_unicode=False).encode("utf-8"))
    only_input_errors(name, yaml.safe_dump(doc, allow_unicode=False).encode("utf-8"))


@pytest.mark.parametrize("name", of_kind("yaml"))
@pytest.mark.parametrize("text", [
    "a: &x [1, 2]\nb: *x\n",                                       # alias
    "stats:\n  alpha: .nan\n", "match:\n  iou: .inf\n",             # non-finite
    "stats: {}\nstats: {}\n", "? [a, b]\n: 1\n",                   # repeated key, a list as a key
    "a: !!python/object:os.system {}\n", "a: b: c\n", "\t- x\n",    # unsafe tag, syntax errors
])
def test_hostile_yaml(name: str, text: str):
    with pytest.raises(InputError):
        READERS[name][0](_write(name, text))


def _write(name: str, text: str) -> Path:
    path = _at(name) / "in.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", of_kind("csv"))
@FUZZ
@given(data=st.data())
def test_csv_mutations(name: str, data: st.DataObject):
    rows = [line.split(",") for line in READERS[name][1].splitlines()]
    for _ in range(data.draw(st.integers(1, 3))):
        r = data.draw(st.integers(0, len(rows) - 1))
        c = data.draw(st.integers(0, max(len(rows[r]) - 1, 0)))
        op = data.draw(st.sampled_from(["drop", "double", "text", "row-twice", "swap", "quote"]))
        if op == "drop" and rows[r]:
            del rows[r][c]
        elif op == "double" and rows[r]:
            rows[r].insert(c, rows[r][c])
        elif op == "text" and rows[r]:
            rows[r][c] = data.draw(st.text(max_size=6) | st.sampled_from(["nan", "-1", "1e999", "١٢", "1_0", " 7 "]))
        elif op == "row-twice":
            rows.insert(r, list(rows[r]))
        elif op == "swap" and len(rows) > 1:
            rows[0], rows[r] = rows[r], rows[0]
        elif op == "quote" and rows[r]:
            rows[r][c] = '"' + rows[r][c]
    only_input_errors(name, ("\n".join(",".join(r) for r in rows) + "\n").encode("utf-8", errors="surrogatepass"))


@pytest.mark.parametrize("name", sorted(DOC_READERS))
@FUZZ
@given(doc=json_values)
def test_record_readers(name: str, doc: Any):
    try:
        DOC_READERS[name](doc)
    except InputError:
        pass


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_folder_where_the_file_should_be(name: str):
    folder = _at(name) / "a-folder.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    with pytest.raises(InputError):
        READERS[name][0](folder)


@pytest.mark.parametrize("name", sorted(READERS))
def test_the_good_file_is_read(name: str):
    """The fuzzing starts from files the readers accept (else every mutation would be refused anyway)."""
    reader, text, kind = READERS[name]
    path = _at(name) / ("good.yaml" if kind == "yaml" else "good.txt")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    first = reader(path)
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))    # a UTF-8 BOM changes nothing
    assert repr(reader(path)) == repr(first)
