"""MIME sniffing from bytes, data URLs and the 5 MB cap."""
from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from candor_eval.common.errors import InputError
from candor_eval.common.images import MAX_BYTES, data_url, encode_data_url, load_frame, sniff_mime


def image_bytes(fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (2, 2), (9, 9, 9)).save(buf, format=fmt)
    return buf.getvalue()


@pytest.mark.parametrize("fmt, mime", [("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp"),
                                       ("GIF", "image/gif")])
def test_sniff_real_encodings(fmt, mime):
    assert sniff_mime(image_bytes(fmt)[:16]) == mime


@pytest.mark.parametrize("head", [b"", b"BM6\x00", b"RIFF\x00\x00\x00\x00WAVE", b"%PDF-1.4", b"\xff\xd8"])
def test_sniff_rejects_other_bytes(head):
    assert sniff_mime(head) is None


def test_mime_comes_from_bytes_not_name(tmp_path):
    p = tmp_path / "photo.jpg"
    p.write_bytes(image_bytes("PNG"))
    url = data_url(p)
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == p.read_bytes()


def test_too_large_and_unknown_are_errors(tmp_path):
    big = tmp_path / "big.png"
    big.write_bytes(image_bytes("PNG") + b"\0" * (MAX_BYTES + 1))
    with pytest.raises(InputError, match="big.png: image too large"):
        data_url(big)
    with pytest.raises(InputError, match="x: not a readable image"):   # PNG magic, no image behind it
        encode_data_url(b"\x89PNG\r\n\x1a\n" + b"\0" * 8, where="x", max_bytes=16)
    with pytest.raises(InputError, match="image too large"):
        encode_data_url(b"\x89PNG\r\n\x1a\n" + b"\0" * 9, where="x", max_bytes=16)
    txt = tmp_path / "notes.png"
    txt.write_text("hello")
    with pytest.raises(InputError, match="notes.png: not a supported image"):
        data_url(txt)
    with pytest.raises(InputError, match="image not found"):
        data_url(tmp_path / "missing.png")


def test_truncated_image_is_never_sent():
    whole = image_bytes("JPEG")
    assert encode_data_url(whole, where="lot.jpg").startswith("data:image/jpeg;base64,")
    with pytest.raises(InputError, match="lot.jpg: cannot decode the image"):
        encode_data_url(whole[: len(whole) // 2], where="lot.jpg")


def test_load_frame_exif_policy(tmp_path):
    """Orientation 6 (rotate 90 degrees clockwise to display): ``apply`` turns a 32x16 frame, blue
    on the left, into a 16x32 frame, blue on top; ``ignore`` (the default) keeps it as stored."""
    im = Image.new("RGB", (32, 16), (200, 0, 0))
    im.paste((0, 0, 255), (0, 0, 16, 16))
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "tagged.jpg"
    im.save(path, exif=exif.tobytes(), quality=95)
    for kept in (load_frame(path), load_frame(path, exif="ignore")):
        assert kept.size == (32, 16) and kept.getpixel((4, 8))[2] > 128
    turned = load_frame(path, exif="apply")
    assert turned.size == (16, 32)
    assert turned.getpixel((8, 4))[2] > 128 and turned.getpixel((8, 28))[0] > 128
    with pytest.raises(ValueError, match="apply or ignore"):
        load_frame(path, exif="rotate")
