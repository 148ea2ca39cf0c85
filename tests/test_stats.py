"""stages/stats.py on the hand-made fixtures in tests/data/stats/ (expected values by hand)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from candor.common.errors import InputError
from candor.stats.outcomes import TABLES, parse_table
from stages.stats import (
    Reference, StatsParams, counts_for, find_rates, main, metrics_prefix, paired_stats, units_from_tables,
)

DATA = Path(__file__).parent / "data" / "stats"


def run_stage(tmp_path: Path, *, params: str = "stats: {confidence: 0.95, alpha: 0.05}\n",
              outcomes: Path | None = None) -> tuple[int, Path]:
    (tmp_path / "params.yaml").write_text(params)
    out = tmp_path / "out" / "stats.json"
    code = main(["run", "--outcomes", str(outcomes or DATA / "outcomes"),
                 "--metrics", str(DATA / "metrics" / "identification.json"), str(DATA / "metrics" / "detection"),
                 str(DATA / "metrics" / "valuation.json"),
                 "--metrics-root", str(DATA / "metrics"), "--params", str(tmp_path / "params.yaml"),
                 "--out", str(out)])
    return code, out


def test_stage_on_fixtures(tmp_path):
    code, out = run_stage(tmp_path)
    assert code == 0
    s = json.loads(out.read_text())
    assert s["min_k0"] == 6
    # inputs: absent tables and metrics are listed, not dropped
    assert s["inputs"][str(DATA / "outcomes" / "valuation.csv")] == "absent"
    assert s["inputs"][str(DATA / "outcomes" / "fields.csv")] == "absent"
    assert s["inputs"][str(DATA / "metrics" / "valuation.json")] == "absent"
    assert s["inputs"][str(DATA / "outcomes" / "identification.csv")] == "present"
    # identification hit, per lot majority: A hits L1 L2, B hits L1 L3 L4 (by hand)
    hit = s["paired"]["identification.hit"]["prompt-b"]
    assert (hit["n"], hit["a_only"], hit["b_only"], hit["p"], hit["min_k0"]) == (4, 1, 2, 1.0, None)
    assert hit["reference"] == "prompt-a"
    assert (hit["reference_rate"], hit["rate"]) == (0.5, 0.75)
    lo, hi = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert (hit["lo"], hit["hi"]) == (round(lo, 6), round(hi, 6))
    assert hit["verdict"] == "no detectable difference"
    count = s["paired"]["identification.count_exact"]["prompt-b"]
    assert (count["n"], count["a_only"], count["b_only"], count["p"]) == (3, 0, 2, 0.5)
    assert s["paired"]["identification.held.hit"]["prompt-b"]["a_only"] == 1
    nw = s["paired"]["identification.not_wrong"]["prompt-b"]
    assert (nw["a_only"], nw["b_only"]) == (1, 1)
    # detection: frames f1 f2 f3 on test; f4 (dev) only has the reference, nothing to compare
    fr = s["paired"]["detection.test.frame_error_free"]["demo-v2"]
    assert (fr["n"], fr["a_only"], fr["b_only"], fr["reference_rate"], fr["rate"]) == (3, 0, 1, 0.333333, 0.666667)
    lab = s["paired"]["detection.test.label_found"]["demo-v2"]
    assert (lab["n"], lab["a_only"], lab["b_only"], lab["reference_rate"], lab["rate"]) == (5, 0, 1, 0.6, 0.8)
    deer = s["paired"]["detection.test.class.deer.label_found"]["demo-v2"]
    assert (deer["n"], deer["reference_rate"], deer["rate"]) == (2, 0.5, 1.0)
    assert "detection.dev.label_found" not in s["paired"]
    # rates from metrics files, with counts found as documented
    r = s["rates"]
    assert (r["identification.prompt-a.all.hit"]["k"], r["identification.prompt-a.all.hit"]["n"]) == (5, 12)
    assert (r["identification.prompt-a.held.wrong"]["k"], r["identification.prompt-a.held.wrong"]["n"]) == (1, 6)
    assert (r["identification.prompt-a.count.exact"]["k"], r["identification.prompt-a.count.exact"]["n"]) == (4, 8)
    micro = r["detection.demo-v1.test.micro.recall"]
    lo, hi = proportion_confint(3, 5, alpha=0.05, method="wilson")
    assert micro == {"rate": 0.6, "lo": round(lo, 6), "hi": round(hi, 6), "k": 3, "n": 5}
    assert (r["detection.demo-v1.test.micro.precision"]["k"], r["detection.demo-v1.test.micro.precision"]["n"]) == (3, 4)
    assert r["detection.demo-v1.scores.item.itemType.score"]["n"] == 3
    assert r["detection.demo-v1.test.per_class.sheep.recall"]["k"] == 0
    assert not any(k.endswith(".f1") for k in r)  # F1 is not a proportion of cases
    assert set(s["no_interval"]) == {"identification.prompt-a.odd.hit",
                                    "detection.demo-v1.test.per_class.sheep.precision"}


def test_stage_output_is_byte_identical(tmp_path):
    _, out = run_stage(tmp_path)
    first = out.read_bytes()
    _, out = run_stage(tmp_path)
    assert out.read_bytes() == first


def test_stage_rejects_unknown_reference(tmp_path, capsys):
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


def test_fields_track_and_valuation_track():
    tables = {
        "fields.csv": parse_table(TABLES["fields.csv"],
                                  "case,candidate,field,hits,total\nc,prompt-a,x,3,3\nc,prompt-b,x,1,3\n"
                                  "c,prompt-a,y,0,0\nc,prompt-b,y,2,2\n", where="f.csv"),
        "valuation.csv": parse_table(TABLES["valuation.csv"],
                                     "lot,candidate,estimate,ratio,in_band,hedged,comps_precision,comps_recall\n"
                                     "L1,prompt-a,1,1,1,0,1,1\nL1,prompt-b,1,1,0,0,1,1\nL2,prompt-b,1,1,1,0,1,1\n",
                                     where="v.csv"),
    }
    paired = paired_stats(units_from_tables(tables), Reference(), alpha=0.05, confidence=0.95)
    f = paired["fields.majority"]["prompt-b"]
    assert (f["n"], f["a_only"], f["b_only"], f["only_in_candidate"]) == (1, 1, 0, 1)  # (c, y) has total 0 for A
    v = paired["valuation.in_band"]["prompt-b"]
    assert (v["n"], v["a_only"], v["only_in_candidate"]) == (1, 1, 1)


@pytest.mark.parametrize("key,value,siblings,parent,expected", [
    ("precision", 0.75, {"tp": 3, "fp": 1}, None, (3, 4)),
    ("precision", 0.75, {"tp": 3, "support": 4}, None, "precision without tp and fp next to it"),
    ("recall", 0.6, {"tp": 3, "fn": 2}, None, (3, 5)),
    ("recall", 0.6, {"tp": 3, "support": 5}, None, (3, 5)),
    ("score", 0.666667, {"hits": 2, "total": 3}, None, (2, 3)),
    ("hit_rate", 0.5, {"hits": 7, "n": 14}, None, (7, 14)),
    ("wrong", 0.25, {"wrong_count": 1, "n": 4}, None, (1, 4)),
    ("hit_rate", 0.602564, {"hit": 47, "n": 78}, None, (47, 78)),
    ("exact_rate", 0.75, {"exact": 3, "n": 4}, None, (3, 4)),
    ("score", 0.833333, {"runs": 3}, None, "a mean of scores (no hits/total next to it), not a proportion of cases"),
    ("hit", 0.25, {}, {"n": 8}, (2, 8)),
    ("hit", 0.3, {"n": 8}, None, "rate 0.3 is not k/8 for any integer k"),
    ("in_band", None, {"n": 0}, None, (0, 0)),
    ("hit", 0.5, {}, None, "no count next to it (tp/fp, tp/fn, hits/total or a denominator such as n)"),
    ("hit", 0.5, {"n": True}, None, "no count next to it (tp/fp, tp/fn, hits/total or a denominator such as n)"),
])
def test_counts_for(key, value, siblings, parent, expected):
    assert counts_for(key, value, siblings | {key: value}, parent) == expected


def test_find_rates_names_list_items_and_skips_non_rates():
    doc = {"cases": [{"case": "drill", "fields": [{"field": "a.b", "hits": 1, "total": 2, "score": 0.5}]}],
           "median_ratio": 0.88, "recall": 1.7, "f1": 0.5, "qualified": False}
    found, missing = find_rates(doc, prefix="fields.prompt-a", confidence=0.95)
    assert list(found) == ["fields.prompt-a.cases.drill.fields.a.b.score"]
    assert missing == {}


def test_find_rates_integers_are_counts_not_rates():
    doc = {"held": {"n": 42, "hit": 39, "wrong": 1, "abstain": 0, "hit_rate": 0.928571, "wrong_rate": 0.02381}}
    found, missing = find_rates(doc, prefix="identification", confidence=0.95)
    assert {k: (r.k, r.n) for k, r in found.items()} == {"identification.held.hit_rate": (39, 42),
                                                        "identification.held.wrong_rate": (1, 42)}
    assert missing == {}


def test_single_top_level_key_named_like_the_file_is_not_repeated(tmp_path):
    from stages.stats import build_stats
    doc = {"identification": {"prompt-a": {"all": {"n": 4, "hit": 1, "hit_rate": 0.25}}}}
    s = build_stats(tables={}, metrics={"identification": doc}, inputs={}, params=StatsParams())
    assert list(s["rates"]) == ["identification.prompt-a.all.hit_rate"]


def test_metrics_prefix():
    root = Path("metrics")
    assert metrics_prefix(Path("metrics/detection/demo-v1.json"), root) == "detection.demo-v1"
    assert metrics_prefix(Path("metrics/identification.json"), root) == "identification"
    assert metrics_prefix(Path("/elsewhere/x.json"), root) == "x"


def test_params_defaults():
    p = StatsParams()
    assert (p.confidence, p.alpha, p.reference.lots, p.reference.detector) == (0.95, 0.05, "prompt-a", "demo-v1")


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


def test_cli_wilson_seed_interval(capsys):
    main(["wilson", "15", "17"])
    got = json.loads(capsys.readouterr().out)
    assert (round(got["lo"], 2), round(got["hi"], 2)) == (0.66, 0.97)


@pytest.mark.parametrize("argv", [["wilson", "5", "3"], ["wilson", "1", "3", "--confidence", "1"],
                                  ["mcnemar", "-1", "2"], ["mcnemar", "1", "2", "--alpha", "0"]])
def test_cli_helpers_reject(argv):
    with pytest.raises(InputError):
        main(argv)

