"""Reading rules (candor_eval/lots/ocr_reading.py): hand-computed readings, and the committed OCR
recording re-parsed from its own text (the parser has not drifted from what was recorded)."""
from __future__ import annotations

import hashlib

import pytest

from candor_eval.common.params import section
from candor_eval.lots.ocr_reading import ReadingRules, count_marking, read_answer, reader_sha256, reading_text
from candor_eval.lots.params import IdentifyParams
from candor_eval.lots.recording import load_recording
from candor_eval.lots.tokens import TokenRules
from candor_eval.lots.vocabulary import Makes, read_vocabulary
from tests.conftest import ROOT, VOCABULARY, committed_token_rules

TOKENS = TokenRules(spec_words=("gb", "port", "in"), form_factors=("sff",), generation_prefixes=("g", "gen"),
                    min_number_digits=3, hedge_markers=())
RULES = ReadingRules(makes=("Dell", "HP", "HPE", "Thermo Fisher Scientific", "Thermo Scientific", "DeWalt"),
                     tokens=TOKENS)


def item(reading):
    got = read_answer(reading, rules=RULES)
    return got["item"]["itemManufacturer"], got["item"]["itemModel"], got["item"]["quantity"]


@pytest.mark.parametrize("reading, expected", [
    ([["lotL001x10"], ["Dell", "OptiPlex7090SFF", "S/N67622649"], ["DesktopComputer"]],
     ("Dell", "OptiPlex7090SFF", 10)),                                  # glued model kept as read
    ([["DEWALT20VMAX"]], ("DeWalt", "20VMAX", None)),                   # the rest of a make line reads on
    ([["ThermoFisherScientif", "HerathermIGS60", "SN25289681"]],
     ("Thermo Fisher Scientific", "HerathermIGS60", None)),             # cut-off make; serial skipped
    ([["Thermo"]], ("Thermo Scientific", None, None)),                  # cut-off: the shortest make
    ([["Therm"]], (None, None, None)),                                  # too short to be a cut-off make
    ([["HPE ProLiant DL380"]], ("HPE", "ProLiant DL380", None)),        # the longest make wins
    ([["HPLCSystem"], ["Dell"]], ("HP", None, None)),                   # prefix match: the first make read
    ([["otL013x1"], ["Research plus"]], (None, "otL013", 1)),           # a misread lot tag becomes a model
    ([["lot L017 x2"], ["Qty: 5"]], (None, None, 2)),                   # the first count marking wins
    ([["Dellx12"]], ("Dell", None, 12)),                                # make, then a count marking
    ([["OptiPlex 7090 x10"]], (None, "OptiPlex 7090", 10)),             # the marking is cut, the model stays
    ([["48-port", "16GB", "SFF"]], (None, None, None)),                 # spec tokens are no model
    ([["1920x1080"]], (None, None, None)),                              # a dimension: no count, no model
    ([], (None, None, None)),                                           # nothing read
    ([[], []], (None, None, None)),
])
def test_read_answer(reading, expected):
    assert item(reading) == expected


@pytest.mark.parametrize("line, expected", [
    ("lot L001 x10", (10, "lot L001")), ("lotL001x10", (10, "lotL001")), ("Qty: 4 boxed", (4, "boxed")),
    ("QUANTITY#12", (12, "")), ("10 pcs", (10, "")), ("3 units", (3, "")), ("ThinkPad X1", (1, "ThinkPad")),
    ("1280x720", (None, "1280x720")), ("Dellx12", (None, "Dellx12")), ("5950X", (None, "5950X")),
    ("OptiPlex 7090", (None, "OptiPlex 7090")), ("ｑｔｙ ７", (7, "")),
])
def test_count_marking(line, expected):
    assert count_marking(line) == expected


def test_answer_shape_fills_only_what_ocr_can_read():
    got = read_answer([["Dell", "P2419H"]], rules=RULES)
    assert got["type"] == "item" and got["ocrText"] == [["Dell", "P2419H"]]
    empty = {k: v for k, v in got["item"].items() if k not in ("itemManufacturer", "itemModel", "quantity")}
    assert empty == {"itemName": None, "itemType": None, "categoryFunctional": None, "categorySpecific": None,
                     "itemAttributes": [], "condition": None}
    assert reading_text(got).startswith('{"type": "item", "item": {"itemName": null')


def test_reader_sha_covers_the_prompt_and_the_settings():
    base = reader_sha256(b"p", {"makes": ["Dell"]})
    assert base == hashlib.sha256(b'p\n{"makes": ["Dell"]}').hexdigest()
    assert reader_sha256(b"q", {"makes": ["Dell"]}) != base != reader_sha256(b"p", {"makes": ["Dell", "HP"]})


def test_committed_recording_is_what_the_current_rules_read():
    """Every line of the committed OCR recording re-parsed from its own ``ocrText`` with the rules of
    params.yaml and data/lots/vocabulary/ gives the recorded answer, under the recorded identity. A failure means the
    parser, the makes or the token rules changed: record again (docs/lots.md, "A local model as a candidate")."""
    params = section(IdentifyParams, "identify", path=ROOT / "params.yaml")
    makes = read_vocabulary(Makes, VOCABULARY / "makes.yaml")
    rules = makes.rules(tokens=committed_token_rules())
    prompt = (ROOT / "data/lots/prompts/ocr-baseline.txt").read_bytes()
    lines = load_recording(ROOT / "data/lots/recordings/ocr-baseline.jsonl")
    assert params.provider("ocr-baseline") == "local-ocr" and len(lines) == 32 * params.runs
    assert {ln.prompt_sha256 for ln in lines} == {reader_sha256(prompt, makes.model_dump())}
    assert {(ln.provider, ln.gallery, ln.error) for ln in lines} == {("local-ocr", params.gallery, None)}
    for ln in lines:
        assert ln.raw == reading_text(read_answer(ln.parsed["ocrText"], rules=rules)), (ln.case, ln.run)
