"""Tests for candor_eval/common/counts.py: the k-of-n record scorers write next to their rates."""
from __future__ import annotations

import pytest

from candor_eval.common.counts import Count, counts_block, read_counts
from candor_eval.common.errors import InputError


def test_block_round_trips_in_key_order():
    block = counts_block({"b.recall": Count(3, 4, "label"), "a.hit": Count(0, 0, "lot")})
    assert list(block) == ["b.recall", "a.hit"] and block["b.recall"] == {"k": 3, "n": 4, "unit": "label"}
    assert read_counts({"counts": block, "b": {}}, where="m.json") == {"b.recall": Count(3, 4, "label"),
                                                                      "a.hit": Count(0, 0, "lot")}
    assert read_counts({"b": 1}, where="m.json") == {}


@pytest.mark.parametrize("k, n, unit", [(5, 4, "lot"), (-1, 4, "lot"), (1, 4, "")])
def test_impossible_counts_are_refused(k, n, unit):
    with pytest.raises(ValueError):
        Count(k, n, unit)


@pytest.mark.parametrize("entry", [{"k": 5, "n": 4, "unit": "lot"}, {"k": 1.0, "n": 4, "unit": "lot"},
                                   {"k": True, "n": 4, "unit": "lot"}, {"k": 1, "n": 4}, [1, 4]])
def test_a_bad_entry_names_file_and_key(entry):
    with pytest.raises(InputError, match=r"m.json:counts.x.hit: bad count"):
        read_counts({"counts": {"x.hit": entry}}, where="m.json")


@pytest.mark.parametrize("n", [2 ** 53, 10 ** 30, 2.0, "4", True, None])
def test_a_count_beyond_2_53_or_not_an_integer_is_refused(n):
    with pytest.raises(InputError, match="m.json:counts.r"):
        read_counts({"counts": {"r": {"k": 1, "n": n, "unit": "lot"}}}, where="m.json")


def test_cluster_sums_round_trip_and_a_mean():
    from candor_eval.common.counts import Clusters, clusters_of
    c = Count(3, 5, "label", clusters_of([(2, 3), (1, 2), (0, 0)], name="frame"))
    assert c.clusters == Clusters("frame", 2, 5, 8, 13)
    doc = counts_block({"r": c, "m": Count(9, 2, "frame", clusters_of([(4, 1), (5, 1)], name="frame"),
                                           estimate="mean")})
    assert doc["r"] == {"k": 3, "n": 5, "unit": "label", "cluster": "frame", "clusters": 2, "sum_k2": 5,
                        "sum_kn": 8, "sum_n2": 13}
    assert doc["m"]["estimate"] == "mean"
    mean = Count(9, 2, "frame", Clusters("frame", 2, 41, 9, 2), estimate="mean")
    assert read_counts({"counts": doc}, where="m.json") == {"r": c, "m": mean}


@pytest.mark.parametrize("sums", [
    {"clusters": 3},                      # more clusters than units
    {"sum_k2": 2},                        # below k
    {"sum_n2": 4},                        # below n
    {"sum_kn": 14},                       # k_g > n_g somewhere
    {"cluster": ""},
])
def test_cluster_sums_no_clustering_could_give_are_refused(sums):
    entry = {"k": 3, "n": 5, "unit": "label", "cluster": "frame", "clusters": 2, "sum_k2": 5, "sum_kn": 8,
             "sum_n2": 13} | sums
    entry["n"] = 2 if "clusters" in sums else entry["n"]
    with pytest.raises(InputError, match=r"m.json:counts.r: bad count"):
        read_counts({"counts": {"r": entry}}, where="m.json")


def test_a_mean_needs_its_cluster_sums():
    with pytest.raises(ValueError):
        Count(9, 2, "frame", estimate="mean")
