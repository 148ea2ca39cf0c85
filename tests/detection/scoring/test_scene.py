"""Tests for candor_eval/detection/scoring/scene.py: the scene a model is scored on, from a detector data
set (frames.csv, YOLO labels) and one model's raw detections, or from a COCO ground truth.

Definitions checked: a frame's ``scale`` is ``min(input_w / width, input_h / height)``; the scene's
classes are the data classes the model covers, in the data's order, and the labels of the others are
set apart; detections are re-indexed to the scene's frames and classes; detections that do not cover
exactly the data set's frames are stale. DataReads: the model-free reads of a data set, done once and
kept (per frames and image sizes), a failed one kept never."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.detections_file import RawDetections
from candor_eval.detection.scoring import scene as scene_module
from candor_eval.detection.scoring.columns import GroundTruth
from candor_eval.detection.scoring.records import Scene
from candor_eval.detection.scoring.scene import DataReads, build_scene, coco_scene
from tests.support_detect import make_dataset

FRAMES = {"a": {"size": (128, 64), "labels": ["0 0.5 0.5 0.25 0.5"], "zoom": "2", "session": "s1"},
          "b": {"size": (64, 128), "labels": ["2 0.5 0.5 0.5 0.25", "1 0.5 0.5 0.25 0.125"], "split": "test",
                "session": "s2"}}


def raw(classes: list[str], frames=("a", "b")) -> RawDetections:
    """Three detections: (frame a, model class 0), (b, 1), (b, 0)."""
    sizes = {"a": (128, 64), "b": (64, 128)}
    return RawDetections(header={"classes": classes}, frames=tuple(frames), sizes={f: sizes[f] for f in frames},
                         frame=np.array([0, 1, 1]), cls=np.array([0, 1, 0]),
                         boxes=np.array([[48, 16, 80, 48], [16, 48, 48, 80], [0, 0, 4, 4]], float),
                         score=np.array([0.9, 0.8, 0.3]))


def test_the_scene_of_a_data_set_for_a_model_of_every_class(tmp_path):
    """Input 64x64: frame a (128x64) has scale 0.5, frame b (64x128) 0.5; the deer label of a is the
    YOLO box (cx 64, cy 32, w 32, h 32) in original pixels."""
    data = make_dataset(tmp_path, FRAMES)
    inputs = build_scene(data=data, raw=raw(["deer", "sheep", "relic"]), input_hw=(64, 64))
    sc = inputs.scene
    assert isinstance(sc, Scene) and sc.classes == ("deer", "sheep", "relic")
    assert sc.frames.tolist() == ["a", "b"] and sc.split.tolist() == ["dev", "test"]
    assert sc.session.tolist() == ["s1", "s2"] and sc.zoom.tolist() == ["2", "1"]
    assert sc.scale.tolist() == [0.5, 0.5]
    assert sc.label_frame.tolist() == [0, 1, 1] and sc.label_class.tolist() == [0, 2, 1]
    assert sc.label_boxes[0].tolist() == [48.0, 16.0, 80.0, 48.0]
    assert inputs.det_frame.tolist() == [0, 1, 1] and inputs.det_class.tolist() == [0, 1, 0]
    assert inputs.outside.classes == () and len(inputs.outside.label_frame) == 0


def test_a_model_of_a_subset_scores_its_classes_and_sets_the_others_apart(tmp_path):
    """Card classes [relic, deer] onto data classes: the scene's classes are (deer, relic), in the
    data's order; the sheep label of frame b is out of scope; model class 0 (relic) is scene class 1."""
    data = make_dataset(tmp_path, FRAMES)
    inputs = build_scene(data=data, raw=raw(["relic", "deer"]), input_hw=(64, 64),
                         class_map={"relic": "relic", "deer": "deer"})
    sc = inputs.scene
    assert sc.classes == ("deer", "relic")
    assert sc.label_class.tolist() == [0, 1] and sc.label_frame.tolist() == [0, 1]
    assert inputs.det_class.tolist() == [1, 0, 1]
    assert inputs.outside.classes == ("sheep",) and inputs.outside.label_frame.tolist() == [1]


def test_detections_missing_a_frame_are_stale(tmp_path):
    data = make_dataset(tmp_path, FRAMES)
    stale = raw(["deer", "sheep", "relic"], frames=("a",))
    with pytest.raises(InputError, match="the detections do not cover exactly the data set's frames"):
        build_scene(data=data, raw=stale, input_hw=(64, 64))


def test_the_scene_of_a_coco_ground_truth():
    """One split ``all``, empty session and zoom, scale 1 (bands in original pixels)."""
    gt = GroundTruth(classes=("cat",), frames=("x", "y"), sizes=np.array([[10, 10], [20, 20]]),
                     label_frame=np.array([1]), label_index=np.array([0]), label_class=np.array([0]),
                     label_boxes=np.array([[1.0, 2.0, 3.0, 4.0]]), label_crowd=np.array([True]))
    sc = coco_scene(gt)
    assert sc.frames.tolist() == ["x", "y"] and sc.split.tolist() == ["all", "all"]
    assert sc.session.tolist() == ["", ""] and sc.zoom.tolist() == ["", ""] and sc.scale.tolist() == [1.0, 1.0]
    assert sc.label_crowd.tolist() == [True] and sc.label_boxes.tolist() == [[1.0, 2.0, 3.0, 4.0]]


def counting_reads(monkeypatch) -> dict[str, int]:
    """Count the calls of the readers DataReads wraps (each still reads)."""
    calls = {"frames": 0, "truth": 0}
    real_frames, real_truth = scene_module.load_frames, scene_module.read_truth

    def frames(data):
        calls["frames"] += 1
        return real_frames(data)

    def truth(data, **kw):
        calls["truth"] += 1
        return real_truth(data, **kw)

    monkeypatch.setattr(scene_module, "load_frames", frames)
    monkeypatch.setattr(scene_module, "read_truth", truth)
    return calls


def test_shared_reads_serve_every_model_of_the_set_from_one_read(tmp_path, monkeypatch):
    data = make_dataset(tmp_path, FRAMES)
    calls = counting_reads(monkeypatch)
    reads = DataReads(data)
    one = build_scene(data=data, raw=raw(["deer", "sheep", "relic"]), input_hw=(64, 64), reads=reads)
    two = build_scene(data=data, raw=raw(["relic", "deer"]), input_hw=(64, 64), reads=reads,
                      class_map={"relic": "relic", "deer": "deer"})
    alone = build_scene(data=data, raw=raw(["relic", "deer"]), input_hw=(64, 64),
                        class_map={"relic": "relic", "deer": "deer"})
    assert calls == {"frames": 2, "truth": 2}                 # the shared pair once, the one alone once
    assert one.truth is two.truth and two.scene.label_class.tolist() == alone.scene.label_class.tolist()
    assert two.scene.label_boxes.tolist() == alone.scene.label_boxes.tolist()


def test_other_image_sizes_are_read_again(tmp_path, monkeypatch):
    """The labels in pixels depend on the image sizes: frame a at 256x64 doubles its box's x."""
    data = make_dataset(tmp_path, FRAMES)
    calls = counting_reads(monkeypatch)
    reads = DataReads(data)
    first = reads.truth(("a", "b"), {"a": (128, 64), "b": (64, 128)})
    assert reads.truth(["a", "b"], {"a": (128, 64), "b": (64, 128)}) is first
    wider = reads.truth(("a", "b"), {"a": (256, 64), "b": (64, 128)})
    assert calls["truth"] == 2 and wider.gt.label_boxes[0].tolist() == [96.0, 16.0, 160.0, 48.0]


def test_a_failed_read_is_kept_never_and_raised_again(tmp_path, monkeypatch):
    data = make_dataset(tmp_path, FRAMES)
    (data / "frames.csv").write_text("frame,session,zoom,split\na,s1,1,nope\n")
    calls = counting_reads(monkeypatch)
    reads = DataReads(data)
    with pytest.raises(InputError) as first:
        reads.frames()
    with pytest.raises(InputError) as again:
        reads.frames()
    assert calls["frames"] == 2 and first.value.message == again.value.message


def test_prefetch_reads_what_build_scene_reads_and_leaves_errors_to_it(tmp_path, monkeypatch):
    from candor_eval.detection.detections_file import FORMAT, FrameBoxes, file_lines

    data = make_dataset(tmp_path, FRAMES)
    head = {"format": FORMAT, "model": "m", "onnx_sha256": "x", "classes": ["deer"], "input_size": [64, 64],
            "floor": 0.05}
    none = (np.zeros((0, 4)), np.zeros(0), np.zeros(0, np.int64))
    dets = tmp_path / "m.jsonl"
    dets.write_text("\n".join(file_lines(head, [FrameBoxes("a", 128, 64, *none), FrameBoxes("b", 64, 128, *none)])))
    calls = counting_reads(monkeypatch)
    reads = DataReads(data)
    reads.prefetch(dets)
    assert calls == {"frames": 1, "truth": 1}
    build_scene(data=data, raw=raw(["deer", "sheep", "relic"]), input_hw=(64, 64), reads=reads)
    assert calls == {"frames": 1, "truth": 1}                  # served from what was prefetched

    reads = DataReads(data)
    reads.prefetch(tmp_path / "missing.jsonl")                 # no error here: the model's scoring raises it
    assert calls == {"frames": 1, "truth": 1}
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(file_lines(head, [FrameBoxes("a", 128, 64, *none)])))
    reads.prefetch(short)                                      # frame b has no size: no truth read
    assert calls == {"frames": 2, "truth": 1}
