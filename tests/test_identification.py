"""Hit / abstain / wrong (docs/lots.md) and the exact-count check."""
from __future__ import annotations

import pytest

from candor.lots.identification import count_exact, identification_outcome, label_tokens
from candor.lots.params import LotsParams

R = LotsParams().rules()


@pytest.mark.parametrize("label, pinned, predicted, expected", [
    ("OptiPlex 7090", (), "Dell OptiPlex 7090 SFF", "hit"),       # the docs/lots.md example
    ("OptiPlex 7090 SFF", (), "OptiPlex 7090", "hit"),
    ("OptiPlex 7090 SFF", (), "e.g. OptiPlex 7090", "hit"),       # hedged is still scored on tokens
    ("OptiPlex 7090 SFF", (), "OptiPlex 3080", "wrong"),
    ("OptiPlex 7090 SFF", (), "OptiPlex", "abstain"),             # series only
    ("OptiPlex 7090 SFF", (), "Desktop Computer", "abstain"),     # category only
    ("OptiPlex 7090 SFF", (), "SFF i5 16GB", "abstain"),          # spec words only
    ("OptiPlex 7090 SFF", (), None, "abstain"),
    ("OptiPlex 7090 SFF", (), "   ", "abstain"),
    ("Research plus 8-channel", ("Research plus",), "8-channel", "abstain"),
    ("Research plus 8-channel", ("Research plus",), "Research plus 8-channel", "hit"),
    ("Research plus 8-channel", ("Research plus",), "Rainin E4 XLS", "wrong"),
    ("87V", ("87V",), "Fluke 87V", "hit"),
    ("87V", ("87V",), "Fluke 179", "wrong"),
    ("EliteDesk 800 G6 SFF", ("800 G6",), "EliteDesk 800 G5", "wrong"),
    ("EliteDesk 800 G6 SFF", ("800 G6",), "HP EliteDesk 800 G6", "hit"),
    ("TDS2024C", (), "TDS2024B", "wrong"),
    ("Catalyst 2960-X WS-C2960X-48FPD-L", ("2960-X", "WS-C2960X-48FPD-L"), "Catalyst 2960-X 48-port", "hit"),
])
def test_outcome(label, pinned, predicted, expected):
    assert identification_outcome(label, predicted, pinned=pinned, rules=R) == expected


def test_label_tokens_prefer_pinned_phrases():
    assert label_tokens("OptiPlex 7090 SFF", rules=R) == {"7090"}
    assert label_tokens("87V", ("87V",), rules=R) == {"87v"}
    assert label_tokens("Research plus", rules=R) == frozenset()   # unscorable without pinning


@pytest.mark.parametrize("label, predicted, expected", [(10, 10, True), (8, 24, False), (2, None, False),
                                                        (None, 3, None), (None, None, None)])
def test_count_exact(label, predicted, expected):
    assert count_exact(label, predicted) is expected
