"""What the runs buy (:mod:`candor_eval.review.runs`): majority, per-run hits, unanimous and split-vote pairs
of a per-field bench, counted by hand."""
from __future__ import annotations

from candor_eval.review.runs import Consistency, consistency, consistency_lines


def f(hits: int, total: int) -> dict:
    return {"field": "item.itemType", "hits": hits, "total": total}


# 5 runs per case: 5/5 (met, unanimous), 3/5 (met, split), 0/5 (unanimous miss), 2/4 (a tie: not met, split),
# and 0/0 (every run failed: not scored)
DOC = {"cases": {"a": {"runs": 5, "fields": [f(5, 5), f(3, 5)]},
                 "b": {"runs": 5, "fields": [f(0, 5), f(2, 4), f(0, 0)]}}}


def test_five_runs_per_case_by_hand():
    assert consistency(DOC) == Consistency(runs=(5,), pairs=4, met=2, hits=10, answered=19, unanimous=2,
                                           split_met=1)


def test_3_of_5_and_5_of_5_are_one_met_each_and_only_the_table_tells_them_apart():
    five = consistency({"cases": {"a": {"runs": 5, "fields": [f(5, 5)]}}})
    three = consistency({"cases": {"a": {"runs": 5, "fields": [f(3, 5)]}}})
    assert five.met == three.met == 1
    assert (five.unanimous, five.split_met, five.hits) == (1, 0, 5)
    assert (three.unanimous, three.split_met, three.hits) == (0, 1, 3)


def test_the_report_section_has_one_row_per_candidate_with_fields():
    docs = {"fields.p": ("metrics/fields/p.json", DOC)}
    lines = consistency_lines(docs, ["p", "q"], escape=lambda s: s.upper())
    assert lines[0] == "## What the runs buy (per-field bench)" and "3 of 5 and 5 of 5 are both one" in lines[2]
    assert lines[-2] == "| P | 5 | 2/4 = 0.500 | 10/19 = 0.526 | 2/4 = 0.500 | 1/4 = 0.250 |"
    assert not any(x.startswith("| Q") for x in lines)
    assert consistency_lines({}, ["p"]) == []
