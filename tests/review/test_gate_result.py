"""candor_eval/review/gate_result.py: the verdict follows from the criteria, and gate.json reads back as written."""
from __future__ import annotations

from typing import cast

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.gate_result import Criterion, GateResult, Status


def gate(**statuses: str) -> GateResult:
    return GateResult(set="s", reference="a", candidate="b", split="test", alpha=0.05, critical=(), min_support=10,
                      criteria={n: Criterion(status=cast(Status, s)) for n, s in statuses.items()},
                      per_class={}, params_file="params.yaml")


@pytest.mark.parametrize("statuses,verdict,failed,pending", [
    ({"x": "pass", "y": "waived"}, "PASSED", [], []),
    ({"x": "pass", "y": "not evaluated"}, "NOT EVALUATED", [], ["y"]),
    ({"x": "fail", "y": "not evaluated"}, "FAILED", ["x"], ["y"]),
    ({"same_frames_and_labels": "pass", "x": "waived"}, "NOT EVALUATED", [], []),    # nothing was checked
    ({"x": "waived"}, "NOT EVALUATED", [], []),
])
def test_the_verdict_follows_from_the_criteria(statuses, verdict, failed, pending):
    g = gate(**statuses)
    assert (g.verdict, g.failed, g.pending, g.passed) == (verdict, failed, pending, verdict == "PASSED")


def test_gate_json_reads_back_as_written_and_anything_else_is_named():
    g = gate(x="pass", y="not evaluated")
    doc = g.as_json()
    assert doc["verdict"] == "NOT EVALUATED" and GateResult.from_json(doc, where="gate.json").as_json() == doc
    with pytest.raises(InputError, match="gate.json: not a gate result"):
        GateResult.from_json(doc | {"criteria": {"x": {"status": "maybe"}}}, where="gate.json")
