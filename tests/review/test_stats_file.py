"""candor_eval/review/stats_file.py: ``metrics/stats.json``'s one writer (:meth:`StatsFile.as_json`) and
reader (:meth:`StatsFile.from_json`): the round trip keeps every field, keys are sorted within each
section, and a document of another shape is an InputError naming the file."""
from __future__ import annotations

import json

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.stats_file import Comparisons, StatsFile
from candor_eval.stats.paired import compare_paired
from candor_eval.stats.rates import wilson


def small_stats() -> StatsFile:
    """Two lots tracks, one rate, one paired metric in a family and one single test, inputs out of order."""
    a = {("L1",): True, ("L2",): True, ("L3",): False, ("L4",): False}
    b = {("L1",): True, ("L2",): False, ("L3",): True, ("L4",): True}
    hit = compare_paired(a, b, unit="lot", alpha=0.05, confidence=0.95)
    return StatsFile(
        confidence=0.95, alpha=0.05, min_k0=6,
        reference={"identification": "prompt-a", "detection.detector": "demo-v1"},
        inputs={"metrics/outcomes/valuation.csv": "absent", "metrics/outcomes/identification.csv": "present"},
        rates={"z.rate": wilson(3, 4, unit="lot"), "a.rate": wilson(0, 0, unit="lot")},
        paired={"identification.hit": Comparisons("prompt-a", {"prompt-b": hit}),
                "identification.tier1.hit": Comparisons("prompt-a", {"prompt-b": hit.adjusted(0.5)},
                                                        family="identification.tiers")},
        cluster={"fields": "case", "detection.detector": "frame"},
        benches={"detection.detector": {"cluster": "frame", "splits": {"test": {"frames": 3, "sessions": {}}}}})


def test_the_stored_form_round_trips():
    """``from_json(as_json(s))`` writes the same document again, through real JSON text."""
    doc = small_stats().as_json()
    back = StatsFile.from_json(json.loads(json.dumps(doc)), where="stats.json")
    assert back.as_json() == doc
    assert (back.confidence, back.alpha, back.min_k0) == (0.95, 0.05, 6)
    assert back.paired["identification.tier1.hit"].family == "identification.tiers"
    assert back.paired["identification.hit"].family is None
    assert back.paired["identification.tier1.hit"].candidates["prompt-b"].p_holm == 0.5
    r = back.rates["z.rate"]
    assert (r.k, r.n, r.unit, r.rate) == (3, 4, "lot", 0.75)
    assert back.rates["a.rate"].rate is None                  # 0 of 0: no rate, kept as null


def test_the_stored_form_has_the_documented_keys_sorted_within_each_section():
    """Top-level keys as documented; ``reference``, ``inputs``, ``cluster``, ``rates`` and ``paired``
    sorted by key (equal results, equal bytes)."""
    doc = small_stats().as_json()
    assert list(doc) == ["confidence", "alpha", "min_k0", "reference", "inputs", "cluster", "benches", "rates",
                         "paired", "power", "precision"]
    assert list(doc["reference"]) == ["detection.detector", "identification"]
    assert list(doc["inputs"]) == ["metrics/outcomes/identification.csv", "metrics/outcomes/valuation.csv"]
    assert list(doc["cluster"]) == ["detection.detector", "fields"]
    assert list(doc["rates"]) == ["a.rate", "z.rate"]
    assert list(doc["paired"]) == ["identification.hit", "identification.tier1.hit"]
    hit = doc["paired"]["identification.hit"]
    assert (hit["reference"], hit["family"], list(hit["candidates"])) == ("prompt-a", None, ["prompt-b"])
    # by hand: A hits L1, L2; B hits L1, L3, L4: discordant 1-2 lots, exact McNemar p = 1
    p = hit["candidates"]["prompt-b"]
    assert (p["a_only"], p["b_only"], p["n"], p["p"]) == (1, 2, 4, 1.0)


def test_min_k0_may_be_null():
    """``min_k0`` is ``null`` when no split of the clusters could reach alpha."""
    doc = dict(small_stats().as_json(), min_k0=None)
    assert StatsFile.from_json(doc, where="stats.json").min_k0 is None


def test_absent_lists_the_inputs_that_were_absent():
    """``absent``: the inputs whose state is ``absent`` (their track is not measured)."""
    s = StatsFile.from_json(small_stats().as_json(), where="stats.json")
    assert s.absent == ["metrics/outcomes/valuation.csv"]
    both = StatsFile(confidence=0.95, alpha=0.05, min_k0=None, reference={}, rates={}, paired={},
                     inputs={"a.csv": "absent", "b.csv": "present", "c.csv": "absent"})
    assert both.absent == ["a.csv", "c.csv"]


def without(doc: dict, key: str) -> dict:
    return {k: v for k, v in doc.items() if k != key}


GOOD = small_stats().as_json()


@pytest.mark.parametrize("doc", [
    [],                                                       # not a mapping
    None,
    without(GOOD, "rates"),                                   # a section missing
    without(GOOD, "cluster"),
    without(GOOD, "min_k0"),
    dict(GOOD, inputs={"x.csv": "missing"}),                  # a state other than present/absent
    dict(GOOD, confidence="high"),
    dict(GOOD, min_k0="six"),
    dict(GOOD, paired={"identification.hit": {"reference": "prompt-a", "candidates": {}}}),   # no family
    dict(GOOD, rates=[1, 2]),
])
def test_a_document_of_another_shape_names_the_file(doc):
    """A malformed stats file is one InputError naming the file: "not a stats file", and the fix."""
    with pytest.raises(InputError) as info:
        StatsFile.from_json(doc, where="metrics/stats.json")
    (problem,) = info.value.problems
    assert (problem.where, problem.what) == ("metrics/stats.json", "not a stats file (written by the stats stage)")
    assert info.value.hint == "regenerate it with its stage (dvc repro)"


def test_a_malformed_record_inside_names_its_key():
    """A bad rate or paired record is named by its key within the file."""
    rates = dict(GOOD["rates"], **{"z.rate": without(GOOD["rates"]["z.rate"], "k")})
    with pytest.raises(InputError, match=r"^metrics/stats.json:rates.z.rate: not a rate"):
        StatsFile.from_json(dict(GOOD, rates=rates), where="metrics/stats.json")
    paired = json.loads(json.dumps(GOOD["paired"]))
    paired["identification.hit"]["candidates"]["prompt-b"]["verdict"] = "B much better"
    with pytest.raises(InputError, match=r"^metrics/stats.json:paired.identification.hit.prompt-b: not a paired"):
        StatsFile.from_json(dict(GOOD, paired=paired), where="metrics/stats.json")
