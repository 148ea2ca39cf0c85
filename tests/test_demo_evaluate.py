"""tools/demo/evaluate.py composes the pipeline's kernels; on the committed demo it reproduces the
figures quoted in tools/demo/README.md (the issue's bar: reference micro F1 in [0.55, 0.95] at 0.35)."""
from __future__ import annotations

from tests.conftest import ROOT
from tools.demo.evaluate import evaluate


def test_reference_at_035_reproduces_the_readme_figures():
    res = evaluate(ROOT / "models" / "demo-v1.yaml", ROOT / "data" / "detector", threshold=0.35)
    micro = res["all"]["micro"]
    assert (micro["tp"], micro["fp"], micro["fn"]) == (620, 388, 591)
    assert 0.55 <= micro["f1"] <= 0.95
    assert set(res) == {"all", "dev", "test"}
    assert res["dev"]["micro"]["tp"] + res["test"]["micro"]["tp"] == micro["tp"]
    assert sum(c["support"] for c in res["all"]["per_class"].values()) == 1211
