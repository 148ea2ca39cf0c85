"""candor_eval/stats/units.py: outcome rows reduced to paired units, by hand."""
from __future__ import annotations

from candor_eval.stats.units import (
    detection_units,
    fields_units,
    identification_units,
    sessions_across_splits,
    valuation_units,
)


def test_identification_units_majority_per_lot():
    rows = []
    for cand, outs in (("a", ["hit", "hit", "wrong"]), ("b", ["hit", "abstain", "wrong"])):
        for run, o in enumerate(outs):
            rows.append(dict(lot="L1", tier="held", candidate=cand, run=run, outcome=o,
                             count_exact=True if run else None))
    u = identification_units(rows)
    assert u["identification.hit"].values == {"a": {("L1",): True}, "b": {("L1",): False}}
    assert u["identification.hit"].unit == "lot"
    assert u["identification.held.hit"].values["a"] == {("L1",): True}
    assert u["identification.not_wrong"].values == {"a": {("L1",): True}, "b": {("L1",): True}}
    # count: runs 1 and 2 labelled, both exact -> majority of labelled runs
    assert u["identification.count_exact"].values["a"] == {("L1",): True}


def test_identification_units_even_runs_tie_is_not_majority():
    rows = [dict(lot="L", tier="photo", candidate="a", run=i, outcome=o, count_exact=None)
            for i, o in enumerate(["hit", "wrong"])]
    u = identification_units(rows)
    assert u["identification.hit"].values["a"][("L",)] == 0
    assert "identification.count_exact" not in u


def test_fields_valuation_detection_units():
    f = fields_units([dict(case="c", candidate="a", position=0, field="x", hits=2, total=3),
                      dict(case="c", candidate="a", position=1, field="y", hits=1, total=2),
                      dict(case="c", candidate="a", position=2, field="x", hits=0, total=3),   # a repeated path
                      dict(case="c", candidate="a", position=3, field="z", hits=0, total=0)])
    assert f["fields.majority"].values["a"] == {("c", "0", "x"): True, ("c", "1", "y"): False,
                                                  ("c", "2", "x"): False}
    v = valuation_units([dict(lot="L1", candidate="a", in_band=True),
                         dict(lot="L2", candidate="a", in_band=None),
                         dict(lot="L3", candidate="a", in_band=False)])
    assert v["valuation.in_band"].values["a"] == {("L1",): True, ("L2",): False, ("L3",): False}
    d = detection_units(
        [dict(frame="f1", split="test", model="m", tp=2, fp=0, fn=0),
         dict(frame="f2", split="test", model="m", tp=1, fp=1, fn=0)],
        [dict(frame="f1", split="test", label="0", **{"class": "deer"}, model="m", found=True),
         dict(frame="f2", split="test", label="0", **{"class": "tree"}, model="m", found=False)],
        track="detection.demo")
    assert d["detection.demo.test.frame_error_free"].values["m"] == {("f1",): True, ("f2",): False}
    assert d["detection.demo.test.label_found"].values["m"] == {("f1", "0"): True, ("f2", "0"): False}
    assert d["detection.demo.test.class.deer.label_found"].values["m"] == {("f1", "0"): True}


def test_units_name_their_clusters():
    f = fields_units([dict(case="c1", candidate="a", position=0, field="x", hits=2, total=3),
                      dict(case="c1", candidate="a", position=1, field="y", hits=1, total=3),
                      dict(case="c2", candidate="a", position=0, field="x", hits=3, total=3)])["fields.majority"]
    assert (f.cluster, f.cluster_of) == ("case", {("c1", "0", "x"): "c1", ("c1", "1", "y"): "c1",
                                                  ("c2", "0", "x"): "c2"})
    frames = [dict(frame="f1", split="test", session="s1", model="m", tp=1, fp=2, fn=0),
              dict(frame="f2", split="test", session="s1", model="m", tp=0, fp=0, fn=1)]
    labels = [dict(frame=f, split="test", label="0", model="m", found=True, **{"class": "deer"}) for f in ("f1", "f2")]
    by_frame = detection_units(frames, labels, track="detection.d")
    assert by_frame["detection.d.test.label_found"].cluster_of == {("f1", "0"): "f1", ("f2", "0"): "f2"}
    by_session = detection_units(frames, labels, track="detection.d", cluster="session")
    assert by_session["detection.d.test.label_found"].cluster_of == {("f1", "0"): "s1", ("f2", "0"): "s1"}
    fp = by_session["detection.d.test.false_positives"]
    assert (fp.kind, fp.values["m"], fp.cluster) == ("count", {("f1",): 2, ("f2",): 0}, "session")
    lots = identification_units([dict(lot="L", tier="held", candidate="a", run=0, outcome="hit", count_exact=None)])
    assert lots["identification.hit"].cluster_of is None                 # each lot its own cluster


def test_error_kinds_are_paired_per_frame_when_the_table_has_them():
    from candor_eval.stats.multiple import family
    row = dict(frame="f1", split="test", session="s", model="m", tp=1, fp=3, fn=2, fp_localisation=1,
               fp_class_confusion=0, fp_duplicate=0, fp_background=2, fp_both=0, fn_aimed=1, fn_missed=1, tp_strict=1)
    u = detection_units([row], [], track="detection.d")
    kinds = sorted(m for m in u if ".error." in m)
    assert kinds == sorted(f"detection.d.test.error.{k}" for k in ("fp_localisation", "fp_class_confusion",
                                                                      "fp_duplicate", "fp_background", "fp_both",
                                                                      "fn_aimed", "fn_missed"))
    assert u["detection.d.test.error.fp_background"].values == {"m": {("f1",): 2}}
    assert u["detection.d.test.error.fp_background"].kind == "count"
    assert family("detection.d.test.error.fp_background") == "detection.d.test.error.*"
    old = {k: v for k, v in row.items() if not k.startswith(("fp_", "fn_", "tp_"))}      # a table from before
    assert not [m for m in detection_units([old], [], track="detection.d") if ".error." in m]


def test_sessions_across_splits_lists_each_frame_once_per_split():
    rows = [{"frame": f, "split": sp, "session": s, "model": m} for m in ("a", "b")
            for f, sp, s in [("f1", "dev", "s1"), ("f2", "test", "s1"), ("f3", "test", "s1"), ("f4", "test", "s2"),
                             ("f5", "dev", ""), ("f6", "test", "")]]
    assert sessions_across_splits(rows) == {"s1": {"dev": ["f1"], "test": ["f2", "f3"]}}
    assert sessions_across_splits([r for r in rows if r["frame"] != "f1"]) == {}


def test_cluster_totals_sum_the_common_frames_of_each_cluster():
    from candor_eval.stats.units import cluster_totals
    a = {"f1": {"tp": 1, "fp": 2}, "f2": {"tp": 3, "fp": 0}, "f3": {"tp": 4, "fp": 4}, "only-a": {"tp": 9, "fp": 9}}
    b = {"f1": {"tp": 0, "fp": 1}, "f2": {"tp": 2, "fp": 2}, "f3": {"tp": 1, "fp": 0}}
    assert cluster_totals(a, b, of={"f1": "s1", "f2": "s1", "f3": "s2"}, columns=("tp", "fp")) == (
        [(4, 2), (4, 4)], [(2, 3), (1, 0)])
    assert cluster_totals(a, b, of={}, columns=("tp",)) == ([(1,), (3,), (4,)], [(0,), (2,), (1,)])  # by frame
