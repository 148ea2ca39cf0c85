"""Distinctive model tokens, spec tokens, pinned phrases and hedges."""
from __future__ import annotations

from dataclasses import replace

import pytest

from candor.lots.params import LotsParams
from candor.lots.tokens import candidate_tokens, contains_phrase, distinctive_tokens, is_hedged, tokenize

R = LotsParams().rules()


def test_tokenize_keeps_hyphens_and_turns_inch_marks_into_a_size():
    assert tokenize('Dell P2419H 24" (IPS), WS-C2960X-48FPD-L') == ["dell", "p2419h", "24in", "ips", "ws-c2960x-48fpd-l"]
    assert tokenize(None) == [] and tokenize("") == []


def test_candidate_tokens_add_hyphen_parts():
    assert candidate_tokens("Milwaukee 2804-20") == ["milwaukee", "2804-20", "2804", "20"]


@pytest.mark.parametrize("text, expected", [
    ("OptiPlex 7090 SFF 16GB", {"7090"}),
    ("8-channel pipette", set()),
    ("24-inch monitor 1920x1080 1080p", set()),
    ("EliteDesk 800 G6", {"800"}),                # g6 is a generation marker
    ("ThinkPad T14 Gen 2", {"t14"}),
    ("Fluke 87V", set()),                          # 87v reads as a voltage unless pinned
    ("Keysight 34461A", {"34461a"}),               # single-letter A is not an ampere
    ("Catalyst 2960-X", {"2960-x", "2960"}),
    ("Research plus 30-300ul", set()),             # a range of capacities
    ("UniFi US-24-250W", {"us-24-250w"}),          # a letter part makes it a model code
    ("1U rackmount 2x 48-port", set()),
    ("SFF i7-10700 16GB", set()),                  # a CPU and its parts are specs
    ("Desktop Computer", set()),
])
def test_distinctive_tokens(text, expected):
    assert distinctive_tokens(text, rules=R) == expected


def test_rules_are_configurable():
    assert distinctive_tokens("DCD791 4-bay", rules=R) == {"dcd791"}
    assert distinctive_tokens("4-bay", rules=replace(R, spec_words=("gb",))) == {"4-bay"}
    assert distinctive_tokens("XS 205", rules=replace(R, min_number_digits=4)) == set()
    assert distinctive_tokens("XS 205", rules=R) == {"205"}


@pytest.mark.parametrize("text, phrase, expected", [
    ("Eppendorf Research plus 8-channel", "Research plus", True),
    ("Eppendorf Research 8-channel plus", "Research plus", False),
    ("WS-C2960X-48FPD-L", "c2960x", True),
    ("HP EliteDesk 800 G6 SFF", "800 G6", True),
    ("HP EliteDesk 800 G5", "800 G6", False),
    ("anything", "", False),
])
def test_contains_phrase(text, phrase, expected):
    assert contains_phrase(text, phrase) is expected


@pytest.mark.parametrize("text, expected", [
    ("e.g. OptiPlex 7090", True), ("OptiPlex 7090 (possibly)", True), ("P2419H or similar", True),
    ("likely TDS2024C", True), ("M720q?", True), ("7080 or 7090", True),
    ("OptiPlex 7090", False), ("Monitor", False), (None, False), ("Legend Micro 21R", False),
])
def test_is_hedged(text, expected):
    assert is_hedged(text) is expected
