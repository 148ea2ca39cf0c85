"""Images as data URLs: MIME type sniffed from the bytes, size capped (``docs/lots.md``, live mode).

* :func:`sniff_mime` reads the magic bytes, never the file name: JPEG
  (``FF D8 FF``), PNG (``89 50 4E 47 0D 0A 1A 0A``), GIF (``GIF87a``/``GIF89a``),
  WebP (``RIFF....WEBP``). Anything else is None.
* :func:`data_url` builds ``data:<mime>;base64,<...>``; an unknown format or more
  than :data:`MAX_BYTES` (5 MB, 5 * 1024 * 1024 bytes) is an
  :class:`~candor_eval.common.errors.InputError` naming the file, and so is an image that does
  not decode (truncated or corrupt bytes are never sent to a provider).
* :func:`load_frame` decodes a detector frame with a model card's EXIF policy
  (``preprocess.exif``: ``ignore`` or ``apply``; ``docs/detector.md``, "Preprocessing").
"""
from __future__ import annotations

import base64
import io
import warnings
from pathlib import Path
from typing import BinaryIO

from PIL import Image, ImageOps, UnidentifiedImageError

from candor_eval.common.errors import fail

MAX_BYTES = 5 * 1024 * 1024


def sniff_mime(head: bytes) -> str | None:
    """The MIME type of an image from its first bytes, or None when not JPEG/PNG/WebP/GIF."""
    if head[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def encode_data_url(data: bytes, *, where: str, max_bytes: int = MAX_BYTES) -> str:
    """``data:<mime>;base64,...`` for image bytes ``data`` (``where`` names them in errors)."""
    if len(data) > max_bytes:
        raise fail(where, "image too large", expected=f"at most {max_bytes} bytes", got=len(data),
                   hint="downscale it (e.g. 1600 px on the long side, JPEG quality 85)")
    mime = sniff_mime(data[:16])
    if mime is None:
        raise fail(where, "not a supported image", expected="JPEG, PNG, WebP or GIF bytes",
                   got=data[:12].hex(" "))
    decode_image(io.BytesIO(data), where=where)  # a truncated or corrupt image is never sent
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def data_url(path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """Read ``path`` and return its data URL (see :func:`encode_data_url`)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise fail(str(p), "image not found") from None
    if size > max_bytes:
        raise fail(str(p), "image too large", expected=f"at most {max_bytes} bytes", got=size,
                   hint="downscale it (e.g. 1600 px on the long side, JPEG quality 85)")
    return encode_data_url(p.read_bytes(), where=str(p), max_bytes=max_bytes)


def decode_image(source: str | Path | BinaryIO, *, where: str) -> Image.Image:
    """Open and fully decode an image (a path or a binary file object); ``where`` names it.

    Errors name the file: missing, empty, not an image, truncated or corrupt, or more
    pixels than ``Image.MAX_IMAGE_PIXELS`` (a decompression bomb).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(source) as im:
                im.load()
                return im
    except FileNotFoundError:
        raise fail(where, "image not found") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        raise fail(where, "image has too many pixels (decompression-bomb limit)",
                   expected=f"at most {Image.MAX_IMAGE_PIXELS} pixels", got=str(err).split(" pixels")[0]) from None
    except UnidentifiedImageError:
        raise fail(where, "not a readable image", expected="JPEG, PNG, WebP, GIF or BMP bytes") from None
    except (OSError, SyntaxError, ValueError) as err:
        raise fail(where, f"cannot decode the image ({err})", hint="the file is truncated or corrupt; restore it "
                   "(dvc pull / git checkout) and check the manifest") from None


def load_frame(path: str | Path, *, exif: str = "ignore") -> Image.Image:
    """:func:`decode_image` of the file at ``path`` (an empty file says so).

    ``exif`` is a model card's ``preprocess.exif``: ``ignore`` keeps the stored pixels;
    ``apply`` rotates/flips them by the EXIF orientation tag (``ImageOps.exif_transpose``, as
    OpenCV's ``imread`` does), so the frame's size is the displayed one.
    """
    p = Path(path)
    if p.is_file() and p.stat().st_size == 0:
        raise fail(str(p), "not a readable image (the file is empty)", expected="JPEG, PNG, WebP, GIF or BMP bytes",
                   got="0 bytes")
    image = decode_image(p, where=str(p))
    if exif == "apply":
        return ImageOps.exif_transpose(image)
    if exif != "ignore":
        raise ValueError(f"exif must be apply or ignore, got {exif!r}")
    return image
