"""An ONNX detector identified by its model card: hash first, then load, then run.

:func:`open_model` reads the ONNX file's bytes once, checks their SHA-256
against the card (and the fetch stage's verified record when given), and only
then hands *those bytes* to onnxruntime, so the model that runs is exactly the
model that was checked. It refuses an Ultralytics or YOLOv5 export whose card declares no
``preprocess`` (:mod:`candor_eval.detection.inference.export_family`), reads the static input shape
``[1, 3, H, W]`` and infers the output layout (:mod:`candor_eval.detection.inference.decode`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from candor_eval.common.errors import fail
from candor_eval.common.params import DEFAULT_PARAMS
from candor_eval.detection.inference.decode import Layout, infer_layout
from candor_eval.detection.inference.export_family import PREPROCESS_LINE, export_family
from candor_eval.detection.model_card import ModelCard, load_card, onnx_path


@dataclass(frozen=True)
class LoadedModel:
    """A checked, loaded model: its card, the SHA-256 of the bytes loaded (equal to the card's),
    the onnxruntime session, its input name and static input size, and the output layout."""

    name: str
    card: ModelCard
    sha256: str
    session: Any
    input_name: str
    input_h: int
    input_w: int
    layout: Layout

    @property
    def classes(self) -> tuple[str, ...]:
        """The card's class names, in output order (a loaded model's card always lists them)."""
        return tuple(self.card.classes or ())

    def run(self, tensor: np.ndarray) -> np.ndarray:
        """The first output of the model for one ``[1, 3, H, W]`` float32 tensor."""
        return self.session.run(None, {self.input_name: tensor})[0]


def check_model_record(record_path: Path, *, card_sha256: str) -> None:
    """The fetch stage's record ``model-<name>.json`` must exist and name the card's SHA-256."""
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail(str(record_path), "verified record not found",
                   hint="run the fetch stage first: dvc repro fetch") from None
    if record.get("sha256") != card_sha256:
        raise fail(str(record_path), "verified SHA-256 differs from the model card", expected=card_sha256,
                   got=record.get("sha256"), hint="rerun: dvc repro fetch")


def open_model(card_file: Path, *, providers: list[str], verified: Path | None = None,
               params_file: str | Path = DEFAULT_PARAMS) -> LoadedModel:
    """Check and load the model of ``card_file`` (see the module docstring); ``providers`` were read
    from ``params_file`` (``detector.providers``, named in the error when one is not available)."""
    import onnxruntime as ort

    card = load_card(card_file)
    name = card_file.stem
    if not card.classes:
        raise fail(f"{card_file}: classes", "model card lists no classes",
                   expected="classes: [names in output order]")
    if verified is not None:
        check_model_record(verified, card_sha256=card.sha256)
    path = onnx_path(card_file, card)
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        raise fail(str(path), "ONNX file not found",
                   hint="dvc repro fetch (it downloads from the card's source)") from None
    digest = hashlib.sha256(blob).hexdigest()
    if digest != card.sha256:
        raise fail(str(path), "SHA-256 mismatch; refusing to load the model", expected=card.sha256, got=digest,
                   hint=f"restore the file named by {card_file}, or update the card if the change is intended")
    available = ort.get_available_providers()
    bad = [p for p in providers if p not in available]
    if bad:
        raise fail(f"{params_file}:detector.providers", "provider not available",
                   expected=", ".join(available), got=bad)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    try:
        session = ort.InferenceSession(blob, sess_options=opts, providers=list(providers))
    except Exception as err:  # onnxruntime raises its own exception types
        raise fail(str(path), f"onnxruntime cannot load the model: {err}") from None
    family = export_family(session.get_modelmeta().custom_metadata_map)
    if family is not None and "preprocess" not in card.model_fields_set:
        raise fail(f"{card_file}: preprocess", f"the ONNX metadata names a{'n' if family == 'ultralytics' else ''} "
                   f"{family} export, served with OpenCV's resize, but the card declares no preprocess "
                   "(it would be scored on Pillow-resized pixels)", expected="a preprocess block", got="none",
                   hint=f"add this line to {card_file}: {PREPROCESS_LINE}   "
                        "(or preprocess: {resize: pillow-bilinear} "
                        "if it really is served on Pillow-resized frames)")
    inp = session.get_inputs()[0]
    shape = list(inp.shape)
    static = len(shape) == 4 and all(isinstance(d, int) for d in shape[1:]) and shape[1] == 3
    if not static:
        raise fail(f"{path}: input {inp.name}", "input shape is not a static [1, 3, H, W]",
                   expected="[1, 3, H, W] with fixed H and W", got=shape)
    h, w = int(shape[2]), int(shape[3])
    if card.input_size is not None and list(card.input_size) != [h, w]:
        raise fail(f"{card_file}: input_size", "card disagrees with the model's input shape",
                   expected=str([h, w]), got=card.input_size)
    out_shape = list(session.get_outputs()[0].shape)
    layout = infer_layout(out_shape, num_classes=len(card.classes), declared=card.output_layout,
                          where=f"{path}: output {session.get_outputs()[0].name}")
    return LoadedModel(name=name, card=card, sha256=digest, session=session, input_name=inp.name,
                       input_h=h, input_w=w, layout=layout)
