"""The model card of an exported ONNX detector, from what the file says about itself.

An Ultralytics export (``yolo export format=onnx``) carries metadata (onnxruntime:
``get_modelmeta().custom_metadata_map``): ``names`` (a Python dict literal, ``"{0: 'person', 1:
'car'}"``, read with :func:`ast.literal_eval`, never evaluated), ``imgsz`` (``"[640, 640]"``),
``stride``, ``task``, ``batch``, ``end2end``, ``args`` (the export arguments) and ``author:
Ultralytics``; a YOLOv5 export writes ``stride`` and ``names`` only
(:mod:`candor_eval.detection.inference.export_family`). :func:`card_fields` makes the card
(:mod:`candor_eval.detection.model_card`) from them and the input and output shapes:

- ``classes``: ``names`` in index order, or the ones given (a model without ``names`` needs
  them; with ``names``, as many as it has: they rename the outputs);
- ``input_size``: ``[H, W]`` of the static input ``[1 or dynamic batch, 3, H, W]``; the detect stage
  runs a static input, so a dynamic height or width is refused (re-export with
  ``dynamic=False``), and so is an ``imgsz`` that is not the input's size;
- ``output_layout``: the first output's layout for this many classes
  (:func:`candor_eval.detection.inference.decode.infer_layout`): an Ultralytics export must be
  ``ultralytics`` ``[1, 4+C, N]``, a YOLOv5 one ``yolov5`` ``[1, N, 5+C]``; a shape that fits no
  layout for ``C`` classes (the names do not match the head) is refused;
- ``preprocess`` (:data:`ULTRALYTICS_PREPROCESS`): how Ultralytics' predictor turns an image file
  into this input. ``LoadImagesAndVideos`` reads the file with ``cv2.imdecode(..., IMREAD_COLOR)``
  (``ultralytics/utils/patches.py``: ``imread``), which applies the EXIF orientation tag and gives
  BGR pixels: ``exif: apply``. ``BasePredictor.pre_transform`` letterboxes with ``LetterBox(imgsz,
  auto=False)`` for a static ONNX model (``ultralytics/data/augment.py``: ``cv2.resize(...,
  interpolation=cv2.INTER_LINEAR)``, padded with 114, centred by ``round(d / 2 -+ 0.1)``, the
  same integers as candor's ``(W - new_w) // 2``): ``resize: opencv-linear``. ``preprocess`` then
  flips BGR to RGB, makes NCHW float and divides by 255: ``colour: rgb``, ``scale: 255``. (With
  these, candor's tensor is Ultralytics' bit for bit: ``tests/detection/inference/test_letterbox.py``,
  ``test_served_preprocessing.py``.) YOLOv5's ``detect.py`` reads with ``cv2.imread`` and
  letterboxes the same way.

Refused (an InputError naming the file and what to do): a ``task`` other than ``detect``; an
end-to-end export (``end2end: True`` or ``nms=True``, whose output holds boxes after NMS, not
the raw candidates candor thresholds); unreadable ``names`` or ``imgsz``. A card written before
keeps what this module does not derive (:data:`KEPT`): ``description``, ``source``, ``class_map``,
``training``, ``preprocess``, and ``eval_manifest_sha256`` and ``evaluation`` when the ONNX
bytes are the same (they describe those bytes).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, cast

from candor_eval.common.errors import InputError, fail
from candor_eval.detection.inference.decode import LAYOUT_SHAPES, infer_layout
from candor_eval.detection.inference.export_family import export_family

ULTRALYTICS_PREPROCESS = {"resize": "opencv-linear", "exif": "apply", "colour": "rgb", "scale": 255}
KEPT = ("description", "source", "class_map", "training", "preprocess")
KEPT_SAME_BYTES = ("eval_manifest_sha256", "evaluation")
FAMILY_LAYOUT = {"ultralytics": "ultralytics", "yolov5": "yolov5"}


@dataclass(frozen=True)
class OnnxFacts:
    """What an ONNX file says about itself: its ``metadata`` (key -> text) and the shapes of its
    first input and first output (a dimension is an int, or a name or None when dynamic)."""

    metadata: dict[str, str]
    input_shape: tuple[int | str | None, ...]
    output_shape: tuple[int | str | None, ...]


def read_facts(blob: bytes, *, where: str) -> OnnxFacts:
    """The :class:`OnnxFacts` of the ONNX model ``blob`` (loaded by onnxruntime on the CPU; a file
    it cannot load is an InputError naming ``where``)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    try:
        session = ort.InferenceSession(blob, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own exception types
        raise fail(where, f"onnxruntime cannot load the model: {err}", expected="an ONNX detector") from None
    return OnnxFacts(metadata=dict(session.get_modelmeta().custom_metadata_map),
                     input_shape=tuple(session.get_inputs()[0].shape),
                     output_shape=tuple(session.get_outputs()[0].shape))


def literal(text: str, *, where: str, expected: str) -> Any:
    """The Python literal ``text`` (:func:`ast.literal_eval`: no code runs), else an InputError."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise fail(where, "not readable", expected=expected, got=text[:200]) from None


def metadata_names(text: str, *, where: str) -> tuple[str, ...]:
    """The class names of a ``names`` metadata value: a dict index -> name with indices ``0..n-1``
    (or a list), in index order.

    >>> metadata_names("{1: 'car', 0: 'person'}", where="m.onnx")
    ('person', 'car')
    """
    value = literal(text, where=f"{where}: metadata names", expected="{0: 'name', 1: 'name', ...}")
    table = dict(enumerate(value)) if isinstance(value, list) else value
    ok = (isinstance(table, dict) and table and all(type(k) is int for k in table)
          and sorted(table) == list(range(len(table)))
          and all(isinstance(v, str) and v.strip() for v in table.values()))
    if not ok:
        raise fail(f"{where}: metadata names", "not class names by index 0..n-1",
                   expected="{0: 'name', 1: 'name', ...}", got=text[:200])
    return tuple(table[i] for i in range(len(table)))


def metadata_imgsz(text: str, *, where: str) -> list[int]:
    """``imgsz`` as ``[h, w]`` (a single number is square).

    >>> metadata_imgsz("[640, 480]", where="m.onnx"), metadata_imgsz("320", where="m.onnx")
    ([640, 480], [320, 320])
    """
    value = literal(text, where=f"{where}: metadata imgsz", expected="[h, w]")
    value = [value, value] if type(value) is int else value
    if not (isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int and v > 0 for v in value)):
        raise fail(f"{where}: metadata imgsz", "not an image size", expected="[h, w]", got=text[:200])
    return list(value)


def end_to_end(metadata: dict[str, str]) -> bool:
    """The export holds its own NMS (``end2end: True``, or ``nms`` true among its export ``args``).

    >>> end_to_end({"end2end": "True"}), end_to_end({"args": "{'nms': True}"}), end_to_end({"args": "{'nms': None}"})
    (True, True, False)
    """
    if metadata.get("end2end", "").strip().lower() == "true":
        return True
    try:
        args = ast.literal_eval(metadata.get("args", "{}"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return isinstance(args, dict) and args.get("nms") is True


def input_size(shape: tuple[int | str | None, ...], *, imgsz: list[int] | None, where: str) -> list[int]:
    """``[H, W]`` of an input of ``shape`` ``[1 or dynamic, 3, H, W]`` (module docstring)."""
    if len(shape) != 4 or shape[1] != 3 or not (shape[0] == 1 or not isinstance(shape[0], int)):
        raise fail(f"{where}: input", "not an image input", expected="[1, 3, H, W]", got=list(shape))
    h, w = shape[2], shape[3]
    if not (isinstance(h, int) and isinstance(w, int)):
        size = f"imgsz={imgsz[0] if imgsz[0] == imgsz[1] else imgsz}" if imgsz else "imgsz=<its size>"
        raise fail(f"{where}: input", "dynamic input size: candor runs a model at one static input size",
                   expected="[1, 3, H, W] with fixed H and W", got=list(shape),
                   hint=f"export it again with a static size: yolo export format=onnx dynamic=False {size}")
    if imgsz is not None and imgsz != [h, w]:
        raise fail(f"{where}: metadata imgsz", "not the input's size", expected=str([h, w]), got=imgsz)
    return [h, w]


def card_fields(facts: OnnxFacts, *, onnx: str, sha256: str, classes: list[str] | None = None,
                where: str) -> dict[str, Any]:
    """The card of the model ``facts`` describe (module docstring): ``onnx`` (its file name beside
    the card), ``sha256``, ``classes``, ``input_size``, ``output_layout``, ``preprocess``;
    ``classes`` given replace the metadata's names; ``where`` names the ONNX file in errors."""
    meta = facts.metadata
    task = meta.get("task")
    if task is not None and task != "detect":
        raise fail(f"{where}: metadata task", "not a detection model", expected="detect", got=task,
                   hint="candor scores box detectors: export a detect model (yolo export model=<detect .pt>)")
    if end_to_end(meta):
        raise fail(f"{where}: metadata", "an end-to-end export (NMS inside the model)",
                   expected="the raw head [1, 4+C, N]", got="end2end / nms=True",
                   hint="export it again without NMS: yolo export format=onnx nms=False "
                        "(candor applies the served thresholds and NMS itself, from params.yaml)")
    names = metadata_names(meta["names"], where=where) if "names" in meta else None
    if classes is not None:
        if names is not None and len(classes) != len(names):
            raise fail("--classes", "not one name per class of the model", expected=f"{len(names)} names",
                       got=f"{len(classes)}: {', '.join(classes)}")
        names = tuple(classes)
    if names is None:
        raise fail(f"{where}: metadata names", "the model names no classes",
                   expected="Ultralytics' names metadata", hint="give them in output order: --classes a,b,...")
    size = input_size(facts.input_shape, imgsz=metadata_imgsz(meta["imgsz"], where=where) if "imgsz" in meta
                      else None, where=where)
    family = export_family(meta)
    out = f"{where}: output"       # (infer_layout takes a dynamic N too, whatever its annotation says)
    try:
        layout = infer_layout(cast(list[int], list(facts.output_shape)), num_classes=len(names), where=out)
    except InputError as err:
        raise InputError(err.problems, hint=f"the head does not fit {len(names)} classes: names (or --classes) "
                         "must give one name per class the model outputs") from None
    if family is not None and layout != FAMILY_LAYOUT[family]:
        want = FAMILY_LAYOUT[family]
        raise fail(out, f"not the {family} head for {len(names)} classes",
                   expected=f"{want} {LAYOUT_SHAPES[want]}", got=list(facts.output_shape))
    return {"onnx": onnx, "sha256": sha256, "classes": list(names), "input_size": size, "output_layout": layout,
            "preprocess": dict(ULTRALYTICS_PREPROCESS)}


def with_kept(card: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """``card`` with what the earlier card ``old`` holds and :func:`card_fields` does not derive
    (module docstring), in the cards' usual key order.

    >>> with_kept({"onnx": "m.onnx", "sha256": "b", "classes": ["a"]}, {"sha256": "a", "training": {"epochs": 3},
    ...           "evaluation": {"f1": 0.5}})
    {'onnx': 'm.onnx', 'sha256': 'b', 'classes': ['a'], 'training': {'epochs': 3}}
    """
    old = old or {}
    kept = {k: old[k] for k in KEPT if k in old}
    if old.get("sha256") == card.get("sha256"):
        kept |= {k: old[k] for k in KEPT_SAME_BYTES if k in old}
    merged = {**card, **kept}
    order = ("onnx", "sha256", "source", "description", "classes", "input_size", "output_layout", "preprocess",
             "class_map", "training", "eval_manifest_sha256", "evaluation")
    return {k: merged[k] for k in order if k in merged}
