"""Tests for stages/figures.py on the tiny workspace of tests/stages/test_score_detection.py: one PNG
per comparison of every set's models and the forest plots, outside the pipeline, in a folder it owns;
per-class F1 intervals come from the stats stage's rates."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from candor_eval.common.errors import run_main
from candor_eval.review.forest import forest_rows
from candor_eval.review.stats_file import Comparisons, StatsFile
from candor_eval.stages import figures
from candor_eval.stats.paired import compare_paired
from tests.stages.test_score_detection import make_repo


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return make_repo(tmp_path)


def test_figures_renders_every_model_and_the_forest_outside_the_pipeline(repo):
    paired = compare_paired({("c1",): True, ("c2",): False}, {("c1",): True, ("c2",): True}, unit="lot",
                            alpha=0.05, confidence=0.95)
    metric = "detection.detector.test.label_found"
    stats = StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={"detection.detector": "a"}, inputs={}, rates={},
                      paired={metric: Comparisons("a", {"b": paired}),
                              "detection.detector.test.class.deer.label_found": Comparisons("a", {"b": paired})})
    assert [tuple(r[:5]) + (r.verdict,) for r in forest_rows(stats, "detection.detector")] == [
        (metric, "a", 0.5, paired.a.lo, paired.a.hi, None),
        (metric, "b", 1.0, paired.b.lo, paired.b.hi, "no detectable difference")]
    Path("stats.json").write_text(json.dumps(stats.as_json()))
    Path("plots/figures").mkdir(parents=True)
    Path("plots/figures/stale.png").write_bytes(b"old")
    argv = ["--params", "params.yaml", "--stats", "stats.json", "--out", "plots/figures"]
    assert run_main(figures.main, argv) == 0
    first = {p.relative_to("plots/figures").as_posix(): p.read_bytes() for p in Path("plots/figures").rglob("*.png")}
    assert sorted(first) == ["detector/compare-confusion.png", "detector/compare-f1.png",
                             "detector/compare-per_class.png", "detector/compare-pr.png",
                             "forest-detection.detector.png"]
    assert all(b.startswith(b"\x89PNG") and b"Software" not in b and b"matplotlib" not in b for b in first.values())
    assert run_main(figures.main, argv) == 0
    again = {p.relative_to("plots/figures").as_posix(): p.read_bytes() for p in Path("plots/figures").rglob("*.png")}
    assert again == first                                      # same build: same bytes; the stale file is gone


def test_class_f1_intervals_come_from_the_stats_rates():
    from candor_eval.stats.rates import Rate
    rate = Rate.from_json({"k": 2, "n": 4, "unit": "label+detection", "estimate": "rate", "cluster": "frame",
                           "clusters": 2, "deff": 1.0, "rate": 0.5, "lo": 0.1, "hi": 0.9}, where="t")
    none = Rate.from_json({"k": 0, "n": 0, "unit": "label+detection", "estimate": "rate", "cluster": "frame",
                           "clusters": 0, "deff": 1.0, "rate": None, "lo": None, "hi": None}, where="t")
    stats = StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={}, inputs={}, paired={},
                      rates={"detection.s.m.test.per_class.cat.f1": rate, "detection.s.m.test.per_class.dog.f1": none,
                             "detection.s.m.dev.per_class.cow.f1": rate})
    assert figures.class_f1_intervals(stats, set_name="s", model="m", classes=["cat", "dog", "cow"]) == {
        "cat": (0.5, 0.1, 0.9), "dog": None, "cow": None}


def test_figures_need_the_stats_file_and_a_set_for_data(repo, capsys):
    """No stats file: exit 2 naming it; --data without --set: which set is ambiguous, exit 2; nothing written."""
    assert run_main(figures.main, ["--stats", "missing.json", "--out", "plots/figures"]) == 2
    assert "missing.json: file not found" in capsys.readouterr().err
    Path("stats.json").write_text(json.dumps(StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={},
                                                       inputs={}, rates={}, paired={}).as_json()))
    assert run_main(figures.main, ["--stats", "stats.json", "--data", "data/detector", "--out", "plots/figures"]) == 2
    assert "--data/--detections: name the set they belong to" in capsys.readouterr().err
    assert not Path("plots/figures").exists()
