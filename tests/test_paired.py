"""candor/stats/paired.py: the paired comparison, by hand, and its one JSON shape."""
from __future__ import annotations

import pytest

from candor.common.errors import InputError
from candor.stats.paired import Paired, compare_paired, verdict


@pytest.mark.parametrize("a_only,b_only,expected", [
    (0, 6, "B better"), (6, 0, "B worse"), (0, 3, "no detectable difference"),
    (1, 5, "no detectable difference"), (0, 0, "no detectable difference"), (2, 12, "B better"),
])
def test_verdict(a_only, b_only, expected):
    assert verdict(a_only, b_only, alpha=0.05) == expected


def test_compare_paired_counts_and_only_in():
    a = {("l1",): True, ("l2",): True, ("l3",): False, ("l4",): False, ("l5",): True}
    b = {("l1",): True, ("l2",): False, ("l3",): True, ("l4",): False, ("l6",): True}
    r = compare_paired(a, b, unit="lot", alpha=0.05, confidence=0.95)
    assert (r.n, r.a_only, r.b_only) == (4, 1, 1)
    assert (r.a.k, r.b.k, r.a.unit) == (2, 2, "lot")
    assert r.p == 1.0
    assert r.only_in_a == ("l5",) and r.only_in_b == ("l6",)
    assert r.min_k0 is None  # 4 cases can never reach 0.05
    assert "even a 4-0 split" in r.explanation


def test_compare_paired_explanation_names_what_could_be_seen():
    a = {(f"l{i}",): True for i in range(17)}
    b = dict(a) | {("l0",): False, ("l1",): False, ("l2",): False}
    r = compare_paired(a, b, unit="lot", alpha=0.05, confidence=0.95)
    assert (r.a_only, r.b_only, r.p) == (3, 0, 0.25)
    assert r.explanation == ("no detectable difference (could not have seen less than a "
                             "6-0 split: 6 of 17 cases, 35 percentage points)")




def test_paired_json_is_one_shape_and_reads_back():
    a = {("f1", "0"): True, ("f1", "1"): True, ("f2", "0"): False}
    b = {("f1", "0"): False, ("f1", "1"): True, ("f2", "0"): True, ("f3", "0"): True}
    r = compare_paired(a, b, unit="label", alpha=0.05, confidence=0.95)
    doc = r.as_json()
    assert list(doc) == ["a", "b", "a_only", "b_only", "p", "alpha", "min_k0", "verdict", "explanation",
                         "only_in_a", "only_in_b"]
    assert (doc["a_only"], doc["b_only"], doc["p"], doc["only_in_b"]) == (1, 1, 1.0, ["f3/0"])
    assert (doc["a"]["k"], doc["a"]["n"], doc["a"]["unit"], doc["b"]["k"]) == (2, 3, "label", 2)
    back = Paired.from_json(doc, where="s.json")
    assert back.as_json() == doc
    with pytest.raises(InputError, match="s.json: not a paired comparison"):
        Paired.from_json(doc | {"verdict": "maybe"}, where="s.json")
