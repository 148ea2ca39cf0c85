"""The local OCR responder: RapidOCR reads every image of a lot, the reading rules answer.

A live-mode responder (:mod:`candor_eval.lots.live`) for candidates whose provider is ``local-ocr``
(params ``identify.providers``; docs/lots.md, "A local model as a candidate"). For each
(lot or case, run) it runs RapidOCR (``rapidocr-onnxruntime``: PP-OCRv4 text detection and
recognition, ONNX models shipped inside the wheel, run on onnxruntime's CPU provider with the
package's default settings) on every image, in gallery order, and turns the lines read into
the prompt's answer object with :func:`candor_eval.lots.ocr_reading.read_answer`. The prompt text
is not an input: the reader's identity is its prompt file and its settings
(:func:`candor_eval.lots.ocr_reading.reader_sha256`).

* **Images** are decoded with Pillow (:func:`candor_eval.common.images.load_frame`, EXIF orientation
  applied, so text is upright as displayed) and converted to 8-bit RGB, then handed to RapidOCR
  as a BGR array. RapidOCR's own loader reads a palette PNG's colour indices as grey levels
  and then finds no text at all, so it never opens files itself.
* **Recorded**: provider ``local-ocr``, model ``rapidocr-onnxruntime==<installed version>``,
  raw text the answer object as JSON (with the lines read, ``ocrText``); only the text is kept,
  never RapidOCR's confidences, so the recording holds no float that could differ by CPU.
* **Offline**: RapidOCR loads its models from its package folder; nothing is downloaded
  (``tests/lots/test_ocr.py`` runs it with sockets disabled).
* **Import**: ``rapidocr_onnxruntime`` is imported only when an :class:`OcrResponder` is made,
  so replay (the default, what CI runs) never needs it. Install it with ``pip install --no-deps
  rapidocr-onnxruntime`` (its ``opencv-python`` requirement would shadow the project's
  ``opencv-python-headless``; requirements-ocr.txt, which `make test` installs).
"""
from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from candor_eval.common.errors import fail
from candor_eval.common.images import load_frame
from candor_eval.lots.live import Reply, ReplyError
from candor_eval.lots.ocr_reading import ReadingRules, read_answer, reading_text

PACKAGE = "rapidocr-onnxruntime"
PROVIDER = "local-ocr"


def bgr_pixels(path: Path) -> np.ndarray:
    """The image at ``path`` as an (H, W, 3) uint8 BGR array, decoded as described in the module docstring."""
    rgb = np.asarray(load_frame(path, exif="apply").convert("RGB"), dtype=np.uint8)
    return np.ascontiguousarray(rgb[:, :, ::-1])


class OcrResponder:
    """RapidOCR plus the reading rules, as a live-mode responder (module docstring)."""

    provider = PROVIDER
    endpoint = None                    # nothing is called over the network

    def __init__(self, rules: ReadingRules):
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as err:
            raise fail("identify.providers", f"the local-ocr provider needs {PACKAGE}, which is not importable ({err})",
                       hint=f"pip install --no-deps '{PACKAGE}==1.4.4' 'pyclipper>=1.3,<2' 'shapely>=2.0.5,<3' "
                            "(docs/lots.md, 'A local model as a candidate')") from None
        self.rules = rules
        self.model = f"{PACKAGE}=={metadata.version(PACKAGE)}"
        self._engine = RapidOCR()

    def read(self, path: Path) -> list[str]:
        """The lines of text RapidOCR reads in the image at ``path``, in its order (top to bottom)."""
        try:
            result, _ = self._engine(bgr_pixels(path))
        except RuntimeError as err:  # onnxruntime's failures are RuntimeErrors
            raise ReplyError(f"{PACKAGE} failed on {path.name}: {err}") from None
        return [str(text) for _, text, _ in result or []]

    def load(self, images: Sequence[Path]) -> list[Path]:
        for p in images:
            load_frame(p)  # decodable, or an InputError naming the file, before any reading
        return list(images)

    def reply(self, *, prompt: str, images: Any, context: Any = None) -> Reply:
        reading = [self.read(p) for p in images]
        return Reply(text=reading_text(read_answer(reading, rules=self.rules)))
