"""candor_eval/review/gate_files.py: the release gate from files (``<outcomes>/<set>/`` tables, each
model's detection metrics, the candidate's latency diagnostic and model card), on tiny tables
written in ``tmp_path`` with hand-computed criteria; the names ``gate`` declares are checked first."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.config import DetectorParams
from candor_eval.review.gate_files import TABLES, check_gate, gate_from_files, write_gate
from candor_eval.review.gate_result import GateResult
from candor_eval.review.gate_views import GateSettings, MatchView, StatsView
from candor_eval.review.params import Cluster, DeclaredGate

SHA = "c" * 64
N = 6          # frames f0..f5, in sessions s0, s1, s2 (frame i in session s<i mod 3>)


def settings(*, cluster: str = "frame", **gate) -> GateSettings:
    """Reference ``r`` against candidate ``c`` on set ``s``; ``deer`` critical, 2 labels qualify it."""
    gp = {"set": "s", "reference": "r", "candidate": "c", "max_recall_drop": 0.5} | gate
    return GateSettings(gate=DeclaredGate(**gp), stats=StatsView(cluster=Cluster(detection=cluster)),
                        match=MatchView(critical=["deer"], min_support=2),
                        detector=DetectorParams(sets={"s": ["r", "c"], "other": ["x"]}), where="p.yaml")


def write_inputs(root: Path, *, tables=TABLES, wrong=(2, 1)) -> dict[str, Path]:
    """Per frame: ``r`` has TP 1, FP 1, FN 1, ``c`` TP 2, FP 0, FN 0; two labels per frame, ``deer``
    found by both, ``tree`` only by ``c``. So by hand: precision 6/12 = 0.5 vs 12/12 = 1, recall
    0.5 vs 1, each frame favouring ``c``: sign-flip p = 2 / 2**6 = 0.03125 (by frame)."""
    folder = root / "outcomes" / "s"
    folder.mkdir(parents=True)
    frames = ["frame,split,session,zoom,model,tp,fp,fn"] + [
        f"f{i},test,s{i % 3},1.0,{m},{row}" for i in range(N) for m, row in (("r", "1,1,1"), ("c", "2,0,0"))]
    labels = ["frame,split,label,class,model,found"] + [
        f"f{i},test,{lab},{cls},{m},{int(cls == 'deer' or m == 'c')}"
        for i in range(N) for lab, cls in (("0", "deer"), ("1", "tree")) for m in ("r", "c")]
    for name, lines in zip(TABLES, (frames, labels)):
        if name in tables:
            (folder / name).write_text("\n".join(lines) + "\n")
    det = root / "detection" / "s"
    det.mkdir(parents=True)
    for model, w in zip(("r", "c"), wrong):
        if w is not None:
            (det / f"{model}.json").write_text(json.dumps({"test": {"critical": {"total": {"wrong": w}}},
                                                           "dev": {"critical": {"total": {"wrong": 99}}},
                                                           "frozen": FROZEN}))
    contract = {"preprocess": {"resize": "pillow-bilinear"}, "thresholds": {"deer": 0.3}, "nms": {"iou": 0.5},
                "training_sessions": ["t0"]}
    (folder / "served.json").write_text(json.dumps({"r": contract, "c": contract}))
    models = root / "models"
    models.mkdir()
    lat = root / "latency" / "s"
    lat.mkdir(parents=True)
    run = {"run": {"started_utc": "2026-12-03T08:00:00+00:00", "models": ["r", "c"]}, "environment": {"host": "h"},
           "scope": "decoded", "frames": 6, "warmup": 3}
    for model, p95 in (("r", 118.0), ("c", 120.5)):
        (models / f"{model}.yaml").write_text(f"onnx: {model}.onnx\nsha256: {SHA}\n")
        (lat / f"{model}.json").write_text(json.dumps(run | {"onnx_sha256": SHA, "end_to_end": {"p95_ms": p95}}))
    (root / "refresh.csv").write_text("refresh,model,host,scope,ms\n" + "".join(
        f"q{i},c,edge,capture-to-handoff,{1000 + i}\n" for i in range(60)))
    return {"outcomes": root / "outcomes", "detection": root / "detection", "models": models,
            "latency": root / "latency", "refresh": root / "refresh.csv"}


FROZEN = {"model_sha256_matches": True, "manifest_sha256_matches": True, "comparable": True, "compared": 3,
          "reproduced": True, "differing": []}


def gate(tmp_path: Path, s: GateSettings | None = None, *, latency: bool = False, **inputs) -> GateResult:
    paths = write_inputs(tmp_path, **inputs)
    return gate_from_files(s or settings(), outcomes=paths["outcomes"], detection=paths["detection"],
                           models=paths["models"], latency=paths["latency"] if latency else None,
                           refresh=paths["refresh"] if latency else None)


def test_the_gate_from_complete_files(tmp_path):
    """Every criterion evaluated from the files, with the hand values of :func:`write_inputs`;
    without ``latency`` (the pipeline's run) the latency criterion is not evaluated."""
    g = gate(tmp_path)
    c = g.criteria
    assert (g.set, g.reference, g.candidate, g.split, g.cluster) == ("s", "r", "c", "test", "frame")
    assert g.predeclared == "p.yaml:gate"                               # the params file the settings came from
    assert c["same_frames_and_labels"].status == "pass"
    assert (c["micro_precision_higher"].reference, c["micro_precision_higher"].candidate) == (0.5, 1.0)
    assert c["micro_precision_higher"].p == c["micro_recall_higher"].p == 0.03125
    assert {n: c[n].status for n in ("micro_precision_higher", "micro_recall_higher")} == \
        {"micro_precision_higher": "pass", "micro_recall_higher": "pass"}
    # deer: found by both on 6 frames, drop bounded by Wilson's upper bound of 0 of 6 (0.390) < 0.5
    assert c["critical_recall_non_inferior"].status == "pass"
    assert g.per_class["deer"].max_drop == pytest.approx(0.390334, abs=1e-6)
    assert (c["wrong_targets_no_increase"].reference, c["wrong_targets_no_increase"].candidate) == (2, 1)
    assert c["wrong_targets_no_increase"].status == "pass"              # the test split's, not dev's 99
    assert (c["reference_reproduced"].status, c["served_contract_fixed"].status) == ("pass", "pass")
    assert c["sessions_held_out"].status == "pass" and c["sessions_held_out"].tally == {"sessions": 3}
    assert g.failed == [] and g.pending == ["refresh_p95", "inference_latency_no_increase"]
    assert g.verdict == "NOT EVALUATED"


def test_the_timings_measured_on_the_current_model_files_count(tmp_path):
    """With ``latency`` and ``refresh`` given, both diagnostics are read when their ONNX sha is the
    card's, and the refresh timings bound the candidate's p95 (60 refreshes: p95 the 57th, 1056 ms;
    bound the largest, 1059 ms)."""
    g = gate(tmp_path, latency=True)
    lat, ref = g.criteria["inference_latency_no_increase"], g.criteria["refresh_p95"]
    assert (lat.status, lat.reference, lat.candidate) == ("pass", 118.0, 120.5)
    assert (ref.status, ref.candidate, ref.bound) == ("pass", 1056.0, 1059.0)
    assert g.passed


def test_timings_of_another_model_are_an_input_error(tmp_path):
    paths = write_inputs(tmp_path)
    paths["refresh"].write_text(paths["refresh"].read_text().replace(",c,", ",r,"))
    with pytest.raises(InputError, match="refresh.csv: whole-refresh timings of another model"):
        gate_from_files(settings(), **paths)


def test_a_latency_measured_on_another_model_file_is_not_used(tmp_path, caplog):
    """A diagnostic of another ONNX sha (the card changed since ``make latency``) is stale: not used."""
    paths = write_inputs(tmp_path)
    (paths["models"] / "c.yaml").write_text(f"onnx: c.onnx\nsha256: {'d' * 64}\n")
    with caplog.at_level(logging.WARNING, logger="candor.gate"):
        g = gate_from_files(settings(), latency=paths["latency"], **{k: paths[k] for k in ("outcomes", "detection",
                                                                                           "models")})
    assert g.criteria["inference_latency_no_increase"].status == "not evaluated"
    assert "measured on another model file" in caplog.text
    assert f"rerun: candor latency --set s --out {paths['latency'].as_posix()}/s" in caplog.text


def test_a_latency_without_a_model_card_is_not_used(tmp_path, caplog):
    """No card for the candidate: its model file is unknown, so no latency figure can be trusted;
    the warning says the card is missing (not that another model file was measured)."""
    paths = write_inputs(tmp_path)
    (paths["models"] / "c.yaml").unlink()
    with caplog.at_level(logging.WARNING, logger="candor.gate"):
        g = gate_from_files(settings(), **paths)
    assert g.criteria["inference_latency_no_increase"].status == "not evaluated"
    assert "cannot be tied to a model card: no" in caplog.text and "another model file" not in caplog.text


def test_a_malformed_latency_file_names_it(tmp_path):
    """A latency file that is not a diagnostic is an InputError naming it."""
    paths = write_inputs(tmp_path)
    (paths["latency"] / "s" / "c.json").write_text('{"p95_ms": 3}')
    with pytest.raises(InputError, match=r"latency/s/c.json: not a latency diagnostic"):
        gate_from_files(settings(), **paths)


@pytest.mark.parametrize("absent", TABLES)
def test_an_absent_table_leaves_the_criteria_that_need_it_not_evaluated(tmp_path, caplog, absent):
    """Without the per-frame or per-label table the outcome criteria are ``not evaluated`` (so the
    gate fails, never passes by default); the wrong-targets criterion is still evaluated; the
    absent table is logged."""
    with caplog.at_level(logging.WARNING, logger="candor.gate"):
        g = gate(tmp_path, tables=[t for t in TABLES if t != absent])
    outcome = ("same_frames_and_labels", "micro_precision_higher", "micro_recall_higher", "micro_f1_higher",
               "critical_recall_non_inferior")
    assert {n: g.criteria[n].status for n in outcome} == dict.fromkeys(outcome, "not evaluated")
    assert g.criteria["wrong_targets_no_increase"].status == "pass" and g.per_class == {}
    assert not g.passed and f"s/{absent} is absent" in caplog.text


@pytest.mark.parametrize("wrong,status", [((2, 3), "fail"), ((2, 2), "pass"), ((None, 1), "not evaluated"),
                                          ((2, None), "not evaluated")])
def test_wrong_targets_come_from_each_models_detection_metrics(tmp_path, wrong, status):
    """``<detection>/<set>/<model>.json``'s ``test.critical.total.wrong``; an absent file: not evaluated."""
    assert gate(tmp_path, wrong=wrong).criteria["wrong_targets_no_increase"].status == status


def test_units_cluster_as_stats_cluster_declares_for_the_set(tmp_path):
    """``stats.cluster.detection: session``: the 6 frames fall in 3 sessions. At gate alpha 0.05 an
    exact test needs 6 clusters (2 ** -5 <= 0.05), so the gate refuses to run (an InputError naming
    the table and split) rather than print 3-session numbers; at alpha 0.25 three suffice, and the
    precision test is 3-0 sessions, p = 2 / 2**3 = 0.25."""
    with pytest.raises(InputError, match=r"outcomes/s/detection-frames.csv \(split test\): too few capture sessions "
                                         r"for an exact test at alpha 0.05 \(expected >= 6 sessions, got 3"):
        gate(tmp_path, settings(cluster="session"))
    g = gate(tmp_path / "wide", settings(cluster="session", alpha=0.25))
    crit = g.criteria["micro_precision_higher"]
    assert g.cluster == "session" and crit.p == 0.25
    assert crit.candidate_rate is not None and crit.candidate_rate.clusters == 3


def test_a_frame_with_no_session_or_no_frame_table_is_an_error_by_session(tmp_path):
    """By session, an empty session name is not one unnamed cluster, and label outcomes without the
    per-frame table are not "sessions" that are frames: both InputErrors naming the table."""
    paths = write_inputs(tmp_path)
    f = paths["outcomes"] / "s" / TABLES[0]
    f.write_text(f.read_text().replace("f0,test,s0,", "f0,test,,"))
    with pytest.raises(InputError, match=r"frame with no session name, clustered by session: f0"):
        gate_from_files(settings(cluster="session", alpha=0.25), **paths)
    f.unlink()
    with pytest.raises(InputError, match=r"detection-frames.csv: absent: the label outcomes are clustered by session"):
        gate_from_files(settings(cluster="session", alpha=0.25), **paths)


def test_a_malformed_outcome_table_names_the_file_row_and_column(tmp_path):
    """The tables are read by the contract's reader: a bad cell is an InputError naming it."""
    paths = write_inputs(tmp_path)
    f = paths["outcomes"] / "s" / TABLES[0]
    f.write_text(f.read_text().replace("f0,test,s0,1.0,r,1,1,1", "f0,test,s0,1.0,r,one,1,1"))
    with pytest.raises(InputError, match=r"outcomes/s/detection-frames.csv:row 2.tp: bad value"):
        gate_from_files(settings(), **paths)


@pytest.mark.parametrize("gp,where,what", [
    ({"set": "birds"}, "p.yaml:gate.set", "unknown detection set"),
    ({"reference": "x"}, "p.yaml:gate.reference", "not a model of detection set 's'"),   # x is of another set
    ({"candidate": "c2"}, "p.yaml:gate.candidate", "not a model of detection set 's'"),
    ({"split": "train"}, "p.yaml:gate.split", "unknown split"),
])
def test_an_unknown_gate_name_is_an_input_error_naming_the_key(tmp_path, gp, where, what):
    """``gate.set``, ``gate.reference``, ``gate.candidate``, ``gate.split``: an unknown name is an input
    error naming the params key, before any file is read (never a silently failed gate)."""
    s = settings(**gp)
    with pytest.raises(InputError) as info:
        check_gate(s.gate, s.detector, where=s.where)
    assert [(p.where, p.what) for p in info.value.problems] == [(where, what)]
    with pytest.raises(InputError, match=where):
        gate_from_files(s, outcomes=tmp_path / "none", detection=tmp_path / "none", models=tmp_path / "none",
                        latency=None, refresh=None)


def test_every_unknown_name_is_reported_at_once():
    """A wrong reference, candidate and split: three problems in one error, each with what was expected."""
    s = settings(reference="a", candidate="b", split="final")
    with pytest.raises(InputError) as info:
        check_gate(s.gate, s.detector, where="p.yaml")
    assert [p.where for p in info.value.problems] == ["p.yaml:gate.reference", "p.yaml:gate.candidate",
                                                      "p.yaml:gate.split"]
    assert [p.expected for p in info.value.problems] == ["one of: r, c", "one of: r, c", "dev or test"]
    assert check_gate(settings().gate, settings().detector, where="p.yaml") is None


@pytest.mark.parametrize("latency,verdict", [(True, "PASSED"), (False, "NOT EVALUATED")])
def test_write_gate_writes_gate_json_and_logs_the_verdict(tmp_path, caplog, latency, verdict):
    """``gate.json`` is the result's stored form, read back by :meth:`GateResult.from_json`."""
    g = gate(tmp_path, latency=latency)
    out = tmp_path / "metrics" / "gate.json"
    with caplog.at_level(logging.INFO, logger="candor.gate"):
        write_gate(g, out)
    doc = json.loads(out.read_text())
    assert doc == g.as_json() and doc["passed"] is latency
    assert GateResult.from_json(doc, where=str(out)).as_json() == doc
    assert f"gate {verdict} -> {out}" in caplog.text
    assert ("all criteria met" in caplog.text) is latency and ("refresh_p95" in caplog.text) is not latency


@pytest.mark.parametrize("present", [TABLES, TABLES[:1], ()])
def test_tables_the_stats_stage_already_parsed_give_the_same_gate(tmp_path, caplog, present):
    """``parsed``: the outcome tables :func:`candor_eval.review.collect.read_inputs` read for the stats stage
    (every set's, paths relative to the outcomes root): the same gate, and the same warning for an absent one,
    as reading them again."""
    from candor_eval.review.collect import read_inputs

    paths = write_inputs(tmp_path, tables=present)
    inputs = read_inputs(outcomes=paths["outcomes"], metrics=[], root=tmp_path, detection_sets=["s", "other"],
                         lots=False)
    assert sorted(inputs.tables) == sorted(f"s/{n}" for n in present)
    runs = []
    for parsed in (None, inputs.tables):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="candor.gate"):
            g = gate_from_files(settings(), outcomes=paths["outcomes"], detection=paths["detection"],
                                models=paths["models"], latency=None, parsed=parsed)
        runs.append((g.as_json(), [r.getMessage() for r in caplog.records]))
    assert runs[0] == runs[1]
    assert len(runs[0][1]) == len(TABLES) - len(present)
