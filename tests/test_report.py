"""The report: stages/report.py over candor/stats/report.py, reading stats.json and gate.json through their types."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from candor.common.errors import InputError
from stages import gate as gate_stage
from stages import report
from stages import stats as stats_stage
from tests.test_gate import DATA, write_gate_inputs


def stats_file(tmp_path: Path) -> Path:
    (tmp_path / "p.yaml").write_text("stats: {}\n")
    stats = tmp_path / "stats.json"
    stats_stage.main(["run", "--outcomes", str(DATA / "outcomes"), "--metrics", str(DATA / "metrics" / "detection"),
                      "--metrics-root", str(DATA / "metrics"), "--params", str(tmp_path / "p.yaml"),
                      "--out", str(stats)])
    return stats


def test_report_is_deterministic_and_links_the_forest_figure(tmp_path):
    stats = stats_file(tmp_path)
    gate_stage.main(write_gate_inputs(tmp_path, cand_wrong=1))
    args = ["--stats", str(stats), "--gate", str(tmp_path / "gate.json"),
            "--out", str(tmp_path / "r" / "report.md"), "--forest", str(tmp_path / "figures" / "forest.png")]
    report.main(args)
    md = (tmp_path / "r" / "report.md").read_bytes()
    report.main(args)
    assert (tmp_path / "r" / "report.md").read_bytes() == md
    assert sorted(p.name for p in tmp_path.rglob("*.png")) == []        # the report stage draws nothing
    text = md.decode()
    assert "![rates with intervals per candidate](../figures/forest.png)" in text
    assert ("| identification.hit | prompt-a | prompt-b | 0.500 [0.150, 0.850] | 0.750 [0.301, 0.954] | 4 | lot | "
            "1 | 2 | 1 |") in text
    assert "| detection.demo-v1.test.micro.recall | 3 / 5 | label | 0.600 [0.231, 0.882] |" in text
    assert "**PASSED**" in text
    assert "**Not measured** (input absent)" in text




def test_report_refuses_a_stats_file_of_another_shape(tmp_path):
    stats = stats_file(tmp_path)
    doc = json.loads(stats.read_text())
    doc["paired"] = {"m": {"prompt-b": {"reference": "prompt-a"}}}      # the old shape
    stats.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="stats.json: not a stats file"):
        report.main(["--stats", str(stats), "--gate", "", "--out", str(tmp_path / "r.md")])
