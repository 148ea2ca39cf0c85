"""Which exporter made an ONNX detector, from its metadata: the check that a card declares the
preprocessing its model is served with (docs/detector.md, "Preprocessing is part of the model card").

An Ultralytics export (YOLOv8/v9/v11, ``yolo export format=onnx``) writes ``author: Ultralytics``
(and a ``description`` beginning with "Ultralytics"); a YOLOv5 export (its ``export.py``) writes
exactly ``stride`` and ``names``. Both predictors resize with OpenCV ``INTER_LINEAR``, which a
card without a ``preprocess`` block does not get (its default is Pillow's antialiased resize),
so such a card is refused, never silently scored on other pixels. Any other metadata (the demo
models have none): no family.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Family = Literal["ultralytics", "yolov5"]

# the card line that declares the predictors' preprocessing (docs/detector.md)
PREPROCESS_LINE = "preprocess: {resize: opencv-linear}"


def export_family(metadata: Mapping[str, str]) -> Family | None:
    """The exporter named by an ONNX file's ``metadata_props`` (key -> value), or None.

    >>> export_family({"author": "Ultralytics", "task": "detect"}), export_family({"stride": "32", "names": "{0: 'a'}"})
    ('ultralytics', 'yolov5')
    >>> export_family({}), export_family({"author": "someone", "stride": "32", "names": "{}", "x": "1"})
    (None, None)
    """
    text = " ".join(str(metadata.get(k, "")) for k in ("author", "description")).lower()
    if "ultralytics" in text:
        return "ultralytics"
    if set(metadata) == {"stride", "names"}:
        return "yolov5"
    return None
