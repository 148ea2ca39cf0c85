"""The one tokeniser: folding, tokens, parts, keys, spans, spec tokens, label keys, hedges."""
from __future__ import annotations

from dataclasses import replace

import pytest

from candor_eval.lots.tokens import (
    candidate_tokens,
    distinctive_tokens,
    fold,
    key,
    label_keys,
    models_named,
    parts,
    spans,
    tokenise,
)
from tests.conftest import committed_token_rules

R = committed_token_rules()


def test_tokenise_keeps_hyphens_and_turns_inch_marks_into_a_size():
    assert tokenise('Dell P2419H 24" (IPS), WS-C2960X-48FPD-L') == ["dell", "p2419h", "24in", "ips",
                                                                     "ws-c2960x-48fpd-l"]
    assert tokenise(None) == [] and tokenise("") == []


def test_fold_and_tokenise_keep_every_script():
    assert fold("ＲＴＸ３０８０") == "rtx3080"                           # NFKC: full-width forms
    assert tokenise("Дрель ΔΡΑΠΑΝΟ 電動ドリル") == ["дрель", "δραπανο", "電動ドリル"]
    assert tokenise("Шуруповёрт-2") == ["шуруповёрт-2"]


def test_candidate_tokens_add_hyphen_parts():
    assert candidate_tokens("Milwaukee 2804-20") == ["milwaukee", "2804-20", "2804", "20"]


@pytest.mark.parametrize("text, expected", [
    ("WS-C2960X-48FPD-L", ["ws", "c", "2960", "x", "48", "fpd", "l"]),
    ("5424 R", ["5424", "r"]),
    ("87-V", ["87", "v"]),
    ("", []),
])
def test_parts(text, expected):
    assert parts(text) == expected


@pytest.mark.parametrize("a, b", [("EX4300-48T", "EX430048T"), ("EX4300-48T", "ex4300 48t"), ("RTX 3080", "RTX3080"),
                                  ("87-V", "87V"), ("87 V", "87V"), ("TDS 2024C", "tds2024c")])
def test_spellings_share_a_key(a, b):
    assert key(a) == key(b)


@pytest.mark.parametrize("k, text, expected", [
    ("3080", "RTX3080", True), ("3080", "RTX-3080", True), ("3080", "RTX 3080 Ti", True),
    ("3080", "13080", False),                         # a different number containing the digits
    ("3080", "3080Ti", False),                        # a suffix glued to it makes another model
    ("smt1500", "SMT1500RM2U", False), ("smt1500", "Smart-UPS SMT1500", True),
    ("2960x", "WS-C2960X-48FPD-L", True), ("researchplus", "Research 8-channel plus", False),
])
def test_spans(k, text, expected):
    assert (k in spans(text)) is expected


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
    ("1U rackmount 2x 48-port", set()),            # 2x: a quantity
    ("SFF i7-10700 16GB", set()),                  # a CPU and its parts are specs
    ("Core i7-1185G7", set()),
    ("Ryzen 9 5950X", {"5950x"}),                  # 5950x is a model, not a quantity
    ("ThinkPad X1 Carbon", {"x1"}), ("ThinkPad X280", {"x280"}),
    ("Desktop Computer", set()),
])
def test_distinctive_tokens(text, expected):
    assert distinctive_tokens(text, rules=R) == expected


def test_rules_are_configurable():
    assert distinctive_tokens("DCD791 4-bay", rules=R) == {"dcd791"}
    assert distinctive_tokens("4-bay", rules=replace(R, spec_words=("gb",))) == {"4-bay"}
    assert distinctive_tokens("XS 205", rules=replace(R, min_number_digits=4)) == set()
    assert distinctive_tokens("XS 205", rules=R) == {"205"}
    assert distinctive_tokens("10x", rules=R) == set() and distinctive_tokens("100x", rules=R) == {"100x"}
    assert not replace(R, hedge_markers=()).is_hedged("e.g. 7090")


@pytest.mark.parametrize("model, pinned, expected", [
    ("OptiPlex 7090 SFF", (), {"7090"}),
    ("EX4300-48T", (), {"ex430048t", "ex4300"}),      # the base model, never the suffix 48t alone
    ("2804-20", (), {"280420", "2804"}),
    ("87V", ("87V",), {"87v"}),
    ("Research plus", ("Research plus",), {"researchplus"}),
    ("Research plus", (), set()),                      # unscorable without pinning
])
def test_label_keys(model, pinned, expected):
    assert label_keys(model, pinned, rules=R) == expected


@pytest.mark.parametrize("text, expected", [
    ("Catalyst 2960-X WS-C2960X-48FPD-L", {"2960x wsc2960x48fpdl"}),   # one model, two spellings
    ("Catalyst 2960-X (WS-C2960X-48FPD-L)", {"2960x wsc2960x48fpdl"}),   # a bracket qualifies, never cuts
    ("Milwaukee 2804-20 (M18 FUEL)", {"280420 m18"}), ("ThinkPad X1 Carbon Gen 9 (20XW)", {"20xw x1"}),
    ("OptiPlex 7090 (or 7080)", {"7090", "7080"}),
    ("EX4300 48T", {"48t ex4300"}), ("EX4300-48T or EX4300-48P", {"ex430048t", "ex430048p"}),
    ("OptiPlex 7090 or 7080", {"7090", "7080"}),
    ("RTX 3080/3090", {"3080", "3090"}),
    ("OptiPlex 7090 SFF 16GB", {"7090"}),
    ("Desktop", set()),
])
def test_models_named(text, expected):
    assert models_named(text, rules=R) == expected


@pytest.mark.parametrize("text, expected", [
    ("e.g. OptiPlex 7090", True), ("OptiPlex 7090 (possibly)", True), ("P2419H or similar", True),
    ("such as TDS2024C", True), ("likely TDS2024C", True), ("M720q?", True), ("7080 or 7090", True),
    ("RTX 3080/3090", True), ("E.G. 7090", True),
    ("OptiPlex 7090", False), ("Monitor", False), (None, False), ("Legend Micro 21R", False),
    ("Dell or HP desktop", False),                     # "or" alone is no hedge: one model at most
    ("Catalyst 2960-X WS-C2960X-48FPD-L", False), ("Eggplant 7090", False),
    ("Milwaukee 2804-20 (M18 FUEL)", False), ("ThinkPad X1 Carbon Gen 9 (20XW)", False),
])
def test_is_hedged(text, expected):
    assert R.is_hedged(text) is expected
