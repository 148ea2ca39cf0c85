"""Reading rules: the text an OCR model read on a lot's photos -> the answer object a VLM returns.

The local OCR candidate (docs/lots.md, "A local model as a candidate") reads every photo of
the lot (the gallery policy applies) and this deterministic parser turns what it read into the
prompt's answer object, so the recording, replay and scoring treat it like any other model.
It never sees the labels: its only knowledge is the configured list of makes
(params ``identify.ocr.makes``) and the project's tokeniser (:mod:`candor_eval.lots.tokens`, params
``lots``).

**Input** (``reading``): per photo, in gallery order, the lines of text the OCR read, in its
order (top to bottom). OCR drops and inserts spaces (``OptiPlex7090SFF``, ``lot L008x1``),
so every comparison uses a line's *compact* form: folded (:func:`candor_eval.lots.tokens.fold`),
letters and digits only.

**Rules**, applied to each line in reading order; a line is consumed from both ends and what
is left reads on:

1. *serial*: a line whose compact form starts with ``sn`` or ``serial`` followed by a digit
   (``S/N67622649``, ``SN 2397``) is skipped whole: a serial number is never a model.
2. *make*: a line starting with a configured make (compact forms compared, the longest make
   wins: ``DEWALT20VMAX`` -> ``DeWalt``, then ``20VMAX`` reads on), or a *cut-off* make: a line of
   at least :data:`MIN_CUT_MAKE` letters only that begins a make (``ThermoFisherScientif`` ->
   ``Thermo Fisher Scientific``; the shortest such make when several begin with it). The first
   make read is the answer's make, spelled as configured. Matching is on prefixes, so ``HPLCSystem`` starts
   with ``HP``: a make that
   appears before the nameplate wins, which is one of this reader's honest failure modes.
3. *count marking*: ``qty N`` / ``quantity N`` (``:``, ``#``, ``.`` or ``=`` allowed between),
   ``N pcs`` / ``N units``, or an ``x`` and 1-4 digits ending the line whose ``x`` does not
   follow a letter nor a bare number (``lot L001 x10``, ``lotL001x10``, ``x12`` left after a
   make; ``1280x720`` is a dimension). The first marking read is the answer's quantity; the
   marking is cut from the line. (``ThinkPad X1`` reads as a count of 1: another honest
   failure.)
4. *lot tag*: what is left starts with ``lot`` (compact): skipped (a lot number is not a model).
   A lot tag misread by OCR (``otL013x1`` for ``lot L013 x1``) keeps its count but is no longer
   a lot tag, so its lot number becomes the model: a third honest failure, scored *wrong*.
5. *model*: the first remaining text with a distinctive token
   (:func:`candor_eval.lots.tokens.distinctive_tokens`: a digit, not a spec token) is the model,
   **as read** (trimmed): no space is restored, so ``OptiPlex7090SFF`` stays glued and the
   identification rule treats the glued suffix as another model (``7090`` does not occur in
   ``7090SFF``), exactly as it treats ``3080Ti``.

**Output** (:func:`read_answer`): ``{"type": "item", "item": {...}, "imageLabel": None,
"imageNotes": None, "ocrText": [[line, ...] per photo]}``. The item fills what OCR can honestly
fill: ``itemManufacturer`` (make), ``itemModel`` (model), ``quantity`` (count); every other
field is null (``itemAttributes`` empty), which field scoring counts as a miss. ``ocrText``
keeps the reading itself, so the recording shows what the model saw and the parser can be
re-run on it (``tests/lots/test_ocr_reading.py``). Nothing read, or nothing recognised: every
field null (an abstention). Always an item, never a container (the reader cannot tell).

Pure functions, no I/O.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from candor_eval.lots.tokens import TokenRules, distinctive_tokens, fold

MIN_CUT_MAKE = 6
_SERIAL = re.compile(r"^(?:sn|serial(?:no|number)?)\d")
_TRAILING_X = re.compile(r"(?<![^\W\d_])x\s*(\d{1,4})\s*$", re.IGNORECASE)
_COUNTS = (
    re.compile(r"(?<![^\W\d_])(?:qty|quantity)\s*[:#.=]?\s*(\d{1,4})(?!\d)", re.IGNORECASE),
    re.compile(r"(?<![\w])(\d{1,4})\s*(?:pcs|units)(?![^\W\d_])", re.IGNORECASE),
    _TRAILING_X,
)
_BARE_NUMBER = re.compile(r"(?<![^\W_])\d+$")


def compact(text: str) -> str:
    """Folded letters and digits only: how OCR text is compared (``"S/N 12"`` -> ``"sn12"``)."""
    return "".join(ch for ch in fold(text) if ch.isalnum())


@dataclass(frozen=True)
class ReadingRules:
    """What the reader knows: ``makes`` (spelled as they are to be answered) and the token rules."""

    makes: tuple[str, ...]
    tokens: TokenRules

    def make_of(self, line: str) -> tuple[str | None, str]:
        """``(make, rest of the line)`` when ``line`` starts with a make (rule 2), else ``(None, line)``."""
        text = compact(line)
        starts = [m for m in self.makes if compact(m) and text.startswith(compact(m))]
        if starts:
            make = max(starts, key=lambda m: len(compact(m)))
            return make, _drop_alnum(line, len(compact(make)))
        if len(text) >= MIN_CUT_MAKE and text.isalpha():
            cut = [m for m in self.makes if compact(m).startswith(text)]
            if cut:
                return min(cut, key=lambda m: len(compact(m))), ""
        return None, line


def _drop_alnum(line: str, n: int) -> str:
    """``line`` after its first ``n`` letters and digits (compact characters), trimmed."""
    seen = 0
    for i, ch in enumerate(line):
        if seen >= n:
            return line[i:].strip()
        seen += sum(c.isalnum() for c in fold(ch))
    return ""


def count_marking(line: str) -> tuple[int | None, str]:
    """``(count, line without the marking)`` for the first count marking in ``line`` (rule 3);
    ``(None, line)`` when there is none. A trailing ``xN`` after a bare number is a dimension
    (``1280x720``), not a count.

    >>> count_marking("lot L001 x10"), count_marking("Qty: 4 boxed"), count_marking("1280x720")
    ((10, 'lot L001'), (4, 'boxed'), (None, '1280x720'))
    """
    text = unicodedata.normalize("NFKC", line)
    for pattern in _COUNTS:
        m = pattern.search(text)
        if m is None or (pattern is _TRAILING_X and _BARE_NUMBER.search(text[:m.start()])):
            continue
        return int(m.group(1)), (text[:m.start()] + " " + text[m.end():]).strip()
    return None, line


def read_answer(reading: Sequence[Sequence[str]], *, rules: ReadingRules) -> dict[str, Any]:
    """The answer object of one lot or case from its OCR reading (see the module docstring).

    >>> rules = ReadingRules(makes=("Dell",), tokens=TokenRules(spec_words=(), form_factors=("sff",),
    ...                      generation_prefixes=(), min_number_digits=3, hedge_markers=()))
    >>> item = read_answer([["lotL001x10"], ["Dell", "OptiPlex7090SFF", "S/N6762"]], rules=rules)["item"]
    >>> item["itemManufacturer"], item["itemModel"], item["quantity"]
    ('Dell', 'OptiPlex7090SFF', 10)
    """
    make: str | None = None
    model: str | None = None
    count: int | None = None
    for line in (ln for photo in reading for ln in photo):
        if _SERIAL.match(compact(line)):
            continue
        found, rest = rules.make_of(line)
        make = make or found
        marked, rest = count_marking(rest)
        count = marked if count is None else count
        if compact(rest).startswith("lot"):
            continue
        if model is None and distinctive_tokens(rest, rules=rules.tokens):
            model = rest.strip()
    item: dict[str, Any] = {"itemName": None, "itemManufacturer": make, "itemModel": model, "itemType": None,
            "categoryFunctional": None, "categorySpecific": None, "quantity": count, "itemAttributes": [],
            "condition": None}
    return {"type": "item", "item": item, "imageLabel": None, "imageNotes": None,
            "ocrText": [list(photo) for photo in reading]}


def reading_text(answer: dict[str, Any]) -> str:
    """The recorded raw text of an answer object: compact JSON, keys in the order built, UTF-8 kept."""
    return json.dumps(answer, ensure_ascii=False)


def reader_sha256(prompt: bytes, settings: dict[str, Any]) -> str:
    """The identity recorded as ``prompt_sha256`` for a local reader: SHA-256 of its prompt file,
    a newline, and its settings as canonical JSON (sorted keys), so a changed makes list makes
    the recording stale (replay refuses it)."""
    blob = prompt + b"\n" + json.dumps(settings, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()
