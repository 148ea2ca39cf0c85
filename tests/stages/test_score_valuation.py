"""score-valuation stage: hand-computed metrics and outcome table, audit metrics, guards, bad input."""
from __future__ import annotations

import ast
import csv
import json
import shutil
from pathlib import Path

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages import value
from candor_eval.stages.score_valuation import main
from tests.conftest import ROOT, hint_argv

DATA = ROOT / "tests" / "data" / "comps"


def setup(tmp_path: Path) -> dict[str, str]:
    values = tmp_path / "values"
    values.mkdir()
    shutil.copy(DATA / "expected-values.csv", values / "tiny.csv")
    return {"--values": str(values), "--lots": str(DATA / "lots.csv"), "--comps": str(DATA),
            "--audit": str(DATA / "audit"), "--metrics": str(tmp_path / "m" / "valuation.json"),
            "--outcomes": str(tmp_path / "m" / "outcomes" / "valuation.csv"),
            "--audit-metrics": str(tmp_path / "m" / "audit.json"), "--params": str(DATA / "params.yaml")}


def go(args: dict[str, str]) -> int:
    return run_main(main, [x for kv in args.items() for x in kv])


def test_hand_computed_metrics_and_outcomes(tmp_path):
    """T1: 760.00 / 800.00 = 0.95 in band, comps X1 X2 X5 vs relevant X1 X2: P 2/3, R 1. T2: no
    estimate (not in band), comps X6 X7 = relevant: P 1, R 1. Micro: tp 4, fp 1, fn 0."""
    args = setup(tmp_path)
    assert go(args) == 0
    m = json.loads(Path(args["--metrics"]).read_text())
    assert m == {"tiny": {"lots": 2, "estimated": 1, "no_estimate": 1, "hedged": 0, "in_band": 1,
                          "in_band_rate": 0.5, "median_ratio": 0.95, "worst_error": 1.052632, "worst_lot": "T1",
                          "comps": {"tp": 4, "fp": 1, "fn": 0, "precision": 0.8, "recall": 1.0}},
                 # comps precision/recall: (lot, listing) pairs cluster by lot, so descriptive only
                 "counts": {"tiny.in_band_rate": {"k": 1, "n": 2, "unit": "lot"}}}
    assert Path(args["--outcomes"]).read_text() == (
        "lot,candidate,estimate,ratio,in_band,hedged,comps_precision,comps_recall\n"
        "T1,tiny,760.00,0.950000,1,0,0.666667,1.000000\n"
        "T2,tiny,,,0,0,1.000000,1.000000\n")
    a = json.loads(Path(args["--audit-metrics"]).read_text())
    assert (a["verdicts_changed"], a["actionable_before"], a["actionable_after"]) == (1, 3, 2)
    assert (a["ceiling_sum_before"], a["ceiling_sum_after"], a["ceiling_change_pct"]) == ("1800.00", "750.00", -58.33)
    assert (a["buys_before"], a["buys_stayed_buys"]) == (2, 1)
    assert a["root_causes"] == {"screen_dimension_as_quantity": 1}
    assert a["guards"] == {"screen_dimension_as_quantity": ["lot:T1"]}
    # the rates over lots, with their Wilson intervals (the lot as the unit); the lots of this audit:
    assert a["counts"]["verdicts_changed"] == {"k": 1, "n": a["lots"], "unit": "lot"}
    assert a["counts"]["buys_stayed_buys"] == {"k": 1, "n": 2, "unit": "lot"}
    from candor_eval.stats.rates import wilson
    assert a["intervals"]["buys_stayed_buys"] == wilson(1, 2, unit="lot").as_json() | {"deff": 1.0}
    assert a["intervals"]["buys_stayed_buys"]["lo"] == 0.094531 and a["intervals"]["buys_stayed_buys"]["hi"] == 0.905469


def test_outcome_table_matches_the_contract(tmp_path):
    args = setup(tmp_path)
    go(args)
    rows = list(csv.reader(Path(args["--outcomes"]).open()))
    assert rows[0] == ["lot", "candidate", "estimate", "ratio", "in_band", "hedged", "comps_precision", "comps_recall"]
    assert rows[1:] == sorted(rows[1:])


@pytest.mark.parametrize(("file", "text", "message"), [
    ("audit/audit.csv", "lot,description,pipeline_verdict,pipeline_ceiling,audited_verdict,audited_ceiling,root_cause\n"
     "Z1,x,maybe,1.00,buy,1.00,\n", "audit.csv:row 2.pipeline_verdict: not a verdict"),
    ("audit/audit.csv", "lot,description,pipeline_verdict,pipeline_ceiling,audited_verdict,audited_ceiling,root_cause\n"
     "Z1,x,buy,-1.00,buy,1.00,\n", "audit.csv:row 2.pipeline_ceiling: not an amount"),
    ("audit/audit.csv", "lot,description,pipeline_verdict,pipeline_ceiling,audited_verdict,audited_ceiling,root_cause\n"
     "Z1,x,buy,1.00,buy,1.00,gremlins\n", "audit.csv:row 2.root_cause: not in"),
    ("audit/root_causes.csv", "root_cause,description,guard\ngremlins,x,\n", "root_causes.csv:row 2.guard: no guard"),
    ("relevance.csv", "lot,listing\nT1,X99\n", "relevance.csv:row 2.listing: no such listing"),
    ("relevance.csv", "lot,listing\nT3,X1\n", "relevance.csv:row 2.lot: not a valuation lot"),
    ("values", "lot,run\nT1,1\n", "tiny.csv:row 1: wrong header"),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, file, text, message):
    args = setup(tmp_path)
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    args["--comps"], args["--audit"] = str(data), str(data / "audit")
    target = Path(args["--values"]) / "tiny.csv" if file == "values" else data / file
    target.write_text(text)
    assert go(args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_every_demo_root_cause_has_a_live_guard():
    """Each root cause of the demo audit names a golden-set lot or a test, and that guard exists."""
    lots = {r["id"] for r in csv.DictReader((ROOT / "data" / "lots" / "lots.csv").open())}
    causes = {r["root_cause"]: r["guard"] for r in csv.DictReader((ROOT / "data" / "audit" / "root_causes.csv").open())}
    used = {r["root_cause"] for r in csv.DictReader((ROOT / "data" / "audit" / "audit.csv").open()) if r["root_cause"]}
    assert used <= set(causes) and len(used) >= 4
    for cause, guard in causes.items():
        for g in guard.split(";"):
            kind, _, ref = g.partition(":")
            if kind == "lot":
                assert ref in lots, (cause, g)
            else:
                path, _, name = ref.partition("::")
                tree = ast.parse((ROOT / path).read_text())
                assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, (cause, g)


def test_demo_audit_has_twenty_lots():
    rows = list(csv.DictReader((ROOT / "data" / "audit" / "audit.csv").open()))
    assert len(rows) >= 20


def test_a_candidate_named_counts_is_refused(tmp_path, capsys):
    """``counts`` is the counts block of metrics/valuation.json, so no candidate may take that name."""
    args = setup(tmp_path)
    shutil.copy(DATA / "expected-values.csv", Path(args["--values"]) / "counts.csv")
    params = tmp_path / "params.yaml"
    params.write_text((DATA / "params.yaml").read_text().replace("[tiny]", "[tiny, counts]"))
    assert go(args | {"--params": str(params)}) == 2
    assert "identify.candidates" in capsys.readouterr().err and not Path(args["--metrics"]).exists()


def test_the_rebuild_hint_of_a_values_file_repeats_the_flags_and_parses_as_value(tmp_path, capsys):
    """A missing or bad values file: the hint's ``candor value`` command writes it where this run reads it, from this
    run's lots, comps and params (the answers where identify writes them by default)."""
    args = setup(tmp_path)
    bench = tmp_path / "my bench's lots"
    bench.mkdir()
    shutil.copy(DATA / "lots.csv", bench)
    shutil.copy(DATA / "params.yaml", tmp_path / "my params.yaml")
    args |= {"--lots": str(bench / "lots.csv"), "--params": str(tmp_path / "my params.yaml")}
    values = Path(args["--values"]) / "tiny.csv"
    for broken in ("lot,run\n", None):
        if broken is None:
            values.unlink()
        else:
            values.write_text(broken)
        assert go(args) == 2
        err = capsys.readouterr().err
        back = value.build_parser().parse_args(hint_argv(err, stage="value"))
        assert (back.candidate, back.answers, back.lots, back.comps, back.params, back.out) == (
            "tiny", "build/answers/tiny.jsonl", (bench / "lots.csv").as_posix(), args["--comps"],
            args["--params"], values.as_posix())
