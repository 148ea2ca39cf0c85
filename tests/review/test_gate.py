"""candor_eval/review/gate.py (criteria by hand, gate.json round trip) and the gate command (run / check)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError, run_main
from candor_eval.review.gate import (
    Evidence,
    Timings,
    evaluate_gate,
    find_wrong_targets,
    incomparable,
    latency_diagnostic,
)
from candor_eval.review.gate_result import GateResult
from candor_eval.review.gate_views import MatchView, StatsView
from candor_eval.review.params import DeclaredGate
from candor_eval.stages.gate import main
from candor_eval.stats.rates import wilson
from candor_eval.stats.signflip import FLIPS
from tests.conftest import ROOT, TESTS

DATA = TESTS / "data" / "stats"
SHA = "a" * 64


def frames_rows(spec: dict[str, list[tuple[int, int, int]]], split: str = "test") -> list[dict]:
    """model -> per-frame (tp, fp, fn) on frames f0, f1, ..."""
    return [dict(frame=f"f{i}", split=split, session=f"s{i // 4}", model=m, tp=tp, fp=fp, fn=fn)
            for m, rows in spec.items() for i, (tp, fp, fn) in enumerate(rows)]


def label_rows(cls: str, found: dict[str, list[bool]], split: str = "test", offset: int = 0) -> list[dict]:
    """model -> found flags for labels of ``cls``, one per frame l<offset+i>."""
    return [dict(frame=f"l{offset + i}", split=split, label="0", model=m, found=f, **{"class": cls})
            for m, flags in found.items() for i, f in enumerate(flags)]


def bench(n: int = 80, *, ref=(3, 2, 1), cand=(4, 1, 0)) -> tuple[list[dict], list[dict]]:
    """``n`` frames where the candidate is better on every frame: one fewer false positive, one more
    tree label found; one deer label per frame, found by both (no discordance)."""
    frames = frames_rows({"ref": [ref] * n, "cand": [cand] * n})
    labels = (label_rows("deer", {"ref": [True] * n, "cand": [True] * n}, offset=0)
              + label_rows("tree", {"ref": [False] * n, "cand": [True] * n}, offset=0))
    for r in labels:               # the labels sit in the frames f<i>, two per frame
        r["frame"] = "f" + r["frame"][1:]
        r["label"] = "0" if r["class"] == "deer" else "1"
    return frames, labels


GOOD_FRAMES, GOOD_LABELS = bench()


def timed(p95: float, *, started="2026-12-03T08:00:00+00:00", host="h1") -> dict:
    return {"run": {"started_utc": started, "models": ["ref", "cand"]}, "environment": {"host": host},
            "scope": "decoded image -> boxes", "frames": 80, "warmup": 3, "end_to_end": {"p95_ms": p95}}


REPRODUCED = {"model_sha256_matches": True, "manifest_sha256_matches": True, "comparable": True, "compared": 4,
              "reproduced": True, "differing": []}
FAST = Timings(host="edge-1", ms=tuple(float(i) for i in range(900, 1000)))


def evidence(**changes) -> Evidence:
    """Every input beside the outcome tables, as a passing candidate has them."""
    base = dict(wrong_targets={"ref": 2, "cand": 1}, frozen={"ref": REPRODUCED}, contract_keys=[],
                training={"ref": ["train-0", "train-1"], "cand": ["train-0", "train-1"]}, refresh=FAST,
                latency={"ref": timed(100.0), "cand": timed(105.0)})
    return Evidence(**(base | changes))


def run(frames=GOOD_FRAMES, labels=GOOD_LABELS, wrong=None, critical=("deer",), min_support=3, ev=None, **gp):
    ev = ev or evidence(**({} if wrong is None else {"wrong_targets": wrong}))
    params = DeclaredGate(set="s", reference="ref", candidate="cand", **gp)
    result = evaluate_gate(frames=frames, labels=labels, evidence=ev, params=params,
                           params_file="eval/params.yaml", critical=list(critical), min_support=min_support,
                           confidence=0.95)
    doc = result.as_json()
    assert GateResult.from_json(doc, where="gate.json").as_json() == doc      # one writer, one reader
    return doc


def test_gate_json_names_the_params_file_the_gate_was_declared_in():
    """``predeclared`` is ``<params file>:gate``, read back as the params file; the check text names it."""
    from candor_eval.review.gate_views import render_console

    g = run()
    assert g["predeclared"] == "eval/params.yaml:gate"
    back = GateResult.from_json(g, where="gate.json")
    assert back.params_file == "eval/params.yaml"
    assert render_console(back).startswith("release gate: cand (B) vs ref (A) on set s")
    assert "predeclared in eval/params.yaml:gate" in render_console(back)
    with pytest.raises(InputError, match="gate.json: not a gate result"):
        GateResult.from_json(g | {"predeclared": "params.yaml:stats"}, where="gate.json")


def test_gate_passes_when_every_criterion_is_shown():
    g = run()
    assert g["passed"] and g["failed"] == [], g["criteria"]
    c = g["criteria"]
    # by hand: ref TP 3 FP 2 FN 1 per frame -> P 3/5, R 3/4; cand TP 4 FP 1 FN 0: P 4/5, R 1
    assert c["micro_precision_higher"]["reference"] == 0.6 and c["micro_precision_higher"]["candidate"] == 0.8
    # 80 frames all with a higher precision: no sampled sign pattern reaches it (p = 1 / (1 + FLIPS))
    assert c["micro_precision_higher"]["p"] == pytest.approx(1 / (1 + FLIPS), rel=1e-5)
    rate = c["micro_precision_higher"]["candidate_rate"]
    assert ((rate["k"], rate["n"], rate["unit"], rate["cluster"], rate["clusters"])
            == (320, 400, "detection", "frame", 80))
    # recall from the labels table: ref finds the deer of each frame, cand deer and tree
    assert c["micro_recall_higher"]["reference_rate"]["rate"] == 0.5 and c["micro_recall_higher"]["diff"] == 0.5
    assert c["micro_f1_higher"]["reference"] == round(6 / 9, 6)
    deer = c["critical_recall_non_inferior"]["classes"]["deer"]
    # no discordance on 80 frames: the drop is bounded by Wilson's upper bound of 0 of 80
    assert deer["max_drop"] == pytest.approx(wilson(0, 80).hi, abs=1e-6) and deer["max_drop"] < 0.05
    assert g["verdict"] == "PASSED" and g["pending"] == []


def test_a_difference_not_distinguishable_from_noise_does_not_pass_unless_declared_higher():
    frames, labels = bench(8)
    frames[-1] = dict(frames[-1], fp=0)            # ... yet 8 frames: the FP test is 8-0 (p = 0.0078)
    g = run(frames=frames, labels=labels, critical=(), **{"waive": ["critical_recall_non_inferior"]})
    assert g["criteria"]["micro_precision_higher"]["status"] == "pass"
    frames, labels = bench(5)                       # 5-0 frames: p = 0.0625
    g = run(frames=frames, labels=labels, waive=["critical_recall_non_inferior"])
    crit = g["criteria"]["micro_precision_higher"]
    assert crit["status"] == "fail" and crit["note"] == "higher, but not distinguishable from noise"
    assert crit["p"] == 0.0625
    loose = run(frames=frames, labels=labels, waive=["critical_recall_non_inferior"], improvement="higher")
    assert loose["criteria"]["micro_precision_higher"]["status"] == "pass"


def test_gate_fails_when_precision_not_higher():
    frames, labels = bench(80, ref=(4, 0, 1), cand=(5, 0, 0))   # P 1.0 vs 1.0
    assert "micro_precision_higher" in run(frames=frames, labels=labels)["failed"]


def test_critical_drop_fails_and_is_not_masked_by_gains():
    # deer: ref finds 7 of 7, candidate 1 of 7 -> 6-0 frames; the tree gains do not hide it
    frames, labels = bench()
    for r in labels:
        if r["class"] == "deer" and r["model"] == "cand" and 1 <= int(r["frame"][1:]) <= 6:
            r["found"] = False
    g = run(frames=frames, labels=labels)
    crit = g["criteria"]["critical_recall_non_inferior"]
    assert crit["status"] == "fail" and crit["note"].startswith("recall drop shown (regressed, whatever the support)")
    deer = crit["classes"]["deer"]
    assert deer["status"] == "regressed" and deer["paired"]["p"] == 0.03125
    assert (deer["paired"]["a_only"], deer["paired"]["b_only"]) == (6, 0)
    assert deer["max_drop"] > 6 / 80
    assert g["per_class"]["tree"]["status"] == "improved"


def test_a_drop_the_data_cannot_bound_fails_even_when_not_significant():
    # 5-0 is p = 0.0625: no significant drop, yet a drop beyond the margin is not ruled out
    frames, labels = bench()
    for r in labels:
        if r["class"] == "deer" and r["model"] == "cand" and int(r["frame"][1:]) < 5:
            r["found"] = False
    g = run(frames=frames, labels=labels)
    assert g["per_class"]["deer"]["status"] == "no detectable change"
    assert g["criteria"]["critical_recall_non_inferior"]["status"] == "fail"
    wide = run(frames=frames, labels=labels, max_recall_drop=0.5)
    assert wide["criteria"]["critical_recall_non_inferior"]["status"] == "pass"


def test_unqualified_class_is_never_improved_and_the_declared_policy_decides():
    up = label_rows("relic", {"ref": [False] * 6, "cand": [True] * 6}, offset=500)
    g = run(labels=GOOD_LABELS + up, min_support=10)
    assert g["per_class"]["relic"]["status"] == "unqualified"
    g = run(labels=GOOD_LABELS + up, critical=("deer", "relic"), min_support=10)
    assert g["criteria"]["critical_recall_non_inferior"]["status"] == "fail"
    assert "unqualified (fail): relic" in g["criteria"]["critical_recall_non_inferior"]["note"]
    g = run(labels=GOOD_LABELS + up, critical=("deer", "relic"), min_support=10, unqualified="waive")
    assert "critical_recall_non_inferior" not in g["failed"]


def test_wrong_targets_increase_fails_and_missing_is_not_evaluated():
    assert run(wrong={"ref": 1, "cand": 2})["failed"] == ["wrong_targets_no_increase"]
    assert run(wrong={"ref": 1, "cand": 1})["passed"]
    g = run(wrong={"ref": None, "cand": 0})
    assert g["pending"] == ["wrong_targets_no_increase"] and g["verdict"] == "NOT EVALUATED"
    assert g["criteria"]["wrong_targets_no_increase"]["status"] == "not evaluated"


def test_every_criterion_names_the_split_it_read():
    c = run()["criteria"]
    assert {n for n, x in c.items() if x["split"] == "test"} == {
        "same_frames_and_labels", "micro_precision_higher", "micro_recall_higher", "micro_f1_higher",
        "critical_recall_non_inferior", "wrong_targets_no_increase", "sessions_held_out"}
    assert all(c[n]["split"] is None for n in ("reference_reproduced", "served_contract_fixed", "refresh_p95",
                                               "inference_latency_no_increase"))


@pytest.mark.parametrize("ms,status,what", [
    (tuple(float(i) for i in range(1900, 2000)), "pass", None),               # bound 1998 ms
    (tuple(float(i) for i in range(1903, 2003)), "fail", "not shown"),        # p95 1997, bound 2001
    (tuple(float(i) for i in range(2000, 2100)), "fail", "p95 above the limit"),
    (tuple(float(i) for i in range(50)), "fail", "50 refreshes cannot bound a p95 (at least 59)"),
])
def test_the_refresh_criterion_needs_the_p95_shown_within_the_limit(ms, status, what):
    c = run(ev=evidence(refresh=Timings("edge-1", ms)))["criteria"]["refresh_p95"]
    assert c["status"] == status and (what is None or what in c["note"])
    assert c["tally"] == {"refreshes": len(ms)} and c["limit"] == 2000.0


def test_without_refresh_timings_the_gate_is_not_evaluated_and_says_what_is_pending():
    g = run(ev=evidence(refresh=None))
    assert g["verdict"] == "NOT EVALUATED" and not g["passed"] and g["pending"] == ["refresh_p95"]
    assert g["failed"] == [] and "candor gate run --refresh" in g["criteria"]["refresh_p95"]["note"]
    g = run(ev=evidence(refresh=None), waive=["refresh_p95"])
    assert g["verdict"] == "PASSED" and g["criteria"]["refresh_p95"]["status"] == "waived"
    assert g["criteria"]["refresh_p95"]["note"].startswith("waived by eval/params.yaml:gate.waive (not evaluated")


@pytest.mark.parametrize("cand,status", [(110.0, "pass"), (110.5, "fail")])
def test_the_decoded_image_diagnostic_is_compared_with_the_reference_of_the_same_run(cand, status):
    c = run(ev=evidence(latency={"ref": timed(100.0), "cand": timed(cand)}))["criteria"]
    lat = c["inference_latency_no_increase"]
    assert (lat["status"], lat["reference"], lat["candidate"], lat["limit"]) == (status, 100.0, cand, 0.1)


def test_diagnostics_from_two_runs_or_hosts_are_never_compared():
    apart = {"ref": timed(100.0), "cand": timed(50.0, started="2026-12-04T08:00:00+00:00", host="h2")}
    lat = run(ev=evidence(latency=apart))["criteria"]["inference_latency_no_increase"]
    assert lat["status"] == "not evaluated" and lat["keys"] == ["run", "environment"]
    lat = run(ev=evidence(latency={"cand": timed(50.0)}))["criteria"]["inference_latency_no_increase"]
    assert lat["status"] == "not evaluated" and "candor latency --set s" in lat["note"]


def test_a_frozen_reference_that_does_not_reproduce_fails_naming_the_fields():
    off = REPRODUCED | {"reproduced": False, "differing": ["test.micro.f1"]}
    c = run(ev=evidence(frozen={"ref": off}))["criteria"]["reference_reproduced"]
    assert c["status"] == "fail" and c["keys"] == ["test.micro.f1"] and "test.micro.f1" in c["note"]
    other = REPRODUCED | {"comparable": False, "manifest_sha256_matches": False, "reproduced": False}
    c = run(ev=evidence(frozen={"ref": other}))["criteria"]["reference_reproduced"]
    assert c["status"] == "fail" and "evaluation set is not the card's" in c["note"]
    c = run(ev=evidence(frozen={}))["criteria"]["reference_reproduced"]
    assert c["status"] == "not evaluated" and "declares no frozen evaluation" in c["note"]


def test_a_weights_experiment_fails_when_the_served_contract_differs():
    keys = ["nms.iou", "thresholds.deer"]
    c = run(ev=evidence(contract_keys=keys))["criteria"]["served_contract_fixed"]
    assert c["status"] == "fail" and c["keys"] == ["nms.iou", "thresholds.deer"]
    assert "gate.comparison: package" in c["note"]
    assert run(ev=evidence(contract_keys=None))["criteria"]["served_contract_fixed"]["status"] == "not evaluated"
    c = run(ev=evidence(contract_keys=keys), comparison="package")["criteria"]["served_contract_fixed"]
    assert c["status"] == "pass" and c["note"].startswith("package comparison") and "thresholds.deer" in c["note"]


def test_a_test_session_seen_in_training_fails_and_undeclared_training_is_pending():
    seen = {"ref": ["train-0"], "cand": ["s3", "train-9"]}
    c = run(ev=evidence(training=seen))["criteria"]["sessions_held_out"]
    assert c["status"] == "fail" and c["keys"] == ["s3"] and "cand was trained on test session(s) s3" in c["note"]
    unknown = {"ref": ["train-0"], "cand": None}
    c = run(ev=evidence(training=unknown))["criteria"]["sessions_held_out"]
    assert c["status"] == "not evaluated" and "no training_sessions declared in the card(s) of cand" in c["note"]
    assert run()["criteria"]["sessions_held_out"]["tally"] == {"sessions": 20}


def test_a_gate_with_every_criterion_waived_checked_nothing():
    every = ["reference_reproduced", "served_contract_fixed", "micro_precision_higher", "micro_recall_higher",
             "micro_f1_higher", "critical_recall_non_inferior", "wrong_targets_no_increase", "sessions_held_out",
             "refresh_p95", "inference_latency_no_increase"]
    g = run(frames=[dict(r, fp=r["fp"] + 50) for r in GOOD_FRAMES if r["model"] == "cand"]
            + [r for r in GOOD_FRAMES if r["model"] == "ref"], waive=every, wrong={"ref": 0, "cand": 0})
    assert g["verdict"] == "NOT EVALUATED" and not g["passed"]       # same_frames_and_labels is never waivable


def test_different_frames_or_labels_fail():
    frames = GOOD_FRAMES + [dict(frame="extra", split="test", model="cand", tp=0, fp=0, fn=0)]
    g = run(frames=frames)
    assert "same_frames_and_labels" in g["failed"]
    assert g["criteria"]["same_frames_and_labels"]["tally"]["frames_only_in_candidate"] == 1
    labels = [r for r in GOOD_LABELS if not (r["model"] == "ref" and r["frame"] == "f0" and r["class"] == "deer")]
    assert "same_frames_and_labels" in run(labels=labels)["failed"]


def test_absent_tables_are_not_evaluated_and_fail_the_gate():
    params = DeclaredGate(set="s", reference="ref", candidate="cand")
    g = evaluate_gate(frames=None, labels=None, evidence=evidence(wrong_targets={"ref": 0, "cand": 0}),
                      params=params, params_file="p.yaml", critical=["deer"], min_support=3, confidence=0.95)
    assert not g.passed and g.verdict == "NOT EVALUATED" and g.failed == []
    assert set(g.pending) == {"same_frames_and_labels", "micro_precision_higher", "micro_recall_higher",
                              "micro_f1_higher", "critical_recall_non_inferior", "sessions_held_out"}


def test_critical_class_without_labels_is_unqualified():
    g = run(critical=("deer", "boar"))
    crit = g["criteria"]["critical_recall_non_inferior"]
    assert crit["classes"]["boar"] == {"status": "no labels", "support": 0, "max_drop": None, "paired": None}
    assert crit["status"] == "fail" and "unqualified (fail): boar" in crit["note"]


DEMO = ROOT / "metrics" / "outcomes" / "detector"


def demo_tables() -> tuple[list[dict], list[dict]]:
    from candor_eval.stats.outcomes import TABLES, parse_table
    return tuple(parse_table(TABLES[n], (DEMO / n).read_text(), where=n)
                 for n in ("detection-frames.csv", "detection-labels.csv"))


def swapped(frames: list[dict], labels: list[dict], rng) -> tuple[list[dict], list[dict]]:
    """Two equally good models: each frame's outputs of the two models swapped with probability 1/2."""
    flip = {f: rng.random() < 0.5 for f in sorted({r["frame"] for r in frames})}
    other = {"demo-v1": "demo-v2", "demo-v2": "demo-v1"}
    def swap(rows):
        return [dict(r, model=other[r["model"]]) if flip[r["frame"]] else r for r in rows]
    return swap(frames), swap(labels)


OFF_TOPIC = ["reference_reproduced", "served_contract_fixed", "wrong_targets_no_increase", "sessions_held_out",
             "refresh_p95", "inference_latency_no_increase"]


def null_pass_rate(improvement: str, *, sims: int, seed: int) -> float:
    """How often the gate passes on the demo frames with the two models' outputs swapped frame by frame
    (two equally good models), judged on the micro criteria alone: the criteria the noise control is
    about. The critical-class criterion is waived: it never passes on demo-sized classes under swaps,
    so keeping it would make any rate come out low, noise control or not."""
    import random
    rng = random.Random(seed)
    frames, labels = demo_tables()
    params = DeclaredGate(set="detector", reference="demo-v1", candidate="demo-v2", improvement=improvement,
                          waive=[*OFF_TOPIC, "critical_recall_non_inferior"])
    passes = 0
    for _ in range(sims):
        f, lab = swapped(frames, labels, rng)
        g = evaluate_gate(frames=f, labels=lab, evidence=Evidence(), params=params,
                          params_file="params.yaml", critical=[], min_support=10, confidence=0.95)
        assert set(g.criteria) - set(params.waive) == {"same_frames_and_labels", "micro_precision_higher",
                                                       "micro_recall_higher", "micro_f1_higher"}
        passes += g.passed
    return passes / sims


def test_null_pass_rate_of_the_gate_on_demo_frames_is_at_most_alpha():
    """Swapping the demo models' outputs frame by frame makes them equally good: the gate must not
    pass more often than alpha (its criteria must all be shown: an intersection-union test)."""
    assert null_pass_rate("shown", sims=300, seed=20261201) <= 0.05


def test_without_its_noise_control_the_same_null_gate_passes_often():
    """The same gate and data without the noise control (``improvement: higher``, the point estimates
    suffice) pass far more often than alpha: the test above is about the noise control, and removing
    it (by declaration here, or from the code: ``_higher`` ignoring ``shown``) makes it fail."""
    assert null_pass_rate("higher", sims=300, seed=1) > 0.15




CURRENT = {"onnx_sha256": SHA, "end_to_end": {"median_ms": 10, "p95_ms": 147.2}, "model_call": {"p95_ms": 90.0}}


@pytest.mark.parametrize("doc,expected", [
    (CURRENT, CURRENT),
    ({"onnx_sha256": "b" * 64, "end_to_end": {"p95_ms": 147.2}}, None),     # another model file: stale
    ({"end_to_end": {"p95_ms": 147.2}}, None),                                # unknown model file
])
def test_a_latency_diagnostic_counts_only_for_the_current_model(doc, expected):
    assert latency_diagnostic(doc, where="lat.json", onnx_sha256=SHA) == expected


@pytest.mark.parametrize("doc", [{"p95_ms": 5}, {"end_to_end": {"median_ms": 3}}, [], {"end_to_end": {"p95_ms": True}},
                                 {"end_to_end": {"p95_ms": 0}}])
def test_a_latency_diagnostic_of_something_else_is_an_error(doc):
    with pytest.raises(InputError, match="lat.json: not a latency diagnostic"):
        latency_diagnostic(doc, where="lat.json", onnx_sha256=SHA)


@pytest.mark.parametrize("doc,expected", [
    ({"test": {"critical": {"total": {"missed": 3, "wrong": 2}}}}, 2),
    ({"test": {"critical": {"total": {"wrong": 0}}}}, 0),
    ({"test": {"critical": {"total": {"wrong": True}}}}, None),
    ({"test": []}, None),
    ({"dev": {"critical": {"total": {"wrong": 2}}}}, None),
    ({"test": {"micro": {}}}, None),
    ([], None),
])
def test_find_wrong_targets(doc, expected):
    assert find_wrong_targets(doc, split="test") == expected


def write_gate_inputs(tmp_path: Path, *, cand_wrong: int) -> list[str]:
    det = tmp_path / "detection"
    (det / "detector").mkdir(parents=True)
    for model, wrong in (("demo-v1", 1), ("demo-v2", cand_wrong)):
        (det / "detector" / f"{model}.json").write_text(json.dumps({"test": {"critical": {"total": {"wrong": wrong}}}}))
    lat = tmp_path / "latency"
    (lat / "detector").mkdir(parents=True)
    models = tmp_path / "models"
    models.mkdir()
    for model, p95 in (("demo-v1", 140.0), ("demo-v2", 150.0)):
        (lat / "detector" / f"{model}.json").write_text(json.dumps(timed(p95) | {"onnx_sha256": SHA}))
        (models / f"{model}.yaml").write_text(f"onnx: {model}.onnx\nsha256: {SHA}\n")
    (tmp_path / "params.yaml").write_text("stats: {reference: {lots: prompt-a}}\n"
                                          "gate: {refresh_p95_ms: 2000, unqualified: waive, improvement: higher, "
                                          "waive: [reference_reproduced, served_contract_fixed, sessions_held_out, "
                                          "refresh_p95]}\n"
                                          "detector: {sets: {detector: [demo-v1, demo-v2]}}\n"
                                          "match: {critical: [deer], min_support: 2, iou: 0.5}\n")
    return ["run", "--outcomes", str(DATA / "outcomes"), "--detection", str(det), "--latency", str(lat),
            "--models", str(models), "--params", str(tmp_path / "params.yaml"), "--out", str(tmp_path / "gate.json")]


@pytest.mark.parametrize("cand_wrong,code", [(1, 0), (2, 1)])
def test_gate_stage_and_check(tmp_path, capsys, cand_wrong, code):
    assert main(write_gate_inputs(tmp_path, cand_wrong=cand_wrong)) == 0  # the stage never fails the pipeline
    g = json.loads((tmp_path / "gate.json").read_text())
    lat = g["criteria"]["inference_latency_no_increase"]
    assert (lat["reference"], lat["candidate"], lat["status"]) == (140.0, 150.0, "pass")
    # fixture deer labels: (f1, 0) found by both, (f2, 0) only by the candidate: 2 frames, unqualified
    assert (g["per_class"]["deer"]["status"], g["per_class"]["deer"]["support"]) == ("unqualified", 2)
    assert main(["check", "--gate", str(tmp_path / "gate.json")]) == code  # CI's check
    out = capsys.readouterr().out
    assert ("PASSED" in out) is (code == 0)


def test_gate_names_a_malformed_latency_file(tmp_path, capsys):
    argv = write_gate_inputs(tmp_path, cand_wrong=1)
    (tmp_path / "latency" / "detector" / "demo-v2.json").write_text('{"end_to_end": {"p95_ms": 1')
    assert run_main(main, argv) == 2
    assert "latency/detector/demo-v2.json: not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "gate.json").exists()


def test_the_gate_reads_the_documented_defaults_of_sections_it_does_not_own():
    assert MatchView().min_support == 10 and MatchView().critical == []    # match: as score reads it
    assert StatsView().confidence == 0.95


@pytest.mark.parametrize("gate, where", [
    ("{set: birds}", "params.yaml:gate.set: unknown detection set"),
    ("{candidate: demo-v9}", "gate.candidate: not a model of detection set 'detector'"),
    ("{reference: demo-v9}", "gate.reference: not a model of detection set 'detector'"),
    ("{split: final}", "gate.split: unknown split"),
])
def test_an_unknown_gate_set_model_or_split_exits_2_naming_the_key(tmp_path, capsys, gate, where):
    argv = write_gate_inputs(tmp_path, cand_wrong=1)
    text = (tmp_path / "params.yaml").read_text()
    text = text.replace(text[text.index("gate: {"):text.index("}\n", text.index("gate: {")) + 1], f"gate: {gate}")
    (tmp_path / "params.yaml").write_text(text)
    assert run_main(main, argv) == 2
    assert where in capsys.readouterr().err
    assert not (tmp_path / "gate.json").exists()


def test_a_shown_regression_of_a_small_critical_class_fails_even_when_unqualified_classes_are_waived():
    """relic: 8 labels in 8 frames, all lost (8-0 frames, p = 2 / 2**8 = 0.0078): too small to qualify
    (min_support 10), yet its drop is shown, so waiving unqualified classes does not waive it."""
    lost = label_rows("relic", {"ref": [True] * 8, "cand": [False] * 8}, offset=700)
    g = run(labels=GOOD_LABELS + lost, critical=("deer", "relic"), min_support=10, unqualified="waive")
    assert g["per_class"]["relic"]["status"] == "regressed"
    crit = g["criteria"]["critical_recall_non_inferior"]
    assert crit["status"] == "fail" and "regressed, whatever the support): relic (Holm p=0.0156)" in crit["note"]


def test_diagnostics_of_two_runs_or_hosts_are_not_comparable():
    a = {"run": {"started_utc": "2026-01-01T00:00:00+00:00", "models": ["a", "b"]}, "environment": {"host": "h1"},
         "scope": "s", "frames": 32, "warmup": 3}
    assert incomparable(a, dict(a)) == []
    assert incomparable(a, a | {"run": {"started_utc": "2026-01-02T00:00:00+00:00", "models": ["a", "b"]}}) == ["run"]
    assert incomparable(a, a | {"environment": {"host": "h2"}, "warmup": 0}) == ["environment", "warmup"]
    assert incomparable({}, {}) == ["run", "environment", "scope", "frames", "warmup"]      # nothing to tie them
