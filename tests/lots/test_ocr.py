"""The local OCR responder (candor_eval/lots/ocr.py) with the real RapidOCR model, offline.

A few committed photos are read again, with every socket connection refused, and the answers
must equal the committed recording byte for byte. Exact, not within a tolerance: the recording
keeps only the text RapidOCR read (an argmax over characters), never its float confidences,
so CPU rounding (about 1e-6, docs/detector.md) cannot move it unless a character was a near
tie; the scores of every demo image agreed to the last digit between 1 and 2 onnxruntime
threads. A failure here is a real change of reading (another rapidocr-onnxruntime or
onnxruntime version, another image decoder): record again and review the diff.
"""
from __future__ import annotations

import socket

import numpy as np
import pytest

from candor_eval.common.errors import InputError
from candor_eval.common.params import section
from candor_eval.lots.golden import load_golden
from candor_eval.lots.live import gallery_paths
from candor_eval.lots.ocr import OcrResponder, bgr_pixels
from candor_eval.lots.params import IdentifyParams
from candor_eval.lots.recording import load_recording
from candor_eval.lots.vocabulary import Makes, read_vocabulary
from tests.conftest import ROOT, VOCABULARY, committed_token_rules

# a glued model (L001, three photos), a misread lot tag (L013), a palette PNG case image (drill)
IDS = ("L001", "L013", "drill-on-bench")


@pytest.fixture
def responder(monkeypatch: pytest.MonkeyPatch) -> OcrResponder:
    """The responder of params.yaml, made (models loaded) and used with network connections refused."""
    def refuse(*args, **kw):
        raise AssertionError("the OCR tried to open a network connection")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return OcrResponder(read_vocabulary(Makes, VOCABULARY / "makes.yaml").rules(tokens=committed_token_rules()))


def test_real_ocr_reads_what_was_recorded(responder: OcrResponder):
    golden = load_golden(ROOT / "data/lots")
    params = section(IdentifyParams, "identify", path=ROOT / "params.yaml")
    recorded = {(ln.case, ln.run): ln for ln in load_recording(ROOT / "data/lots/recordings/ocr-baseline.jsonl")}
    for ident in IDS:
        images = responder.load(gallery_paths(golden, ident, params.gallery))
        reply = responder.reply(prompt="(not an input)", images=images)
        assert reply.text == recorded[(ident, 1)].raw, ident
        assert responder.model == recorded[(ident, 1)].model


def test_palette_images_are_decoded_to_colour(tmp_path):
    from PIL import Image

    im = Image.new("P", (4, 2))
    im.putpalette([255, 0, 0, 0, 0, 255] + [0] * 762)
    im.putpixel((1, 0), 1)
    im.save(tmp_path / "p.png")
    px = bgr_pixels(tmp_path / "p.png")
    assert px.shape == (2, 4, 3) and px.dtype == np.uint8
    assert px[0, 0].tolist() == [0, 0, 255] and px[0, 1].tolist() == [255, 0, 0]     # BGR


def test_an_unreadable_image_is_refused_before_any_reading(responder: OcrResponder, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image")
    with pytest.raises(InputError, match="not a readable image"):
        responder.load([bad])
