"""Tests for candor_eval/detection/detections_file.py: rounding and order, line bytes, and the
arrays of a file with and without the file."""
from __future__ import annotations

import json

import numpy as np
import pytest

from candor_eval.detection import detections_file
from candor_eval.detection.detections_file import FORMAT, FrameBoxes, collect, file_lines, read_raw


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
])
def test_damaged_lines_are_named(tmp_path, line, message):
    from candor_eval.common.errors import InputError
    path = tmp_path / "m.jsonl"
    path.write_text("".join(x + "\n" for x in [*file_lines(HEADER, FRAMES[:1]), line]))
    with pytest.raises(InputError, match=message):
        detections_file.read_index(path)
        list(detections_file.iter_chunks(path))
