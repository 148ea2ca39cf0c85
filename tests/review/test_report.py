"""The report: the stats stage's --report (stages/stats.py) over candor_eval/review/report.py, reading the stats and
the gate through their types."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.report import review
from candor_eval.review.stats_file import StatsFile
from candor_eval.stages import stats as stats_stage
from tests.review.test_gate import DATA, write_gate_inputs


def stats_file(tmp_path: Path) -> Path:
    (tmp_path / "p.yaml").write_text("stats: {}\ndetector: {sets: {detector: [demo-v1, demo-v2]}}\n")
    stats = tmp_path / "stats.json"
    stats_stage.main(["run", "--outcomes", str(DATA / "outcomes"), "--metrics", str(DATA / "metrics" / "detection"),
                      str(DATA / "metrics" / "identification.json"),
                      "--metrics-root", str(DATA / "metrics"), "--params", str(tmp_path / "p.yaml"),
                      "--out", str(stats)])
    return stats


def run_report(tmp_path: Path) -> list[str]:
    """The stats stage with the gate and the report, on the gate's fixture (tests/review/test_gate.py)."""
    gate_args = write_gate_inputs(tmp_path, cand_wrong=1)
    at = {k: gate_args[gate_args.index(k) + 1] for k in ("--detection", "--models", "--params")}
    args = ["run", "--outcomes", str(DATA / "outcomes"), "--metrics", str(DATA / "metrics" / "detection"),
            str(DATA / "metrics" / "identification.json"), "--metrics-root", str(DATA / "metrics"),
            "--params", at["--params"], "--out", str(tmp_path / "stats.json"), "--gate", str(tmp_path / "gate.json"),
            "--detection", at["--detection"], "--models", at["--models"],
            "--headline", str(tmp_path / "headline.json"), "--report", str(tmp_path / "r" / "report.md"),
            "--forest", str(tmp_path / "figures")]
    assert stats_stage.main(args) == 0
    return args


def test_report_is_deterministic_summary_first_with_details_per_candidate(tmp_path):
    args = run_report(tmp_path)
    md = (tmp_path / "r" / "report.md").read_bytes()
    details = {p.name: p.read_bytes() for p in (tmp_path / "r" / "details").iterdir()}
    (tmp_path / "r" / "details" / "stale.md").write_text("old")
    stats_stage.main(args)
    assert (tmp_path / "r" / "report.md").read_bytes() == md
    assert {p.name: p.read_bytes() for p in (tmp_path / "r" / "details").iterdir()} == details  # stale one gone
    assert sorted(p.name for p in tmp_path.rglob("*.png")) == []        # the stats stage draws nothing
    text = md.decode()
    assert (text.index("**Release gate: NOT EVALUATED**") < text.index("**The answer per track**")
            < text.index("## Summary") < text.index("## Release gate") < text.index("## Details per candidate"))
    # identification.hit, by hand (tests/stages/test_stats.py): A hits 2 of 4 lots, B 3 of 4; discordant 1-2, p = 1
    assert ("| prompt-b | identification.hit | lot | 0.750 | [0.301, 0.954] | 0.500 | [0.150, 0.850] "
            "| +0.250 [-1.000, +1.000] | 1-2 lots | 1 | no detectable difference |") in text
    assert "../figures/forest-<group>.png" in text and "](../figures/" not in text     # named, never a dead link
    assert "| demo-v2 | test.false_positives | per frame | 0.333 |" in text            # the FP test: a row
    assert "\nSplit `dev` rests on 1 frames" in text and "\n\nSplit `test` rests on 3 frames from 2 capture " \
        "sessions, units clustered by frame" in text                                 # a paragraph each
    assert "- not evaluated (pending): `inference_latency_no_increase`" in text
    assert "**Not measured** (input absent)" in text
    assert sorted(details) == ["detection.detector--demo-v1.md", "detection.detector--demo-v2.md",
                               "lots--prompt-a.md", "lots--prompt-b.md"]
    cand = details["detection.detector--demo-v2.md"].decode()
    assert "| detection.detector.test.class.deer.label_found |" in cand and "p (Holm)" in cand
    # 3 test frames, 1 with a discordant label: no outcome can reach alpha, and the line says so (no 80% claim)
    assert "What this bench could have detected" in cand and "80% power" not in cand
    assert ("- detection.detector.test.label_found: cannot reject at alpha 0.05 with 1 cluster that differs: even "
            "all of them moving one way gives p = 1 (exact sign-flip test over 3 frames, 1 with a discordant label; "
            "planned with the observed (post-hoc) discordance 0.200)") in cand
    ref = details["detection.detector--demo-v1.md"].decode()
    assert ("| detection.detector.demo-v1.test.micro.recall | 3 / 5 | label | label (5, 1.00) "
            "| 0.600 [0.231, 0.882] |") in ref
    assert "prompt-a" not in ref                                          # only its own group's rates


def test_headline_holds_what_a_reviewer_reads_and_stays_small(tmp_path):
    run_report(tmp_path)
    head = json.loads((tmp_path / "headline.json").read_text())
    v2 = head["detection"]["detector"]["demo-v2"]
    assert set(v2) == {"precision", "recall", "f1", "fp_per_frame", "wrong_targets", "dev", "p_label_found",
                       "p_frame_error_free", "p_false_positives", "p_precision", "verdict"}
    assert "p_label_found" not in head["detection"]["detector"]["demo-v1"]      # the reference
    assert v2["p_false_positives"] == 1.0 and v2["verdict"] == "no detectable difference"
    a, b = head["lots"]["prompt-a"], head["lots"]["prompt-b"]
    assert a["hit_rate"] == 0.416667 and "p_hit" not in a                  # the fixture's metrics file
    assert (b["hit_rate"], b["p_hit"]) == (None, 1.0) and b["in_band_rate"] is None   # no metrics for it: null
    assert head["gate"] == {"set": "detector", "reference": "demo-v1", "candidate": "demo-v2", "split": "test",
                            "verdict": "NOT EVALUATED", "passed": False,
                            "pending": ["inference_latency_no_increase"]}    # the pipeline times nothing
    for block in [*head["detection"]["detector"].values(), *head["lots"].values()]:
        assert len(block) <= MAX_KEYS_PER_CANDIDATE


MAX_KEYS_PER_CANDIDATE = 14


def synthetic_stats(n: int):
    """A stats file with a reference and ``n`` lots candidates on every headline and 20 per-tier metrics."""
    from candor_eval.review.collect import adjusted_comparisons
    from candor_eval.review.stats_file import Comparisons, StatsFile
    from candor_eval.stats.paired import compare_paired

    lots = {(f"L{i}",): i % 2 == 0 for i in range(30)}
    paired = {}
    for metric in ("identification.hit", "identification.not_wrong", "fields.majority", "valuation.in_band",
                   *(f"identification.tier{t}.hit" for t in range(20))):
        paired[metric] = Comparisons("ref", {f"cand-{c:02d}": compare_paired(
            lots, {k: (i + c) % 3 != 0 for i, k in enumerate(lots)}, unit="lot", alpha=0.05, confidence=0.95)
            for c in range(n)})
    return StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={"identification": "ref", "fields": "ref",
                     "valuation": "ref"}, inputs={}, rates={}, paired=adjusted_comparisons(paired))


def test_the_report_scales_to_12_candidates(tmp_path):
    """One screen of summary for 12 candidates; the forest plot of the headline rates under 1,600 px."""
    from PIL import Image

    from candor_eval.review.forest import forest_png, forest_rows
    from candor_eval.review.report import render_report

    stats = synthetic_stats(12)
    text, details = render_report(stats, None, forest="../figures")
    first = text[:text.index("## Summary")].splitlines()
    assert len(first) <= 40 and sum(line.startswith("- **lots**") for line in first) == 1     # one line per track
    summary = text[text.index("## Summary"):text.index("## The headline tests, drawn")]
    assert sum(line.startswith("| cand-") for line in summary.splitlines()) == 12 * 4    # a row per test
    assert len(details) == 13 and all(d.count("no detectable difference |") + d.count("B better |")
                                      + d.count("B worse |") == 24 for n, d in details.items() if n != "lots--ref.md")
    png = tmp_path / "forest.png"
    png.write_bytes(forest_png(forest_rows(stats, "lots"), confidence=0.95))
    with Image.open(png) as im:
        assert im.size[1] <= 1600, im.size


def test_report_refuses_a_stats_file_of_another_shape(tmp_path):
    stats = stats_file(tmp_path)
    doc = json.loads(stats.read_text())
    doc["paired"] = {"m": {"prompt-b": {"reference": "prompt-a"}}}      # the old shape
    with pytest.raises(InputError, match="stats.json: not a stats file"):
        review(StatsFile.from_json(doc, where=str(stats)), None, {}, sets={}, forest=None)


def test_recorded_switches_are_listed_and_a_difference_from_the_reference_is_said():
    from candor_eval.review.report import environment_lines

    def docs(**env):
        return {"identification": ("metrics/identification.json", {"identification": {
            c: ({"environment": e} if e else {"all": {}}) for c, e in env.items()}})}
    same = docs(a={"MODE": ["fast"]}, b={"MODE": ["fast"]})
    lines = environment_lines(same, ["a", "b"], "a")
    assert "- a: MODE = `fast`" in lines and not any("differ" in x for x in lines)
    diff = environment_lines(docs(a={"MODE": ["fast"]}, b={"MODE": ["slow"], "P": [None]}), ["a", "b"], "a")
    assert "- b: MODE = `slow`; P = unset" in diff
    assert [x for x in diff if "differ" in x] == [
        "- **b against a: the recorded switches differ** (MODE, P): the comparison is not under one environment."]
    one_side = environment_lines(docs(a=None, b={"MODE": ["x"]}), ["a", "b"], "a")
    assert "- a: none recorded" in one_side and any("differ** (MODE)" in x for x in one_side)
    assert environment_lines(docs(a=None, b=None), ["a", "b"], "a") == []


def test_bench_lines_say_what_the_clustering_covers():
    """By frame the intervals do not cover session-to-session variation; by session they do (the
    frame-mode sentence is not printed in session mode)."""
    from candor_eval.review.report import bench_lines
    from candor_eval.review.stats_file import StatsFile

    def bench(cluster: str) -> str:
        b = {"cluster": cluster, "splits": {"test": {"frames": 12, "sessions": {
            f"s{i}": {"m": {"frames": 2, "tp": 1, "fp": 0, "fn": 1, "precision": 1.0, "recall": 0.5}}
            for i in range(6)}}}}
        st = StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={}, inputs={}, rates={}, paired={},
                       benches={"detection.d": b})
        return "\n".join(bench_lines(st, "detection.d"))
    assert "units clustered by frame: its intervals do not cover session-to-session variation" in bench("frame")
    by_session = bench("session")
    assert "do not cover" not in by_session
    assert "units clustered by session: its intervals and tests treat the sessions as the independent units" \
        in by_session


def test_the_first_screen_holds_the_gate_verdict_and_the_answer_per_track(tmp_path):
    """The first 40 lines: the gate's verdict with its failed and pending criteria, and the one-line answer of
    each track, a worse candidate named with its tests and p."""
    from candor_eval.review.gate_result import GateResult
    from candor_eval.review.report import render_report

    run_report(tmp_path)
    stats = StatsFile.from_json(json.loads((tmp_path / "stats.json").read_text()), where="stats.json")
    doc = json.loads((tmp_path / "gate.json").read_text())
    doc["criteria"]["micro_recall_higher"]["status"] = "fail"
    gate = GateResult.from_json(doc, where="gate.json")
    first = "\n".join(render_report(stats, gate, forest=None)[0].splitlines()[:40])
    assert "**Release gate: FAILED** (demo-v2 against demo-v1 on set `detector`, split `test`" in first
    assert "- failed: `micro_recall_higher`" in first
    assert "- not evaluated (pending): `inference_latency_no_increase`" in first
    assert "- **lots** (against prompt-a): no detectable difference on any headline test: prompt-b (smallest p=1)." \
        in first
    assert "- **detection.detector** (against demo-v1): " in first
    worse = synthetic_worse()
    line = next(x for x in render_report(worse, None, forest=None)[0].splitlines()[:40] if x.startswith("- **lots**"))
    assert line == ("- **lots** (against ref): bad is **worse** on identification.hit (p=0.000488); no detectable "
                    "difference on any headline test: same (smallest p=1).")


def synthetic_worse():
    """A stats file on identification.hit over 12 lots: ``bad`` loses all 12 (12-0 lots: p = 2/4096), ``same``
    ties the reference on every lot."""
    from candor_eval.review.collect import adjusted_comparisons
    from candor_eval.review.stats_file import Comparisons
    from candor_eval.stats.paired import compare_paired

    lots = {(f"L{i}",): True for i in range(12)}
    paired = {"identification.hit": Comparisons("ref", {
        "bad": compare_paired(lots, {k: False for k in lots}, unit="lot", alpha=0.05, confidence=0.95),
        "same": compare_paired(lots, dict(lots), unit="lot", alpha=0.05, confidence=0.95)})}
    return StatsFile(confidence=0.95, alpha=0.05, min_k0=6, reference={"identification": "ref"}, inputs={},
                     rates={}, paired=adjusted_comparisons(paired))


def test_a_gain_is_never_a_negative_drop():
    """B finds every label of 12 frames that A missed: the largest drop the data allow is negative, and
    it is said as a gain, in the gate's criterion and in the per-class column."""
    from candor_eval.review.gate_result import ClassResult, Criterion
    from candor_eval.review.gate_views import drop_cell
    from candor_eval.review.report import _numbers
    from candor_eval.stats.paired import compare_paired

    frames = {(f"f{i}",): False for i in range(12)}
    gained = ClassResult("improved", 12, compare_paired(frames, {k: True for k in frames}, unit="label",
                                                        alpha=0.05, confidence=0.95))
    assert gained.max_drop is not None and gained.max_drop < 0
    text = _numbers(Criterion(status="pass", classes={"deer": gained}), "critical_recall_non_inferior")
    assert text == f"class deer: improved (no drop: a gain of at least {-gained.max_drop:.3f})"
    assert drop_cell(gained.max_drop) == f"none (gain >= {-gained.max_drop:.3f})"


def test_no_table_runs_into_the_paragraph_after_it(tmp_path):
    """In Markdown a line after a table row without a blank line between joins the table: every table
    (the summary, the gate, the runs, the kinds of error) ends in a blank line."""
    run_report(tmp_path)
    lines = (tmp_path / "r" / "report.md").read_text().splitlines()
    for before, after in zip(lines, lines[1:]):
        if before.startswith("|"):
            assert after == "" or after.startswith("|"), (before, after)
