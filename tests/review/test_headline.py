"""candor_eval/review/headline.py: ``metrics/headline.json``, each number taken as it is from the file
that counts it (never recomputed), ``null`` where its source is absent, the paired p-values and
verdict only for a candidate against its reference."""
from __future__ import annotations

import dataclasses

import pytest

from candor_eval.review.gate_result import Criterion, GateResult
from candor_eval.review.headline import P_VALUES, detection_headline, dig, headline, lots_headline, paired_p, versus
from candor_eval.review.stats_file import Comparisons, StatsFile
from candor_eval.stats.paired import Paired, compare_paired


def sign_test(b_wins: int, a_wins: int = 0, ties: int = 2) -> Paired:
    """A paired outcome comparison on lots: B alone succeeds on ``b_wins``, A alone on ``a_wins``,
    both on ``ties``; the exact McNemar p is then 2 * P(Bin(b_wins + a_wins, 1/2) <= min)."""
    a = {(f"t{i}",): True for i in range(ties)} | {(f"b{i}",): False for i in range(b_wins)} \
        | {(f"a{i}",): True for i in range(a_wins)}
    b = {(f"t{i}",): True for i in range(ties)} | {(f"b{i}",): True for i in range(b_wins)} \
        | {(f"a{i}",): False for i in range(a_wins)}
    return compare_paired(a, b, unit="lot", alpha=0.05, confidence=0.95)


def stats_of(paired: dict[str, dict[str, Paired]], reference: str = "ref",
             precision: dict | None = None) -> StatsFile:
    return StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={}, inputs={}, rates={},
                     paired={m: Comparisons(reference, c) for m, c in paired.items()}, precision=precision or {})


def test_sign_test_helper_gives_the_hand_computed_p():
    """The helper's p by hand: 6-0 is 2/64 = 0.03125 (B better), 5-0 is 2/32 = 0.0625, 0-6 B worse."""
    assert (sign_test(6).p, sign_test(6).verdict) == (0.03125, "B better")
    assert (sign_test(5).p, sign_test(5).verdict) == (0.0625, "no detectable difference")
    assert (sign_test(0, 6).p, sign_test(0, 6).verdict) == (0.03125, "B worse")


@pytest.mark.parametrize("doc,path,expected", [
    ({"a": {"b": 2}}, ("a", "b"), 2),
    ({"a": {"b": None}}, ("a", "b"), None),
    ({"a": 1}, ("a", "b"), None),              # a step that is not a mapping
    ({"a": [1, 2]}, ("a", "0"), None),         # nor is a list
    ({}, ("a",), None),
    (None, ("a",), None),                      # an absent document
    ({"a": {"b": {"c": 0.0}}}, ("a", "b", "c"), 0.0),
    ({"a": 3}, (), {"a": 3}),                  # no path: the document itself
])
def test_dig(doc, path, expected):
    """``dig(doc, *path)``: ``doc[p0][p1]...``, or ``None`` where a step is missing or not a mapping."""
    assert dig(doc, *path) == expected


def test_paired_p_is_null_when_not_compared():
    """The candidate's p for a metric; ``None`` for a metric or a candidate not compared."""
    stats = stats_of({"identification.hit": {"b": sign_test(5)}})
    assert paired_p(stats, "identification.hit", "b") == 0.0625
    assert paired_p(stats, "identification.hit", "c") is None
    assert paired_p(stats, "valuation.in_band", "b") is None


def test_versus_is_empty_for_the_reference_and_reads_the_verdict_of_one_metric():
    """The reference gets no ``p_*`` nor ``verdict``; a candidate gets each named p and the verdict
    of ``verdict_of`` (``None`` where that metric was not compared)."""
    stats = stats_of({"m.hit": {"b": sign_test(6)}, "m.other": {"b": sign_test(5)}})
    assert versus(stats, "ref", "ref", p={"p_hit": "m.hit"}, verdict_of="m.hit") == {}
    assert versus(stats, "b", "ref", p={"p_hit": "m.hit", "p_other": "m.other", "p_none": "m.none"},
                  verdict_of="m.hit") == {"p_hit": 0.03125, "p_other": 0.0625, "p_none": None, "verdict": "B better"}
    assert versus(stats, "b", "ref", p={}, verdict_of="m.other") == {"verdict": "no detectable difference"}
    assert versus(stats, "c", "ref", p={"p_hit": "m.hit"}, verdict_of="m.hit") == {"p_hit": None, "verdict": None}


DEV_OF_DOC = {"precision": 0.0, "recall": None, "f1": None, "fp_per_frame": None}      # detection_doc's dev block


def detection_doc(precision, recall, f1, fp_per_frame, wrong) -> dict:
    return {"test": {"micro": {"precision": precision, "recall": recall, "f1": f1, "fp_per_frame": fp_per_frame,
                               "tp": 99}, "critical": {"total": {"wrong": wrong, "missed": 7}}},
            "dev": {"micro": {"precision": 0.0}}}


def test_detection_headline_takes_the_test_split_numbers_and_the_paired_p_against_the_first_model():
    """Per model of a set: micro P, R, F1, FP/frame and wrong targets of ``test`` as its metrics
    file has them; the set's first model is the reference; a model without a metrics file is null."""
    track = "detection.detector"
    stats = stats_of({f"{track}.test.label_found": {"v2": sign_test(6), "v3": sign_test(0, 6)},
                      f"{track}.test.frame_error_free": {"v2": sign_test(5)},
                      f"{track}.test.false_positives": {"v2": sign_test(1, 1)}}, reference="v1",
                     precision={f"{track}.test.precision": {"reference": "v1", "candidates": {"v2": {"p": 0.25}}}})
    docs = {f"{track}.v1": ("v1.json", detection_doc(0.5, 0.6, 0.545455, 1.25, 3)),
            f"{track}.v2": ("v2.json", detection_doc(0.75, 0.6, 0.666667, 0.5, 0))}
    out = detection_headline(stats, docs, {"detector": ["v1", "v2", "v3"]})
    assert list(out) == ["detector"] and list(out["detector"]) == ["v1", "v2", "v3"]
    assert out["detector"]["v1"] == {"precision": 0.5, "recall": 0.6, "f1": 0.545455, "fp_per_frame": 1.25,
                                     "wrong_targets": 3, "dev": DEV_OF_DOC}
    # 1-1 discordant lots: p = 1
    assert out["detector"]["v2"] == {"precision": 0.75, "recall": 0.6, "f1": 0.666667, "fp_per_frame": 0.5,
                                     "wrong_targets": 0, "dev": DEV_OF_DOC,
                                     "p_label_found": 0.03125, "p_frame_error_free": 0.0625,
                                     "p_false_positives": 1.0, "verdict": "B better", "p_precision": 0.25}
    assert out["detector"]["v3"] == {"precision": None, "recall": None, "f1": None, "fp_per_frame": None,
                                     "wrong_targets": None, "dev": dict.fromkeys(DEV_OF_DOC),
                                     "p_label_found": 0.03125, "p_frame_error_free": None,
                                     "p_false_positives": None, "verdict": "B worse", "p_precision": None}


def test_each_detection_set_has_its_own_reference():
    """Two sets: each set's first model is its reference, and a model's p comes from its own set's metrics."""
    stats = stats_of({"detection.night.test.label_found": {"n1": sign_test(5)}})
    out = detection_headline(stats, {}, {"day": ["d0"], "night": ["n0", "n1"]})
    assert "p_label_found" not in out["day"]["d0"] and "p_label_found" not in out["night"]["n0"]
    assert out["night"]["n1"]["p_label_found"] == 0.0625 and out["night"]["n1"]["verdict"] == "no detectable difference"


def lots_docs() -> dict:
    ident = {"identification": {"a": {"all": {"hit_rate": 0.5, "wrong_rate": 0.25, "hedged_rate": 0.125},
                                      "count": {"all": {"exact_rate": 0.75}}},
                                "b": {"all": {"hit_rate": 0.625, "wrong_rate": 0.125}}}}
    return {"identification": ("identification.json", ident),
            "fields.a": ("fields/a.json", {"overall": 0.8, "fields_met": {"rate": 0.6, "k": 3, "n": 5}}),
            "valuation": ("valuation.json", {"a": {"in_band_rate": 0.4, "median_ratio": 1.05, "worst_error": 2.5},
                                             "b": {"in_band_rate": 0.5}})}


def test_lots_headline_takes_each_number_from_its_file_and_null_where_absent():
    """Per candidate: identification rates, the exact-count rate, the fields score and met rate, and
    the valuation figures; the reference gets no p; a candidate gets p_hit, p_not_wrong, p_fields,
    p_in_band and the verdict of ``identification.hit``."""
    stats = stats_of({"identification.hit": {"b": sign_test(5)}, "identification.not_wrong": {"b": sign_test(6)},
                      "valuation.in_band": {"b": sign_test(1, 1)}}, reference="a")
    out = lots_headline(stats, lots_docs(), ["a", "b"], "a")
    assert out["a"] == {"hit_rate": 0.5, "wrong_rate": 0.25, "hedged_rate": 0.125, "count_exact_rate": 0.75,
                        "fields_score": 0.8, "fields_met_rate": 0.6, "in_band_rate": 0.4, "median_ratio": 1.05,
                        "worst_error": 2.5}
    assert out["b"] == {"hit_rate": 0.625, "wrong_rate": 0.125, "hedged_rate": None, "count_exact_rate": None,
                        "fields_score": None, "fields_met_rate": None, "in_band_rate": 0.5, "median_ratio": None,
                        "worst_error": None, "p_hit": 0.0625, "p_not_wrong": 0.03125, "p_fields": None,
                        "p_in_band": 1.0, "verdict": "no detectable difference"}


def test_lots_headline_without_any_file_is_all_null():
    """No metrics at all: every number ``null``, and no p without a stats comparison."""
    out = lots_headline(stats_of({}), {}, ["a", "b"], "a")
    assert set(out["a"].values()) == {None} and len(out["a"]) == 9
    assert set(out["b"].values()) == {None} and len(out["b"]) == 14


def gate_result(*statuses: str) -> GateResult:
    return GateResult(set="detector", reference="v1", candidate="v2", split="dev", alpha=0.05, critical=(),
                      min_support=10, criteria={f"c{i}": Criterion(status=s) for i, s in enumerate(statuses)},
                      per_class={}, params_file="params.yaml")


@pytest.mark.parametrize("statuses,verdict,pending", [
    (("pass", "waived"), "PASSED", []), (("pass", "not evaluated"), "NOT EVALUATED", ["c1"]),
    (("fail", "not evaluated"), "FAILED", ["c1"])])
def test_headline_gate_block(statuses, verdict, pending):
    """``gate``: the declared set, reference, candidate and split, and whether it passed (a criterion
    not evaluated is no pass); ``null`` without a gate result."""
    doc = headline(stats_of({}), gate_result(*statuses), {}, sets={"detector": []}, candidates=[], reference="a")
    assert doc == {"detection": {}, "lots": {}, "gate": {"set": "detector", "reference": "v1", "candidate": "v2",
                                                         "split": "dev", "verdict": verdict,
                                                         "passed": verdict == "PASSED", "pending": pending},
                   "cluster": {"detection.detector": "frame", "identification": "lot", "fields": "case",
                               "valuation": "lot"}, "p_values": P_VALUES}
    assert headline(stats_of({}), None, {}, sets={"detector": []}, candidates=[], reference="a")["gate"] is None


def test_a_project_of_one_track_has_only_its_own_blocks():
    """Detector only (no lots reference): no ``lots`` key; lots only (no detection set, no gate): no
    ``detection`` or ``gate`` key."""
    det = headline(stats_of({}), None, {}, sets={"birds": ["v1"]}, candidates=[], reference=None)
    assert list(det) == ["detection", "gate", "cluster", "p_values"] and det["gate"] is None
    lots = headline(stats_of({}), None, lots_docs(), sets={}, candidates=["a"], reference="a")
    assert list(lots) == ["lots", "cluster", "p_values"] and lots["lots"]["a"]["hit_rate"] == 0.5


def test_headline_holds_the_three_blocks():
    """The whole document: ``detection`` by set and model, ``lots`` by candidate, ``gate``."""
    doc = headline(stats_of({}), None, lots_docs(), sets={"detector": ["v1"]}, candidates=["a"], reference="a")
    assert list(doc) == ["detection", "lots", "gate", "cluster", "p_values"]
    assert list(doc["detection"]["detector"]) == ["v1"] and doc["lots"]["a"]["hit_rate"] == 0.5


def test_the_headline_names_its_clusters_and_what_its_p_values_are():
    """By session the p-values change: the headline says which clustering they were computed over, and
    that they are single unadjusted tests (the adjustment named)."""
    st = stats_of({})
    st = dataclasses.replace(st, cluster={"detection.night": "session", "detection.day": "frame"})
    doc = headline(st, None, {}, sets={"night": [], "day": []}, candidates=[], reference=None)
    assert doc["cluster"] == {"detection.night": "session", "detection.day": "frame"}
    assert "unadjusted" in doc["p_values"] and "Holm" in doc["p_values"] and "sign-flip" in doc["p_values"]
