"""candor_eval/review/collect.py: rates only from counts blocks, paired comparisons per track, by hand."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.collect import (
    Inputs,
    build_stats,
    metrics_prefix,
    paired_stats,
    rate_key,
    rates_from_counts,
    read_inputs,
    references,
)
from candor_eval.review.params import StatsParams
from candor_eval.review.stats_file import StatsFile
from candor_eval.stats.outcomes import TABLES, parse_table
from candor_eval.stats.units import units_from_tables


def test_rates_come_only_from_counts_blocks():
    doc = {"test": {"micro": {"precision": 0.75, "tp": 3, "fp": 1}, "hit_rate": 0.5, "n": 4},
           "counts": {"test.micro.precision": {"k": 3, "n": 4, "unit": "detection"}}}
    rates = rates_from_counts({"detection.m": ("m.json", doc), "x": ("x.json", {"hit_rate": 0.5, "n": 2})},
                              confidence=0.95)
    assert list(rates) == ["detection.m.test.micro.precision"]    # hit_rate has no count: not guessed
    r = rates["detection.m.test.micro.precision"]
    assert (r.k, r.n, r.unit, r.rate) == (3, 4, "detection", 0.75)


def test_a_malformed_count_names_the_file_and_key():
    doc = {"counts": {"a.rate": {"k": 5, "n": 4, "unit": "lot"}}}
    with pytest.raises(InputError, match=r"m.json:counts.a.rate: bad count"):
        rates_from_counts({"m": ("m.json", doc)}, confidence=0.95)


@pytest.mark.parametrize("prefix,key,expected", [
    ("identification", "identification.prompt-a.all.hit_rate", "identification.prompt-a.all.hit_rate"),
    ("detection.demo-v1", "test.micro.recall", "detection.demo-v1.test.micro.recall"),
    ("fields.prompt-a", "cases.c.fields.item.x.score", "fields.prompt-a.cases.c.fields.item.x.score"),
    ("valuation", "prompt-a.in_band_rate", "valuation.prompt-a.in_band_rate"),
])
def test_rate_key(prefix, key, expected):
    assert rate_key(prefix, key) == expected


def test_metrics_prefix():
    root = Path("metrics")
    assert metrics_prefix(Path("metrics/detection/demo-v1.json"), root) == "detection.demo-v1"
    assert metrics_prefix(Path("metrics/identification.json"), root) == "identification"
    assert metrics_prefix(Path("/elsewhere/x.json"), root) == "x"


def test_fields_track_and_valuation_track():
    tables = {
        "fields.csv": parse_table(TABLES["fields.csv"],
                                  "case,candidate,position,field,hits,total\nc,prompt-a,0,x,3,3\nc,prompt-b,0,x,1,3\n"
                                  "c,prompt-a,1,y,0,0\nc,prompt-b,1,y,2,2\n", where="f.csv"),
        "valuation.csv": parse_table(TABLES["valuation.csv"],
                                     "lot,candidate,estimate,ratio,in_band,hedged,comps_precision,comps_recall\n"
                                     "L1,prompt-a,1,1,1,0,1,1\nL1,prompt-b,1,1,0,0,1,1\nL2,prompt-b,1,1,1,0,1,1\n",
                                     where="v.csv"),
    }
    paired = paired_stats(units_from_tables(tables), references("prompt-a", {}), alpha=0.05, confidence=0.95,
                          where="p.yaml")
    f = paired["fields.majority"].candidates["prompt-b"]
    # A's (c, 1, y) has total 0
    assert (f.n, f.a_only, f.b_only, f.only_in_b, f.a.unit) == (1, 1, 0, ("c/1/y",), "(case, field)")
    v = paired["valuation.in_band"].candidates["prompt-b"]
    assert (v.n, v.a_only, v.only_in_b) == (1, 1, ("L2",))
    assert paired["valuation.in_band"].reference == "prompt-a"


def test_build_stats_round_trips_through_the_stats_file():
    doc = {"counts": {"all.hit_rate": {"k": 1, "n": 3, "unit": "run"}}}
    tables = {"identification.csv": parse_table(
        TABLES["identification.csv"], "lot,tier,candidate,run,outcome,count_exact\n"
        "L1,held,prompt-a,1,hit,\nL1,held,prompt-b,1,wrong,\n", where="i.csv")}
    s = build_stats(Inputs(tables=tables, metrics={"identification": ("i.json", doc)},
                           presence={"i.csv": "present", "v.csv": "absent"}), params=StatsParams(),
                    refs=references("prompt-a", {}), where="p.yaml")
    assert s.absent == ["v.csv"]
    assert StatsFile.from_json(s.as_json(), where="stats.json").as_json() == s.as_json()
    with pytest.raises(InputError, match="stats.json: not a stats file"):
        StatsFile.from_json({"rates": {}}, where="stats.json")


def test_params_defaults():
    """No candidate's name is a default: the lots reference is resolved by the stage."""
    p = StatsParams()
    assert (p.confidence, p.alpha, p.reference.lots) == (0.95, 0.05, None)


def test_references_lots_candidate_and_each_sets_first_model():
    refs = references("prompt-a", {"demo": ["m1", "m2"], "birds": ["y8", "m1"]})
    assert refs == {"identification": "prompt-a", "fields": "prompt-a", "valuation": "prompt-a",
                    "detection.demo": "m1", "detection.birds": "y8"}


def test_references_of_a_project_with_one_track():
    """No lots reference: no lots track; no detection set: no detection track."""
    assert references(None, {"demo": ["m1", "m2"]}) == {"detection.demo": "m1"}
    assert references("ocr", {}) == {"identification": "ocr", "fields": "ocr", "valuation": "ocr"}


def test_read_inputs_of_a_detector_only_project_lists_no_lots_table(tmp_path):
    """Without the lots track, no lots table is read or listed as absent (so none is warned about)."""
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "detection-frames.csv").write_text("frame,split,session,zoom,model,tp,fp,fn\n"
                                                            "f1,test,s,1,m1,1,0,0\n")
    got = read_inputs(outcomes=tmp_path, metrics=[], root=tmp_path, detection_sets=["demo"], lots=False)
    assert got.presence == {f"{tmp_path.as_posix()}/demo/detection-frames.csv": "present",
                            f"{tmp_path.as_posix()}/demo/detection-labels.csv": "absent"}
    assert list(got.tables) == ["demo/detection-frames.csv"]
    both = read_inputs(outcomes=tmp_path, metrics=[], root=tmp_path, detection_sets=["demo"])
    assert f"{tmp_path.as_posix()}/identification.csv" in both.presence


def test_build_stats_of_a_detector_only_project_has_no_lots_keys():
    """No lots reference: no lots reference, comparison or ``fields`` cluster in the stats file."""
    frames = "frame,split,session,zoom,model,tp,fp,fn\n"
    tables = {"demo/detection-frames.csv": parse_table(TABLES["detection-frames.csv"], frames +
                                                       "f1,test,s,1,m1,1,0,0\nf1,test,s,1,m2,0,1,0\n", where="d.csv")}
    s = build_stats(Inputs(tables=tables, metrics={}, presence={}), params=StatsParams(),
                    refs=references(None, {"demo": ["m1", "m2"]}), where="p.yaml")
    assert s.reference == {"detection.demo": "m1"} and s.cluster == {"detection.demo": "frame"}
    assert sorted(s.paired) == ["detection.demo.test.false_positives", "detection.demo.test.frame_error_free"]


def test_detection_sets_are_separate_tracks_each_with_its_reference():
    frames = "frame,split,session,zoom,model,tp,fp,fn\n"
    tables = {
        "demo/detection-frames.csv": parse_table(TABLES["detection-frames.csv"], frames +
                                                 "f1,test,s,1,m1,1,0,0\nf1,test,s,1,m2,0,1,0\n", where="d.csv"),
        "birds/detection-frames.csv": parse_table(TABLES["detection-frames.csv"], frames +
                                                  "f1,test,s,1,y8,1,0,0\nf1,test,s,1,m1,1,0,0\n", where="b.csv"),
    }
    refs = references("prompt-a", {"demo": ["m1", "m2"], "birds": ["y8", "m1"]})
    paired = paired_stats(units_from_tables(tables), refs, alpha=0.05, confidence=0.95, where="p.yaml")
    assert sorted(paired) == ["detection.birds.test.false_positives", "detection.birds.test.frame_error_free",
                              "detection.demo.test.false_positives", "detection.demo.test.frame_error_free"]
    demo, birds = paired["detection.demo.test.frame_error_free"], paired["detection.birds.test.frame_error_free"]
    assert (demo.reference, list(demo.candidates)) == ("m1", ["m2"])       # frame f1 of demo is not f1 of birds
    assert (birds.reference, list(birds.candidates)) == ("y8", ["m1"])
    assert (demo.candidates["m2"].a_only, birds.candidates["m1"].a_only) == (1, 0)
    with pytest.raises(InputError, match=r"p.yaml:detector.sets \(first model\) \(detection.demo\)"):
        paired_stats(units_from_tables(tables), references("prompt-a", {"demo": ["m9"], "birds": ["y8"]}),
                     alpha=0.05, confidence=0.95, where="p.yaml")


def test_a_session_in_two_splits_is_refused_before_the_session_count():
    """Clustered by session, a session with dev and test frames is leakage: named with its frames."""
    from candor_eval.review.collect import check_sessions

    rows = [{"frame": f"f{i}", "split": "dev" if i < 7 else "test", "session": f"s{i % 7}", "model": "m"}
            for i in range(14)]
    with pytest.raises(InputError) as err:
        check_sessions({"d/detection-frames.csv": rows}, {"d": "session"}, alpha=0.05)
    assert len(err.value.problems) == 7
    assert str(err.value.problems[0]) == "d/detection-frames.csv: session 's0' lies in two splits: dev frames f0; " \
                                         "test frames f7"
    check_sessions({"d/detection-frames.csv": rows}, {"d": "frame"}, alpha=0.05)     # by frame: not checked
