"""stages/compare.py (over candor_eval/review/compare.py and revisions.py) between revisions of a
temporary git repository."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.compare import compare_units
from candor_eval.review.revisions import resolve_revision
from candor_eval.stages.compare import main
from candor_eval.stats.rates import mcnemar_p
from candor_eval.stats.units import PairedMetric

HEADER = "lot,tier,candidate,run,outcome,count_exact\n"


def id_table(outcomes: dict[str, str]) -> str:
    """One run per lot (so a lot's majority is that run), candidate prompt-a."""
    return HEADER + "".join(f"{lot},held,prompt-a,1,{o},\n" for lot, o in sorted(outcomes.items()))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.invalid")
    git(tmp_path, "config", "user.name", "t")
    out = tmp_path / "metrics" / "outcomes"
    out.mkdir(parents=True)
    (tmp_path / "params.yaml").write_text("stats: {alpha: 0.05, confidence: 0.95}\n")
    # revision 1: 8 lots, 2 hits; L9 only here
    base = {f"L{i}": "wrong" for i in range(1, 9)} | {"L1": "hit", "L2": "hit", "L9": "hit"}
    (out / "identification.csv").write_text(id_table(base))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    # revision 2: L3..L8 become hits (6-0), L2 lost (so 1-6), L9 gone, L10 new
    new = {f"L{i}": "hit" for i in range(1, 9)} | {"L2": "wrong", "L10": "hit"}
    (out / "identification.csv").write_text(id_table(new))
    frames = "frame,split,session,zoom,model,tp,fp,fn\nf1,test,s,1,demo-v1,1,0,0\n"
    (out / "demo").mkdir()
    (out / "demo" / "detection-frames.csv").write_text(frames)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "two")
    return tmp_path


def test_compare_two_commits_json(repo, capsys):
    assert main(["HEAD~1", "HEAD", "--repo", str(repo), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    rows = {(r["metric"], r["candidate"]): r for r in got["rows"]}
    hit = rows[("identification.hit", "prompt-a")]["paired"]
    # by hand: common lots L1..L8; A hits L1 L2, B hits L1 L3..L8
    assert (hit["a"]["n"], hit["a"]["k"], hit["b"]["k"], hit["a_only"], hit["b_only"]) == (8, 2, 7, 1, 6)
    assert hit["a"]["unit"] == "lot"
    assert hit["p"] == pytest.approx(0.125, abs=1e-6)  # 2 * (1 + 7) / 128
    assert hit["verdict"] == "no detectable difference"
    assert hit["explanation"].startswith("no detectable difference: B - A = +0.625 [")
    assert hit["explanation"].endswith("1-6 lots; p = 0.125 (not distinguishable from noise; the smallest split that "
                                       "could reach alpha is 6-0 of 8 lots)")
    assert hit["only_in_a"] == ["L9"] and hit["only_in_b"] == ["L10"]
    only_b = rows[("detection.demo.test.frame_error_free", "demo-v1")]
    assert (only_b["status"], only_b["paired"]) == ("only in B", None)
    assert any("demo/detection-frames.csv is absent in A" in note for note in got["absent"])
    assert any("valuation.csv is absent in B" in note for note in got["absent"])


def test_compare_verdict_b_better_against_workspace(repo, capsys):
    # workspace: L2 back to hit -> common L1..L8, 0-6 discordant, p = 2/64
    out = repo / "metrics" / "outcomes" / "identification.csv"
    out.write_text(id_table({f"L{i}": "hit" for i in range(1, 9)}))
    assert main(["HEAD~1", "--repo", str(repo), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["b"] == "workspace"
    hit = next(r for r in got["rows"] if r["metric"] == "identification.hit")["paired"]
    assert (hit["a_only"], hit["b_only"], hit["verdict"]) == (0, 6, "B better")
    assert hit["p"] == pytest.approx(mcnemar_p(0, 6))
    assert main(["HEAD", "HEAD~1", "--repo", str(repo), "--json"]) == 0
    back = json.loads(capsys.readouterr().out)
    hit = next(r for r in back["rows"] if r["metric"] == "identification.hit")["paired"]
    assert (hit["a_only"], hit["b_only"]) == (6, 1)
    assert hit["p"] == pytest.approx(0.125, abs=1e-6)  # 6-1 is not enough on this bench
    assert hit["verdict"] == "no detectable difference"


def test_compare_markdown_and_text(repo, capsys, tmp_path):
    target = tmp_path / "review.md"
    assert main(["HEAD~1", "HEAD", "--repo", str(repo), "--markdown", "--out", str(target)]) == 0
    md = target.read_text()
    assert "| metric | candidate | B - A [interval] | A | B | split | p | verdict | unpaired |" in md
    assert "| identification.hit | prompt-a | B - A = +0.625 [" in md and "| 2/8 = 0.250 [" in md
    assert "1 only in A: L9; 1 only in B: L10" in md
    assert main(["HEAD~1", "HEAD", "--repo", str(repo)]) == 0
    text = capsys.readouterr().out
    assert "1-6 lots; p = 0.125" in text
    assert "only in B: not compared" in text


def test_reports_list_what_changed_most_changed_first_and_fold_the_rest():
    from candor_eval.review.compare import render_text, shown
    from candor_eval.stats.units import PairedMetric

    def side(flags):
        return {"t": {m: PairedMetric("lot", {"x": {(str(i),): f for i, f in enumerate(v)}}) for m, v in flags.items()}}
    a = side({"same": [True] * 6, "one": [True] * 6, "three": [True] * 6})
    b = side({"same": [True] * 6, "one": [False] + [True] * 5, "three": [False] * 3 + [True] * 3})
    rows = compare_units(a, b, alpha=0.05, confidence=0.95)
    listed, folded = shown(rows)
    assert [r.metric for r in listed] == ["three", "one"] and folded == 1
    text = render_text(rows, rev_a="A", rev_b="B", confidence=0.95, alpha=0.05, absent=[])
    assert text.index("three  [x]") < text.index("one  [x]") and "same  [x]" not in text
    assert "1 unchanged row (every paired unit the same in A and B) not shown; --all lists them" in text
    assert "same  [x]" in render_text(rows, rev_a="A", rev_b="B", confidence=0.95, alpha=0.05, absent=[],
                                      everything=True)


def test_compare_experiment_name(repo, capsys):
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/exps/ab/cdef0123/tidy-lamb", sha)
    assert resolve_revision("tidy-lamb", repo=repo) == sha
    assert main(["HEAD~1", "tidy-lamb", "--repo", str(repo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["b_commit"] == sha


@pytest.mark.parametrize("rev", ["no-such-rev", "deadbeef"])
def test_compare_unknown_revision(repo, rev):
    with pytest.raises(InputError, match="not a git revision or DVC experiment name"):
        main([rev, "--repo", str(repo)])


def test_compare_bad_table_names_revision_and_row(repo):
    (repo / "metrics" / "outcomes" / "identification.csv").write_text(HEADER + "L1,held,prompt-a,1,maybe,\n")
    with pytest.raises(InputError) as err:
        main(["HEAD", "--repo", str(repo)])
    assert "workspace:metrics/outcomes/identification.csv:row 2.outcome" in err.value.message


def test_compare_units_only_in_one_side():
    a = {"t": {"m1": PairedMetric("lot", {"x": {("c",): True}}), "m2": PairedMetric("lot", {"x": {("c",): True}})}}
    b = {"t": {"m1": PairedMetric("lot", {"x": {("c",): False}, "y": {("c",): True}})}}
    rows = compare_units(a, b, alpha=0.05, confidence=0.95)
    assert [(r.metric, r.candidate, r.status) for r in rows] == [
        ("m1", "x", "compared"), ("m1", "y", "only in B"), ("m2", "x", "only in A")]
    assert rows[0].paired.a_only == 1 and rows[1].paired is None


def test_false_positives_per_frame_are_compared_by_the_same_test():
    from candor_eval.stats.units import PairedMetric

    def side(counts):
        return {"detection.demo": {"detection.demo.test.false_positives": PairedMetric(
            "frame", {"m": {(f"f{i}",): c for i, c in enumerate(counts)}}, kind="count", cluster="frame",
            cluster_of={(f"f{i}",): f"f{i}" for i in range(len(counts))})}}
    (row,) = compare_units(side([2, 2, 1, 3, 1, 1, 0]), side([0, 0, 0, 0, 0, 0, 0]), alpha=0.05, confidence=0.95)
    p = row.paired
    assert (row.status, p.kind, p.a_only, p.b_only, p.verdict) == ("compared", "count", 0, 6, "B better")
    # d = (2, 2, 1, 3, 1, 1): the sign-flip test on the totals, by enumeration: 2 of 64 patterns reach |10|
    assert p.p == pytest.approx(2 / 64)


def test_a_per_class_row_reads_its_verdict_from_the_holm_adjusted_p():
    from candor_eval.stats.units import PairedMetric

    def side(found):
        return {"detection.demo": {f"detection.demo.test.class.{c}.label_found": PairedMetric(
            "label", {"m": {(f"f{i}", "0"): ok for i, ok in enumerate(flags)}}) for c, flags in found.items()}}
    a = side({"deer": [False] * 7, "sheep": [True] * 7, "boar": [True] * 7})
    b = side({"deer": [True] * 7, "sheep": [True] * 7, "boar": [True] * 7})
    rows = {r.metric.split(".")[4]: r for r in compare_units(a, b, alpha=0.05, confidence=0.95)}
    deer = rows["deer"].paired
    assert deer.verdict == "B better" and deer.p == pytest.approx(0.015625)   # 7-0 alone
    assert deer.p_holm == pytest.approx(0.046875)                            # x 3 tests
    assert "Holm p = 0.0469" in deer.explanation
    assert rows["sheep"].paired.p_holm == 1.0


def test_error_kinds_against_a_table_written_before_the_error_columns(repo, capsys):
    # HEAD's table has no error columns (it still reads); the workspace's has them
    frames = repo / "metrics" / "outcomes" / "demo" / "detection-frames.csv"
    frames.write_text("frame,split,session,zoom,model,tp,fp,fn,fp_localisation,fp_class_confusion,fp_duplicate,"
                      "fp_background,fp_both,fn_aimed,fn_missed,tp_strict\n"
                      "f1,test,s,1,demo-v1,1,3,2,1,0,0,2,0,1,1,1\nf2,dev,s,1,demo-v1,0,5,0,0,0,0,5,0,0,0,0\n")
    assert main(["HEAD", "--repo", str(repo), "--json"]) == 0
    kinds = json.loads(capsys.readouterr().out)["error_kinds"]
    assert kinds == [{"set": "demo", "model": "demo-v1", "a": {"fp": 0, "fn": 0},
                      "b": {"fp": 3, "fn": 2, "fp_localisation": 1, "fp_class_confusion": 0, "fp_duplicate": 0,
                            "fp_background": 2, "fp_both": 0, "fn_aimed": 1, "fn_missed": 1, "tp_strict": 1}}]
    assert main(["HEAD", "--repo", str(repo), "--markdown"]) == 0
    text = capsys.readouterr().out
    assert "| demo | demo-v1 | fp | 0 | 3 | +3 |" in text
    assert "| demo | demo-v1 | fp_background | n/a | 2 | n/a |" in text


def test_the_text_report_groups_by_track_and_measure_and_leads_with_what_the_params_touched():
    """Label rates and per-frame counts are never ranked together: one block per (track, measure), each
    headed once by what B - A is, sorted by the size of B - A within; a changed ``thresholds.deer`` puts
    the deer rows first; every line fits 100 columns."""
    from candor_eval.review.compare import blocks, render_text

    def side(flips: dict[str, int], fp: int) -> dict:
        labels = {m: PairedMetric("label", {"v2": {(str(i),): int(i >= n) for i in range(20)}})
                  for m, n in flips.items()}
        counts = {"detection.s.test.false_positives": PairedMetric(
            "frame", {"v2": {(str(i),): fp for i in range(20)}}, kind="count")}
        return {"detection.s": labels | counts}
    a = side({"detection.s.test.class.deer.label_found": 0, "detection.s.test.class.boar.label_found": 0,
              "detection.s.test.label_found": 0}, fp=3)
    b = side({"detection.s.test.class.deer.label_found": 2, "detection.s.test.class.boar.label_found": 6,
              "detection.s.test.label_found": 1}, fp=1)
    rows = compare_units(a, b, alpha=0.05, confidence=0.95)
    changes = {"thresholds.deer": (0.25, 0.3)}
    heads = [(h, [r.metric.split(".", 3)[-1] for r in members]) for h, members in blocks(rows, changes)]
    assert heads == [("touched by the params diff", ["class.deer.label_found"]),
                     ("detection.s.test: label rate", ["class.boar.label_found", "label_found"]),
                     ("detection.s.test: per frame", ["false_positives"])]
    text = render_text(rows, rev_a="main", rev_b="workspace", confidence=0.95, alpha=0.05, absent=[],
                       changes=changes)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert "params changed: thresholds.deer 0.25 -> 0.3" in text
    assert "== detection.s.test: label rate; each row: B - A [95% interval] ==" in lines
    assert "== detection.s.test: per frame; each row: B - A [95% interval] ==" in lines
    assert text.count("B - A") == 3                  # once per block, never per row
    assert text.index("class.deer.label_found") < text.index("class.boar.label_found") < text.index("false_pos")
    at = lines.index("detection.s.test.false_positives  [v2]")
    assert lines[at + 1].startswith("  -2.000 [") and lines[at + 2].startswith("  A 60 per 20 frames")
