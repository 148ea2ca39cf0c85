"""Tests for candor_eval/detection/detections_file.py: rounding and order, line bytes, and the
arrays of a file with and without the file."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection import detections_file
from candor_eval.detection.detections_file import FORMAT, FrameBoxes, collect, file_lines, frame_json, read_raw


def round_candidates(boxes, scores, classes, *, floor):
    """The output rows of one frame's candidates, as the stage writes them."""
    return detections_file.candidate_rows(*detections_file.rounded_candidates(boxes, scores, classes, floor=floor))


def test_perturbation_below_precision_changes_nothing():
    rng = np.random.default_rng(0)
    boxes = np.round(rng.uniform(0, 1000, (50, 4)), 3) + 0.0002     # away from rounding boundaries
    scores = np.round(rng.uniform(0.05, 1, 50), 5) + 0.000002
    classes = rng.integers(0, 3, 50)
    base = round_candidates(boxes, scores, classes, floor=0.05)
    for eps in (1e-7, -1e-7, 3e-5):
        assert round_candidates(boxes + eps, scores + eps * 1e-2, classes, floor=0.05) == base
    # a change above the precision does show
    assert round_candidates(boxes + 0.002, scores, classes, floor=0.05) != base
    # -0.0 never appears
    assert round_candidates(np.array([[-0.0001, 0, 1, 1]]), np.array([0.5]), np.array([0]),
                            floor=0.05)[0][0] == 0.0
    assert str(round_candidates(np.array([[-0.0001, 0, 1, 1]]), np.array([0.5]), np.array([0]),
                                floor=0.05)[0][0]) == "0.0"


def naive_round_candidates(boxes, scores, classes, *, floor):
    """The rounding and sort order row by row (the reference for the vectorised version)."""
    rows = []
    for b, s, c in zip(np.asarray(boxes, float), np.asarray(scores, float), classes):
        s = round(float(s), detections_file.SCORE_DECIMALS) + 0.0
        if s >= floor:
            rows.append([*(round(float(v), detections_file.BOX_DECIMALS) + 0.0 for v in b), s, int(c)])
    return sorted(rows, key=lambda r: (r[5], -r[4], r[0], r[1], r[2], r[3]))


def test_round_candidates_matches_the_row_by_row_definition():
    rng = np.random.default_rng(5)
    boxes = rng.uniform(-1, 700, (300, 4))
    boxes[::9] = boxes[1::9][: len(boxes[::9])]                 # duplicates: full sort key used
    scores = rng.uniform(0, 1, 300)
    scores[::4] = 0.5                                            # ties on score
    classes = rng.integers(0, 4, 300)
    got = round_candidates(boxes, scores, classes, floor=0.05)
    assert got == naive_round_candidates(boxes, scores, classes, floor=0.05)
    assert round_candidates(np.zeros((0, 4)), np.zeros(0), np.zeros(0, int), floor=0.05) == []


@pytest.mark.parametrize("frame, extra", [
    ("f0001", []),
    ("f0001", [8e-05, 1e-05]),                    # Python writes these in exponent form
    ("f0001", [1e16, 123456789012345678.0]),
    ("f0001", [float("nan"), float("inf")]),
    ("fr\u00e9me", []),                           # json.dumps escapes non-ASCII
    ('a"b\\c', []),
])
def test_json_line_is_byte_identical_to_json_dumps(frame, extra):
    rng = np.random.default_rng(9)
    b = np.round(rng.uniform(0, 5000, (200, 4)), 3)
    b[:3] = [[0.0, 0.001, 0.0001, 1.5], [640.0, 415.999, 0.1, 99.9], [1e-3, 2e-3, 3e-3, 5e-4]]
    s = np.round(rng.uniform(0, 1, 200), 5)
    s[: len(extra)] = extra
    rows = [[*r, int(k)] for r, k in zip(np.column_stack([b, s]).tolist(), rng.integers(0, 60, 200))]
    obj = {"frame": frame, "width": 640, "height": 416, "boxes": rows}
    line = detections_file.json_line(obj, floats=np.concatenate([b.ravel(), s]))
    assert line == json.dumps(obj, separators=(",", ":"))


def frame_boxes(frame, rows, *, floor=0.05, size=(640, 416)):
    """A frame's :class:`FrameBoxes` from rows ``[x1, y1, x2, y2, score, class]`` (rounded and sorted)."""
    a = np.array(rows, dtype=np.float64).reshape(-1, 6)
    b, s, c = detections_file.rounded_candidates(a[:, :4], a[:, 4], a[:, 5].astype(np.int64), floor=floor)
    return FrameBoxes(frame, *size, b, s, c)


HEADER = {"format": FORMAT, "model": "m", "onnx_sha256": "0" * 64, "classes": ["deer", "sheep", "relic"],
          "input_size": [64, 64], "layout": "ultralytics", "floor": 0.05,
          "precision": {"box_px": 0.001, "score": 1e-05}}
FRAMES = [
    frame_boxes("a", [[1.00049, 2, 3, 4, 0.9, 1], [0, 0, 1, 1, 0.300004, 0], [5, 5, 6, 6, 0.04, 2]]),
    frame_boxes("b", []),                                           # a frame without boxes
    frame_boxes("c", [[-0.0001, 1e-5, 10, 10, 8e-05 + 0.5, 2]], size=(64, 128)),
]


@pytest.mark.parametrize("frames", [FRAMES, FRAMES[1:2], []], ids=["boxes", "no-boxes", "no-frames"])
def test_collect_equals_reading_the_lines_back(tmp_path, frames):
    path = tmp_path / "m.jsonl"
    path.write_text("".join(line + "\n" for line in file_lines(HEADER, frames)))
    want, got = read_raw(path), collect(HEADER, frames)
    assert got.header == want.header and got.frames == want.frames and got.sizes == want.sizes
    for field in ("frame", "cls", "boxes", "score"):
        a, b = getattr(got, field), getattr(want, field)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), field


def test_file_lines_are_the_header_then_one_line_per_frame():
    lines = list(file_lines(HEADER, FRAMES))
    assert json.loads(lines[0]) == HEADER and len(lines) == 1 + len(FRAMES)
    # frame a: the 0.04 box is under the floor; sorted by class; 1.00049 rounds to 1.0
    assert json.loads(lines[1])["boxes"] == [[0.0, 0.0, 1.0, 1.0, 0.3, 0], [1.0, 2.0, 3.0, 4.0, 0.9, 1]]
    assert lines[2] == '{"frame":"b","width":640,"height":416,"boxes":[]}'


def write_file(path, frames):
    path.write_text("".join(line + "\n" for line in file_lines(HEADER, frames)))
    return path


def many_frames(n=40, seed=3):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = int(rng.integers(0, 9))
        rows = np.column_stack([rng.uniform(0, 50, (k, 2)), rng.uniform(50, 60, (k, 2)),
                                rng.uniform(0.05, 1, k), rng.integers(0, 3, k)])
        out.append(frame_boxes(f"f{i:03d}", rows.tolist()))
    return out


def same_arrays(a, b):
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("frame", "cls", "boxes", "score"))


@pytest.mark.parametrize("max_boxes", [1, 5, 17, 10**6])
def test_chunks_are_whole_frames_in_order_and_add_up_to_the_file(tmp_path, max_boxes):
    frames = many_frames()
    path = write_file(tmp_path / "m.jsonl", frames)
    whole = read_raw(path)
    chunks = list(detections_file.iter_chunks(path, max_boxes=max_boxes))
    assert [f for c in chunks for f in c.frames] == [f.frame for f in frames]
    for c in chunks[:-1]:   # a chunk closes on the frame that reaches max_boxes
        per_frame = np.bincount(c.frame, minlength=len(c.frames))
        assert per_frame.sum() >= max_boxes and per_frame[:-1].sum() < max_boxes
    start = 0
    for c in chunks:
        sel = (whole.frame >= start) & (whole.frame < start + len(c.frames))
        assert np.array_equal(c.frame, whole.frame[sel] - start) and np.array_equal(c.boxes, whole.boxes[sel])
        assert np.array_equal(c.score, whole.score[sel]) and np.array_equal(c.cls, whole.cls[sel])
        assert c.sizes == {f: whole.sizes[f] for f in c.frames} and c.header == whole.header
        start += len(c.frames)
    in_memory = list(detections_file.split_chunks(whole, max_boxes=max_boxes))
    assert [c.frames for c in in_memory] == [c.frames for c in chunks]
    assert all(same_arrays(a, b) and a.sizes == b.sizes for a, b in zip(in_memory, chunks))


def test_the_index_holds_frames_and_sizes_without_boxes(tmp_path):
    path = write_file(tmp_path / "m.jsonl", FRAMES)
    index = detections_file.read_index(path)
    assert index.frames == ("a", "b", "c") and index.sizes == {"a": (640, 416), "b": (640, 416), "c": (64, 128)}
    assert len(index.frame) == len(index.boxes) == 0 and index.header == HEADER
    assert detections_file.read_index(path, keep_frames={"c"}).frames == ("c",)
    # a line written with another key order is still read (by the full parser)
    lines = path.read_text().splitlines()
    lines[2] = '{"frame":"b","height":416,"width":640,"boxes":[]}'
    path.write_text("\n".join(lines) + "\n")
    assert detections_file.read_index(path).sizes["b"] == (640, 416)


Z = '{"frame":"z","width":640,"height":416,"boxes":[[10,20,30,40,0.5,1],%s]}'


@pytest.mark.parametrize("line, message", [
    ('{"frame":"a","width":640,"height":416,"boxes":[]}', "m.jsonl:3: frame listed twice"),
    ('{"frame":"z","width":640,"height":416,"boxes":[[1,2,3]]}',
     r"m.jsonl:3: frame z, boxes\[0\]: bad box row .*got \[1, 2, 3\]"),
    ('{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,NaN,0]]}',
     "frame z, boxes.0.: a box row holds NaN or infinity"),
    (Z % "[1,2,3,4,0.5,7]", r"m.jsonl:3: frame z, boxes\[1\] \(class\): class index out of range .*0..2"),
    (Z % "[1,2,3,4,0.5,1.5]", r"boxes\[1\] \(class\): class index not an integer"),
    (Z % "[1,2,3,4,0.5,-1]", r"boxes\[1\] \(class\): class index out of range"),
    (Z % "[1,2,3,4,7.5,0]", r"boxes\[1\] \(score\): score outside \[floor, 1\]"),
    (Z % "[1,2,3,4,0.01,0]", r"boxes\[1\] \(score\): score outside \[floor, 1\]"),
    (Z % "[5,2,3,4,0.5,0]", r"boxes\[1\] \(x1\): x1 > x2"),
    (Z % "[1,5,3,4,0.5,0]", r"boxes\[1\] \(y1\): y1 > y2"),
    ('{"width":640,"frame":"z","height":416,"boxes":[]}', "m.jsonl:3: bad frame line"),
    ('{"frame":"z\\x","width":640,"height":416,"boxes":[]}', "m.jsonl:3: bad frame line"),   # a bad escape
    ('{"frame":"z\tz","width":640,"height":416,"boxes":[]}', "m.jsonl:3: bad frame line"),   # a raw tab
    (Z % ("[1,2,3,4,0.5,1%s]" % ("0" * 400)), r"m.jsonl:3: frame z, boxes\[1\]: bad box row"),   # over 1.8e308
    (Z % "[1,2,3,4,true,0]", r"m.jsonl:3: frame z, boxes\[1\]: bad box row"),    # numpy would read 1.0
    (Z % '[1,2,3,4,"0.5",0]', r"m.jsonl:3: frame z, boxes\[1\]: bad box row"),   # numpy would read 0.5
    (Z % "[1,2,3,4,0.5,false]", r"m.jsonl:3: frame z, boxes\[1\]: bad box row"),
])
def test_damaged_lines_are_named(tmp_path, line, message):
    from candor_eval.common.errors import InputError
    path = tmp_path / "m.jsonl"
    path.write_text("".join(x + "\n" for x in [*file_lines(HEADER, FRAMES[:1]), line]))
    with pytest.raises(InputError, match=message):
        detections_file.read_index(path)
        list(detections_file.iter_chunks(path))


# --- the bulk reader: equal to the json path, bit for bit, on the lines it accepts; the json path on all others ---

def json_only(monkeypatch):
    """Make :func:`detections_file.iter_chunks` read every line by json (the checked path): no line is
    of the written shape."""
    monkeypatch.setattr(detections_file, "written_line", lambda: re.compile(r"(?!)"))
    monkeypatch.setattr(detections_file, "plain_line", lambda: re.compile(r"(?!)"))


def bits(a):
    """An array's dtype, shape and bytes: equal bits, so -0.0 differs from 0.0."""
    return a.dtype.str, a.shape, a.tobytes()


def read_both(path, monkeypatch, **kw):
    """``(default reader's chunks, json-only chunks)`` of ``path``, or their error messages."""
    def chunks():
        try:
            return list(detections_file.iter_chunks(path, **kw))
        except InputError as err:
            return str(err)
    default = chunks()
    with monkeypatch.context() as m:
        json_only(m)
        checked = chunks()
    return default, checked


def assert_same_chunks(got, want):
    assert isinstance(got, list) and isinstance(want, list), (got, want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.header == b.header and a.frames == b.frames and a.sizes == b.sizes
        assert list(a.sizes) == list(b.sizes)
        for f in ("frame", "cls", "boxes", "score"):
            assert bits(getattr(a, f)) == bits(getattr(b, f)), f


HARD_NUMBERS = [
    "0.1", "0.2", "0.30000000000000004", "2.2250738585072011e-308", "2.2250738585072012e-308",
    "2.225073858507201e-308", "4.9e-324", "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
    "1.7976931348623157e308", "1.7976931348623158e+308", "1.7976931348623159e308", "1e400", "1e-400",
    "9007199254740993", "9007199254740992.5", "9007199254740993.0000000000000001", "123456789012345678e-2",
    "0.1000000000000000055511151231257827021181583404541015625",
    "0.10000000000000000555111512312578270211815834045410156250001",
    "8.98846567431158e307", "1e-05", "5E+2", "5e+2", "1E5", "-0.0", "-0e0", "-0.0e-5", "0", "7", "-7", "0.00001",
    "1e23", "8.533e+68", "4.1006e-184", "9.998e+307", "9.9538452227e-280", "6.47660115e-260", "7.4e+47",
    "5.0e-324", "1e0000000000000000000000000001", "2.00000000000000011102230246251565404236316680908203125",
    "2.00000000000000011102230246251565404236316680908203124", "358416272e-33", "1.00000005960464477550",
    "89255e-22", "1.8254370818746402660437411213933955878019332885742187", "3.0540412e5",
]


def random_number_texts(rng, n):
    """``n`` JSON numbers as text, in many forms: shortest repr, 17 and 25 significant digits, integers,
    exponents written with e or E, with and without a sign, leading zeros in the exponent."""
    out = []
    for _ in range(n):
        x = float(rng.uniform(-1, 1)) * 10.0 ** float(rng.integers(-320, 309))
        kind = int(rng.integers(0, 7))
        if kind == 0:
            t = json.dumps(x)
        elif kind == 1:
            t = f"{x:.16e}"
        elif kind == 2:
            t = f"{x:.24e}".replace("e", "E")
        elif kind == 3:
            t = str(int(rng.integers(-10**15, 10**15)))
        elif kind == 4:
            t = f"{x:.{int(rng.integers(0, 30))}f}" if abs(x) < 1e20 else repr(x)
        elif kind == 5:
            m, e = f"{x:.12e}".split("e")
            t = f"{m}e{int(e):+04d}"
        else:
            t = f"{rng.integers(0, 10**6)}.{rng.integers(0, 10**9):09d}e{int(rng.integers(-30, 30))}"
        if t in ("inf", "-inf", "nan") or "inf" in t:
            t = "1e400"
        out.append(t)
    return out


def test_numpy_reads_each_number_as_float_and_json_do():
    rng = np.random.default_rng(41)
    texts = HARD_NUMBERS + random_number_texts(rng, 20_000)
    texts = texts[: len(texts) // 6 * 6]
    rows = ",".join("[" + ",".join(texts[i:i + 6]) + "]" for i in range(0, len(texts), 6))
    got = detections_file._bulk_rows([rows], len(texts) // 6).ravel()
    want = np.array([float(json.loads(t)) for t in texts])       # json's int, converted as np.array does
    floats = np.array([float(t) for t in texts])                 # Python's float(): what json does for 1.5, 1e5
    assert {t for t, a, b in zip(texts, floats.view(np.uint64), want.view(np.uint64)) if a != b} == {"-0"}
    differ = {t for t, a, b in zip(texts, got.view(np.uint64), want.view(np.uint64)) if a != b}
    assert differ == {"-0"}          # the integer -0: json reads 0, numpy -0.0; the bulk path never sees it
    accepted = [t for t in texts if re.fullmatch(detections_file._NUMBER, t)]
    assert "-0" not in accepted and len(accepted) > 0.95 * len(texts)
    assert {"1e-05", "5E+2", "-0.0", "2.2250738585072011e-308", "9007199254740993", "1e400"} <= set(accepted)
    assert got[texts.index("-0.0")] == 0 and np.signbit(got[texts.index("-0.0")])   # a float -0.0 stays -0.0


def frame_text(rng, i):
    """A frame id with quotes, backslashes, control characters, non-ASCII and astral characters."""
    pool = ['a', 'Z', '0', '"', '\\', '/', '\n', '\t', '\x01', '\x1f', '\x7f', 'é', '漢', '\u2028', '😀', ' ']
    return f"f{i}-" + "".join(rng.choice(pool, size=int(rng.integers(0, 6))))


def frame_id_json(rng, frame):
    """``frame`` as a JSON string, written in one of several valid ways."""
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return json.dumps(frame)
    if kind == 1:
        return json.dumps(frame, ensure_ascii=False)
    return json.dumps(frame).replace("/", "\\/")


def valid_row_texts(rng, n_cls):
    """One valid box row as six number texts (x1 <= x2, y1 <= y2, score in [0.05, 1], class in range),
    each written in a random valid form."""
    def form(v, *, integral=False):
        kind = int(rng.integers(0, 6))
        if integral:
            return [str(int(v)), f"{int(v)}.0", f"{int(v)}e0", f"{int(v)}E+00", f"{v * 10:.0f}e-1", str(int(v))][kind]
        return [repr(v), f"{v:.17g}", f"{v:.5e}", f"{v:.3E}", f"{v:.25f}", json.dumps(v)][kind]
    x = sorted(float(v) for v in rng.uniform(-1e3, 1e4, 2) * 10.0 ** float(rng.integers(-8, 4)))
    y = sorted(float(v) for v in rng.uniform(0, 1e3, 2))
    s = float(rng.uniform(0.05, 1.0))
    texts = [form(x[0]), form(y[0]), form(x[1]), form(y[1]), form(s), form(int(rng.integers(0, n_cls)), integral=True)]
    if rng.integers(0, 4) == 0:       # y1 a zero, negative zero included (its sign bit must survive)
        texts[1] = str(rng.choice(["-0.0", "-0e0", "-0.000E+3", "0.0", "0", "0e-7"]))
    if rng.integers(0, 150) == 0:     # the integer -0: json reads 0 (its line is json's)
        texts[1] = "-0"
    values = [float(t) for t in texts]       # a form may round: keep the row valid after parsing
    if not (values[0] <= values[2] and values[1] <= values[3] and 0.05 <= values[4] <= 1):
        return ["1.5", "2", "3.25", "4E1", "0.5", "0"]
    return texts


def fuzz_lines(rng, n, *, n_cls=3):
    """``n`` valid frame lines: most of the written shape (with numbers and ids in every valid form),
    some valid but written otherwise (spaces, key order, an extra key, trailing blanks), some without boxes."""
    lines = []
    for i in range(n):
        frame = frame_text(rng, i)
        rows = [valid_row_texts(rng, n_cls) for _ in range(int(rng.integers(0, 12)))]
        boxes = ",".join("[" + ",".join(r) + "]" for r in rows)
        w, h = int(rng.integers(1, 5000)), int(rng.integers(1, 5000))
        fid = frame_id_json(rng, frame)
        kind = int(rng.integers(0, 20))
        if kind == 0:           # the reader finds the frame id at the line's start: the rest may vary
            line = f'{{"frame":{fid} , "width": {w}, "height": {h}, "boxes": [{boxes.replace(",", ", ")}]}}'
        elif kind == 1:
            line = f'{{"frame":{fid},"boxes":[{boxes}],"height":{h},"width":{w}}}'
        elif kind == 2:
            line = f'{{"frame":{fid},"width":{w},"height":{h},"boxes":[{boxes}],"note":[1,true]}}'
        elif kind == 3:
            line = f'{{"frame":{fid},"width":{w},"height":{h},"boxes":[{boxes}]}} \t'
        else:
            line = f'{{"frame":{fid},"width":{w},"height":{h},"boxes":[{boxes}]}}'
        lines.append(line)
    return lines


def write_lines(path, lines, *, last_newline=True):
    path.write_text("\n".join([json.dumps(HEADER, separators=(",", ":")), *lines]) + ("\n" if last_newline else ""),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_the_bulk_reader_equals_the_json_path_bit_for_bit(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    lines = fuzz_lines(rng, 1500)
    path = write_lines(tmp_path / "m.jsonl", lines, last_newline=bool(seed % 2))
    written = sum(detections_file.written_line().fullmatch(x) is not None for x in lines)
    assert 0.7 * len(lines) < written < len(lines)         # both paths are exercised
    for max_boxes in (1, 37, 5000, detections_file.CHUNK_BOXES):
        default, checked = read_both(path, monkeypatch, max_boxes=max_boxes)
        assert_same_chunks(default, checked)
    # and the json path is what it says: each line's values as json.loads reads them
    whole = read_raw(path)
    recs = [json.loads(x) for x in lines]
    assert whole.frames == tuple(r["frame"] for r in recs)
    assert whole.sizes == {r["frame"]: (r["width"], r["height"]) for r in recs}
    want = np.array([row for r in recs for row in r["boxes"]], dtype=np.float64)
    assert bits(whole.boxes) == bits(want[:, :4]) and bits(whole.score) == bits(want[:, 4])
    assert whole.cls.tolist() == want[:, 5].astype(np.int64).tolist()


def test_every_line_the_writer_makes_is_read_in_bulk():
    rng = np.random.default_rng(7)
    for i in range(300):
        k = int(rng.integers(0, 30))
        scale = 10.0 ** float(rng.integers(-6, 18))
        boxes = np.sort(rng.uniform(-1, 1, (k, 4)) * scale, axis=1)
        scores = rng.uniform(0, 1, k)
        scores[: k // 3] = rng.uniform(0, 2e-4, k // 3)          # 1e-05: exponent form
        b, s, c = detections_file.rounded_candidates(boxes, scores, rng.integers(0, 80, k), floor=0.0)
        line = frame_json(frame_text(rng, i), int(rng.integers(1, 10**5)), 7, b, s, c)
        assert detections_file.written_line().fullmatch(line + "\n"), line
        size, rows, count = detections_file._written_rows(line)
        arr = detections_file._bulk_rows([rows], count)
        want = np.array(json.loads(line)["boxes"], dtype=np.float64).reshape(-1, 6)
        assert count == k == len(s) and size[1] == 7 and bits(arr) == bits(want)


@pytest.mark.parametrize("line", [
    '{"frame":"a","width":1,"height":2,"boxes":[]}',
    '{"frame":"a\\"b\\\\c\\/\\u00e9\\ud83d\\ude00\\n","width":0,"height":2,"boxes":[[1,2,3,4,0.5,0]]}',
    '{"frame":"é漢😀","width":1,"height":2,"boxes":[[-1.5e-05,2E+2,3e2,4.0,1,0],[0,0,0,0,0.05,2]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[-0.0,-0e0,0,0,0.5,0]]}\n',
    '{"frame":"a","width":1,"height":2,"boxes":[[1234567890123456,2,3,4,0.5,0]]}',
])
def test_lines_of_the_written_shape_are_recognised(line):
    m = detections_file.written_line().fullmatch(line)
    assert m and detections_file._written_match(line).groups() == m.groups()


@pytest.mark.parametrize("line", [
    '{"frame": "a","width":1,"height":2,"boxes":[]}',                          # whitespace
    '{"frame":"a","width":1,"height":2,"boxes":[ ]}',
    '{"frame":"a","width":1,"height":2,"boxes":[]} ',
    '{"frame":"a","width":1,"height":2,"boxes":[]}\r\n',
    '{"frame":"a","height":2,"width":1,"boxes":[]}',                           # key order
    '{"frame":"a","width":1,"height":2,"boxes":[],"x":1}',                     # an extra key
    '{"frame":"a","width":1,"height":2,"boxes":[],"boxes":[]}',                # a key twice
    '{"frame":"a","width":1,"height":2}',
    '{"frame":"a","width":1.0,"height":2,"boxes":[]}',                         # a float size
    '{"frame":"a","width":"1","height":2,"boxes":[]}',
    '{"frame":"a","width":01,"height":2,"boxes":[]}',
    '{"frame":"a","width":1234567890123456789,"height":2,"boxes":[]}',        # 19 digits
    '{"frame":"a\tb","width":1,"height":2,"boxes":[]}',                        # a raw control character
    '{"frame":"a\\x","width":1,"height":2,"boxes":[]}',                        # a bad escape
    '{"frame":"a\\u00e","width":1,"height":2,"boxes":[]}',
    '{"frame":1,"width":1,"height":2,"boxes":[]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,0.5]]}',              # five numbers
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,0.5,0,0]]}',          # seven
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,0.5,0],]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,0.5,0][1,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[[1,2,3,4,0.5,0]]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[1,2,3,4,0.5,0]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,NaN,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,Infinity,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,true,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,null,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,"0.5",0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[01,2,3,4,0.5,0]]}',          # numbers json refuses
    '{"frame":"a","width":1,"height":2,"boxes":[[1.,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[.5,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[+1,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1e,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1e+,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1.5.2,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1e5.2,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[--1,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1-2,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[0x10,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[1_000,2,3,4,0.5,0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[-0,2,3,4,0.5,0]]}',          # left to json: the integer 0
    '{"frame":"a","width":1,"height":2,"boxes":[[0,2,3,4,0.5,-0]]}',
    '{"frame":"a","width":1,"height":2,"boxes":[[12345678901234567,2,3,4,0.5,0]]}',   # 17 integer digits
])
def test_other_lines_are_left_to_json(line):
    assert detections_file.written_line().fullmatch(line) is None
    assert detections_file._written_match(line) is None


@pytest.mark.parametrize("seed", range(3))
def test_the_plain_pattern_first_matches_what_the_written_pattern_matches(seed):
    """:func:`_written_match` (PLAIN_LINE first) accepts exactly the lines WRITTEN_LINE accepts, with the same
    groups: on lines of every valid number form, and on the same lines with an integer -0 or an exponent put in."""
    rng = np.random.default_rng(seed)
    lines = fuzz_lines(rng, 600)
    for i, line in enumerate(list(lines)):
        if "[" in line[40:]:
            cut = line.index("[[") + 2 if "[[" in line else None
            if cut is not None:
                lines.append(line[:cut] + ("-0," if i % 3 else "1e-05,") + line[cut + line[cut:].index(",") + 1:])
                lines.append(line.replace(",0]", ",-0]", 1))
    plain = sum(detections_file.plain_line().fullmatch(x) is not None for x in lines)
    written = [detections_file.written_line().fullmatch(x) for x in lines]
    assert 20 < plain < sum(m is not None for m in written)        # both paths are exercised
    for line, m in zip(lines, written):
        got = detections_file._written_match(line)
        assert (got is None) == (m is None), line
        assert got is None or got.groups() == m.groups(), line


DAMAGE = [
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,7]]}',        # written shape, a failed check
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,1.5]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,1e400,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.01,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[5,2,3,4,0.5,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,5,3,4,0.5,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,-1e-300]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,0],[1,2,3]]}',   # json path, refused
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,true,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,"0.5",0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,NaN,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,0,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,01,0]]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,0]],}',
    '{"frame":"z","width":640,"height":416,"boxes":"[]"}',
    '{"frame":"z","width":"x","height":416,"boxes":[]}',
    '{"frame":"z\\x","width":640,"height":416,"boxes":[]}',
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,1%s]]}' % ("0" * 400),
    '{"frame":"z","width":640,"height":416,"boxes":[[1,2,3,4,0.5,2.0000000000000001]]}',   # = 2.0: valid
]


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("at", [0, 5, 29])
def test_a_damaged_file_gives_the_json_paths_result(tmp_path, monkeypatch, damage, at):
    rng = np.random.default_rng(at)
    lines = [line for line in fuzz_lines(rng, 30) if detections_file.written_line().fullmatch(line)][:20]
    lines.insert(at % 21, damage)
    path = write_lines(tmp_path / "m.jsonl", lines)
    for max_boxes in (1, 16, 10**6):
        default, checked = read_both(path, monkeypatch, max_boxes=max_boxes)
        if isinstance(checked, str):
            assert default == checked
        else:
            assert_same_chunks(default, checked)


def test_an_error_later_in_a_chunk_is_named_before_a_failed_check_earlier(tmp_path, monkeypatch):
    # as json reads: a line json refuses is named when it is reached, the row checks run when the chunk closes
    lines = ['{"frame":"a","width":1,"height":2,"boxes":[[1,2,3,4,0.5,9]]}',
             '{"frame":"b","width":1,"height":2,"boxes":[[1,2,3,4,0.5,0]]}',
             '{"frame":"c","width":1,"height":2,"boxes":[[1,2,3,4,0.5,0],[1,2,3]}']
    path = write_lines(tmp_path / "m.jsonl", lines)
    default, checked = read_both(path, monkeypatch)
    assert default == checked and "m.jsonl:4: bad frame line" in default
    default, checked = read_both(path, monkeypatch, max_boxes=1)
    assert default == checked and "m.jsonl:2: frame a, boxes[0] (class)" in default
