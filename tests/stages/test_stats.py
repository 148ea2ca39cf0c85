"""stages/stats.py on the hand-made fixtures in tests/data/stats/ (expected values by hand)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from candor_eval.common.errors import InputError
from candor_eval.stages.stats import main
from tests.conftest import TESTS

DATA = TESTS / "data" / "stats"
SETS = "detector: {sets: {detector: [demo-v1, demo-v2]}}\n"


def run_stage(tmp_path: Path, *, params: str = "stats: {confidence: 0.95, alpha: 0.05, reference: {lots: prompt-a}}\n",
              outcomes: Path | None = None) -> tuple[int, Path]:
    (tmp_path / "params.yaml").write_text(params + SETS)
    out = tmp_path / "out" / "stats.json"
    code = main(["run", "--outcomes", str(outcomes or DATA / "outcomes"),
                 "--metrics", str(DATA / "metrics" / "identification.json"), str(DATA / "metrics" / "detection"),
                 str(DATA / "metrics" / "valuation.json"),
                 "--metrics-root", str(DATA / "metrics"), "--params", str(tmp_path / "params.yaml"),
                 "--out", str(out)])
    return code, out


def wilson6(k: int, n: int) -> tuple[float, float]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return round(lo, 6), round(hi, 6)


def deer_family(s: dict) -> str:
    comp = s["paired"]["detection.detector.test.class.deer.label_found"]
    family = [m for m, c in s["paired"].items() if c["family"] == comp["family"]]
    raw = sorted(s["paired"][m]["candidates"]["demo-v2"]["p"] for m in family)
    # Holm by hand: the j-th smallest times (m - j + 1), running maximum, capped at 1
    expected, running = [], 0.0
    for j, p in enumerate(raw):
        running = max(running, min(1.0, (len(raw) - j) * p))
        expected.append(round(running, 6))
    got = sorted(round(s["paired"][m]["candidates"]["demo-v2"]["p_holm"], 6) for m in family)
    assert len(family) >= 2 and got == expected
    return comp["family"]


def test_stage_on_fixtures(tmp_path):
    code, out = run_stage(tmp_path)
    assert code == 0
    s = json.loads(out.read_text())
    assert list(s) == ["confidence", "alpha", "min_k0", "reference", "inputs", "cluster", "benches", "rates", "paired",
                       "power", "precision"]
    assert s["cluster"] == {"detection.detector": "frame", "fields": "case"}
    assert s["min_k0"] == 6
    # inputs: absent tables and metrics are listed, not dropped
    assert s["inputs"][str(DATA / "outcomes" / "valuation.csv")] == "absent"
    assert s["inputs"][str(DATA / "outcomes" / "fields.csv")] == "absent"
    assert s["inputs"][str(DATA / "metrics" / "valuation.json")] == "absent"
    assert s["inputs"][str(DATA / "outcomes" / "identification.csv")] == "present"
    # identification hit, per lot majority: A hits L1 L2, B hits L1 L3 L4 (by hand)
    hit = s["paired"]["identification.hit"]
    assert hit["reference"] == "prompt-a"
    b = hit["candidates"]["prompt-b"]
    assert (b["a"]["n"], b["a_only"], b["b_only"], b["p"], b["min_k0"]) == (4, 1, 2, 1.0, None)
    assert (b["a"]["rate"], b["b"]["rate"], b["b"]["unit"]) == (0.5, 0.75, "lot")
    assert (b["b"]["lo"], b["b"]["hi"]) == wilson6(3, 4)
    assert b["verdict"] == "no detectable difference"
    count = s["paired"]["identification.count_exact"]["candidates"]["prompt-b"]
    assert (count["a"]["n"], count["a_only"], count["b_only"], count["p"]) == (3, 0, 2, 0.5)
    assert s["paired"]["identification.held.hit"]["candidates"]["prompt-b"]["a_only"] == 1
    nw = s["paired"]["identification.not_wrong"]["candidates"]["prompt-b"]
    assert (nw["a_only"], nw["b_only"]) == (1, 1)
    # detection: frames f1 f2 f3 on test; f4 (dev) only has the reference, nothing to compare
    fr = s["paired"]["detection.detector.test.frame_error_free"]["candidates"]["demo-v2"]
    assert (fr["a"]["n"], fr["a_only"], fr["b_only"], fr["a"]["rate"], fr["b"]["rate"]) == (3, 0, 1, 0.333333, 0.666667)
    assert fr["a"]["unit"] == "frame"
    lab = s["paired"]["detection.detector.test.label_found"]["candidates"]["demo-v2"]
    assert (lab["a"]["n"], lab["a_only"], lab["b_only"], lab["a"]["rate"], lab["b"]["rate"]) == (5, 0, 1, 0.6, 0.8)
    deer = s["paired"]["detection.detector.test.class.deer.label_found"]["candidates"]["demo-v2"]
    assert (deer["a"]["n"], deer["a"]["rate"], deer["b"]["rate"]) == (2, 0.5, 1.0)
    assert "detection.detector.dev.label_found" not in s["paired"]
    # paired precision, per test frame: f1 0-0, f2 A 1 B 0 (B fewer), f3 A 0 B 1 (A fewer): 1-1, p = 1
    fp = s["paired"]["detection.detector.test.false_positives"]
    assert fp["reference"] == "demo-v1" and "detection.detector.dev.false_positives" not in s["paired"]
    c = fp["candidates"]["demo-v2"]
    assert (c["kind"], c["unit"], c["n"], c["a"]["k"], c["b"]["k"], c["a_only"], c["b_only"], c["p"]) == (
        "count", "frame", 3, 1, 1, 1, 1, 1.0)
    # paired precision itself (detections, by frame): A 2/2, 1/2, 0/0 = 3/4; B 2/2, 2/2, 0/1 = 4/5; pooled
    # 7/9; linearised contributions -4/180, 41/180, -28/180 (sum 9/180 = +0.05): every sign pattern
    # reaches |9/180|, p = 1
    prec = s["precision"]["detection.detector.test.precision"]
    assert (prec["reference"], prec["unit"], prec["cluster"]) == ("demo-v1", "detection", "frame")
    c = prec["candidates"]["demo-v2"]
    assert (c["a"], c["b"], c["diff"], c["p"], c["clusters"], c["verdict"]) == (
        0.75, 0.8, 0.05, 1.0, 3, "no detectable difference")
    assert c["diff_lo"] < 0 < c["diff_hi"] and "detection.detector.dev.precision" not in s["precision"]
    # per-class tests form a family (Holm); the headline label test is not adjusted
    assert deer_family(s) == "detection.detector.test.class.*.label_found"
    assert s["paired"]["detection.detector.test.label_found"]["family"] is None
    assert s["paired"]["detection.detector.test.label_found"]["candidates"]["demo-v2"]["p_holm"] is None
    # rates: exactly the counts blocks of the metrics files, each with its unit; nothing guessed
    r = s["rates"]
    assert sorted(r) == sorted([
        "identification.prompt-a.all.hit_rate", "identification.prompt-a.held.wrong_rate",
        "identification.prompt-a.count.all.exact_rate",
        "detection.detector.demo-v1.test.micro.precision", "detection.detector.demo-v1.test.micro.recall",
        "detection.detector.demo-v1.test.per_class.deer.precision",
        "detection.detector.demo-v1.test.per_class.deer.recall",
        "detection.detector.demo-v1.test.per_class.sheep.precision",
        "detection.detector.demo-v1.test.per_class.sheep.recall"])
    assert r["detection.detector.demo-v1.test.micro.recall"] == {
        "k": 3, "n": 5, "unit": "label", "estimate": "rate", "cluster": "label", "clusters": 5, "deff": 1.0,
        "rate": 0.6, "lo": wilson6(3, 5)[0], "hi": wilson6(3, 5)[1]}
    assert r["detection.detector.demo-v1.test.per_class.sheep.precision"] == {
        "k": 0, "n": 0, "unit": "detection", "estimate": "rate", "cluster": "detection", "clusters": 0, "deff": 1.0,
        "rate": None, "lo": 0.0, "hi": 1.0}
    assert (r["identification.prompt-a.all.hit_rate"]["k"], r["identification.prompt-a.all.hit_rate"]["n"],
            r["identification.prompt-a.all.hit_rate"]["unit"]) == (5, 12, "run")


def test_stage_output_is_byte_identical(tmp_path):
    _, out = run_stage(tmp_path)
    first = out.read_bytes()
    _, out = run_stage(tmp_path)
    assert out.read_bytes() == first


def test_stage_rejects_unknown_reference(tmp_path):
    with pytest.raises(InputError) as err:
        run_stage(tmp_path, params="stats: {reference: {lots: prompt-z}}\n")
    assert "prompt-z" in err.value.message and "prompt-a or prompt-b" in err.value.message
    assert not (tmp_path / "out" / "stats.json").exists()


def test_stage_rejects_bad_params(tmp_path):
    with pytest.raises(InputError) as err:
        run_stage(tmp_path, params="stats: {confidence: 1.5}\n")
    assert "stats.confidence" in err.value.message


def test_stage_with_no_inputs_at_all(tmp_path):
    code, out = run_stage(tmp_path, outcomes=tmp_path / "nothing")
    s = json.loads(out.read_text())
    assert code == 0 and s["paired"] == {}
    assert all(v == "absent" for k, v in s["inputs"].items() if "nothing" in k)


def one_track_run(tmp_path: Path, params: str, *, tables: list[str], metrics: list[str]) -> tuple[int, Path]:
    """The stats stage with the gate, the report and the headline on a project of one track: ``tables``
    (paths under the fixture's outcomes) copied to ``tmp_path/outcomes``, ``metrics`` given as they are."""
    import shutil

    for name in tables:
        (tmp_path / "outcomes" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "outcomes" / name, tmp_path / "outcomes" / name)
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "params.yaml").write_text(params)
    code = main(["run", "--outcomes", str(tmp_path / "outcomes"), "--metrics", *(str(DATA / "metrics" / m)
                                                                               for m in metrics),
                 "--metrics-root", str(DATA / "metrics"), "--params", str(tmp_path / "eval" / "params.yaml"),
                 "--out", str(tmp_path / "m" / "stats.json"), "--gate", str(tmp_path / "m" / "gate.json"),
                 "--detection", str(DATA / "metrics" / "detection"), "--models", str(tmp_path / "models"),
                 "--report", str(tmp_path / "r" / "report.md"), "--headline", str(tmp_path / "m" / "headline.json"),
                 "--forest", str(tmp_path / "figures")])
    return code, tmp_path


def test_a_detector_only_project_gets_nothing_of_the_lots_track(tmp_path, caplog):
    """No ``identify`` section and no lots reference: no lots table is read or warned about, and the
    stats, the report and the headline hold the detection set and its gate only; the gate is the
    set's two models (``gate`` names none) and names the params file read."""
    import logging

    params = "detector: {sets: {detector: [demo-v1, demo-v2]}}\ngate: {waive: [refresh_p95]}\n"
    with caplog.at_level(logging.WARNING, logger="candor_eval.stats"):
        code, root = one_track_run(tmp_path, params, tables=["detector/detection-frames.csv",
                                                             "detector/detection-labels.csv"],
                                   metrics=["detection"])
    assert code == 0 and caplog.text == ""                       # nothing absent: no lots table is expected
    s = json.loads((root / "m" / "stats.json").read_text())
    assert s["reference"] == {"detection.detector": "demo-v1"} and s["cluster"] == {"detection.detector": "frame"}
    assert all("detect" in path for path in s["inputs"]) and all(m.startswith("detection.") for m in s["paired"])
    head = json.loads((root / "m" / "headline.json").read_text())
    assert list(head) == ["detection", "gate", "cluster", "p_values"]
    assert head["cluster"] == {"detection.detector": "frame"}
    assert (head["gate"]["reference"], head["gate"]["candidate"]) == ("demo-v1", "demo-v2")
    gate = json.loads((root / "m" / "gate.json").read_text())
    assert gate["predeclared"] == f"{root / 'eval' / 'params.yaml'}:gate"
    report = (root / "r" / "report.md").read_text()
    assert not re.search(r"\blots?\b|prompt-|identification|\bvaluation", report, re.IGNORECASE), report
    assert "(frames, or capture sessions)" in report and "## Release gate (predeclared in `" in report
    assert sorted(p.name for p in (root / "r" / "details").iterdir()) == ["detection.detector--demo-v1.md",
                                                                          "detection.detector--demo-v2.md"]


def test_a_lots_only_project_gets_no_detector_section_gate_or_latency_hint(tmp_path, caplog):
    """No ``detector`` section: no detection table is read, no gate is evaluated (``--gate`` given or
    not: nothing written), and the report and the headline hold the lots track only."""
    import logging

    params = "identify: {candidates: [prompt-a, prompt-b]}\nstats: {reference: {lots: prompt-a}}\n"
    with caplog.at_level(logging.WARNING, logger="candor_eval.stats"):
        code, root = one_track_run(tmp_path, params, tables=["identification.csv"],
                                   metrics=["identification.json"])
    assert code == 0
    assert "detection" not in caplog.text and "fields.csv is absent" in caplog.text      # a lots table not built
    assert not (root / "m" / "gate.json").exists()
    s = json.loads((root / "m" / "stats.json").read_text())
    assert set(s["reference"]) == {"identification", "fields", "valuation"}
    assert s["cluster"] == {"fields": "case"} and not any("detect" in path for path in s["inputs"])
    head = json.loads((root / "m" / "headline.json").read_text())
    assert list(head) == ["lots", "cluster", "p_values"] and head["lots"]["prompt-b"]["p_hit"] == 1.0
    assert head["cluster"] == {"identification": "lot", "fields": "case", "valuation": "lot"}
    report = (root / "r" / "report.md").read_text()
    for absent in ("detection", "release gate", "Release gate", "latency", "frames, or capture sessions"):
        assert absent not in report, absent
    assert "(lots; cases)" in report and "**lots**\n\n```\nidentification.hit\n" in report    # drawn inline
    assert report.startswith("# candor: rates, paired comparisons\n")
    assert sorted(p.name for p in (root / "r" / "details").iterdir()) == ["lots--prompt-a.md", "lots--prompt-b.md"]


def test_the_lots_reference_is_the_one_candidate_or_must_be_named(tmp_path):
    """``stats.reference.lots`` unset: the one candidate of ``identify.candidates``; with several, an
    input error naming the params file, the key and the candidates, and nothing written."""
    code, root = one_track_run(tmp_path, "identify: {candidates: [prompt-a]}\n", tables=["identification.csv"],
                               metrics=[])
    s = json.loads((root / "m" / "stats.json").read_text())
    assert code == 0 and s["reference"]["identification"] == "prompt-a"
    (root / "eval" / "params.yaml").write_text("identify: {candidates: [prompt-a, prompt-b]}\n")
    (root / "m" / "stats.json").unlink()
    with pytest.raises(InputError) as err:
        one_track_run(tmp_path / "again", "identify: {candidates: [prompt-a, prompt-b]}\n",
                      tables=["identification.csv"], metrics=[])
    (problem,) = err.value.problems
    assert problem.where == f"{tmp_path / 'again' / 'eval' / 'params.yaml'}:stats.reference.lots"
    assert problem.expected == "one of: prompt-a, prompt-b"
    assert not (tmp_path / "again" / "m").exists()


@pytest.mark.parametrize("argv,expected", [
    (["wilson", "15", "17"], {"k": 15, "n": 17, "rate": 0.882353}),
    (["wilson", "0", "0"], {"rate": None, "lo": 0.0, "hi": 1.0}),
    (["mcnemar", "3", "0"], {"p": 0.25, "discordant": 3, "reaches_alpha": False}),
    (["mcnemar", "5", "1"], {"p": 0.21875, "a_only": 5, "b_only": 1}),
    (["mcnemar", "6", "0"], {"p": 0.03125, "reaches_alpha": True, "min_k0": 6}),
    (["mcnemar", "0", "0"], {"p": 1.0, "min_split_at_this_discordant": None}),
])
def test_cli_helpers(argv, expected, capsys):
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)
    assert {k: got[k] for k in expected} == expected


def test_cli_wilson_interval(capsys):
    main(["wilson", "15", "17"])
    got = json.loads(capsys.readouterr().out)
    assert (round(got["lo"], 2), round(got["hi"], 2)) == (0.66, 0.97)


@pytest.mark.parametrize("argv", [["wilson", "5", "3"], ["wilson", "1", "3", "--confidence", "1"],
                                  ["mcnemar", "-1", "2"], ["mcnemar", "1", "2", "--alpha", "0"]])
def test_cli_helpers_reject(argv):
    with pytest.raises(InputError):
        main(argv)


@pytest.mark.parametrize("argv, message", [
    (["plan", "--discordance", "0.2", "--units", "100000000"], "--units: must be a positive number of independent "
                                                               "pairs, at most 10**6 (got 100000000)"),
    (["plan", "--discordance", "0.2", "--units", "9007199254740000"], "at most 10**6"),
    (["plan", "--discordance", "0.2", "--units", "0"], "--units: must be a positive number"),
    (["plan", "--discordance", "0.2", "--improvement", "0.3"], "--improvement: give --units N"),
    (["plan", "--discordance", "1.0", "--units", "10"], "--discordance: must be strictly between 0 and 1"),
    (["plan", "--discordance", "0.2", "--cluster-size", "0", "--clusters", "8"], "--cluster-size: must be a number"),
    (["plan", "--discordance", "0.2", "--cluster-size", "19", "--clusters", "9999"], "--clusters: must be a number"),
    (["plan", "--discordance", "0.2", "--cluster-size", "19", "--together", "2"], "--together: must be a share"),
    (["plan", "--discordance", "0.2", "--cluster-size", "19"], "--improvement: give --clusters G"),
    (["wilson", "1", str(2 ** 53)], "need 0 <= K <= N < 2**53"),
    (["mcnemar", str(2 ** 52), str(2 ** 52)], "B + C < 2**53"),
])
def test_every_helper_number_is_bounded(argv, message):
    """Each numeric argument has a documented bound the command computes within (module docstring)."""
    with pytest.raises(InputError) as err:
        main(argv)
    assert message in err.value.message


def test_plan_at_its_bound_and_below(capsys):
    assert main(["plan", "--discordance", "0.2", "--units", "1000"]) == 0
    assert json.loads(capsys.readouterr().out)["detectable_improvement"] == 0.041


def test_plan_answers_in_clusters_for_a_clustered_design(capsys):
    """With --cluster-size the answer is in clusters (the sign-flip test over them); too few clusters
    to reach alpha say so and give no improvement; more clusters detect less."""
    assert main(["plan", "--discordance", "0.2", "--cluster-size", "19", "--clusters", "6", "--alpha", "0.01"]) == 0
    few = json.loads(capsys.readouterr().out)
    assert few["detectable_improvement"] is None and few["min_clusters"] == 8
    assert few["reason"].startswith("cannot reject at alpha 0.01 with 6 clusters")
    sizes = []
    for g in ("12", "32"):
        assert main(["plan", "--discordance", "0.2", "--cluster-size", "19", "--clusters", g]) == 0
        sizes.append(json.loads(capsys.readouterr().out)["detectable_improvement"])
    assert sizes[0] > sizes[1] > 0
    assert main(["plan", "--discordance", "0.2", "--cluster-size", "19", "--improvement", str(sizes[1])]) == 0
    needed = json.loads(capsys.readouterr().out)["clusters_needed"]
    assert 12 < needed <= 32 + 2                   # about the 32 clusters that detect it (power is simulated)


def demo_sessions(tmp_path: Path, sessions: int) -> Path:
    """A copy of the committed demo outcome tables whose frames are dealt into ``sessions`` capture
    sessions per split (the demo itself has 2 a split, too few to cluster by)."""
    import csv
    import shutil

    from tests.conftest import ROOT
    out = tmp_path / "outcomes"
    shutil.copytree(ROOT / "metrics" / "outcomes", out)
    path = out / "detector" / "detection-frames.csv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    order = {f: i for i, f in enumerate(sorted({r["frame"] for r in rows}))}
    for r in rows:
        r["session"] = f"{r['split']}-s{order[r['frame']] % sessions}"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return out


@pytest.mark.parametrize("cluster", ["frame", "session"])
def test_no_demo_interval_excludes_0_beside_no_detectable_difference(tmp_path, cluster):
    """Every paired record of the demo (stats.json and the gate's classes), by frame and by session:
    its 95% interval excludes 0 exactly when its verdict is a difference (alpha = 1 - confidence)."""
    from tests.conftest import ROOT
    outcomes = ROOT / "metrics" / "outcomes" if cluster == "frame" else demo_sessions(tmp_path, 8)
    params = (ROOT / "params.yaml").read_text().replace("    detection: frame ", f"    detection: {cluster} ")
    assert f"detection: {cluster}" in params
    (tmp_path / "params.yaml").write_text(params)
    out = tmp_path / "stats.json"
    metrics = ROOT / "metrics"
    assert main(["run", "--outcomes", str(outcomes), "--metrics", str(metrics / "identification.json"),
                 str(metrics / "fields"), str(metrics / "detection"), str(metrics / "valuation.json"),
                 "--metrics-root", str(metrics), "--params", str(tmp_path / "params.yaml"), "--out", str(out),
                 "--gate", str(tmp_path / "gate.json"), "--detection", str(metrics / "detection"),
                 "--models", str(ROOT / "models")]) == 0
    stats, gate = json.loads(out.read_text()), json.loads((tmp_path / "gate.json").read_text())
    records = [r for comp in stats["paired"].values() for r in comp["candidates"].values()]
    records += [c["paired"] for c in gate["per_class"].values() if c["paired"] is not None]
    assert len(records) > 40 and {r["cluster"] for r in records if r["unit"] == "frame"} == {cluster}
    for r in records:
        lo, hi = r["diff_lo"], r["diff_hi"]
        excludes = (lo is not None and lo > 0) or (hi is not None and hi < 0)
        assert excludes == (r["verdict"] != "no detectable difference"), r["explanation"]
