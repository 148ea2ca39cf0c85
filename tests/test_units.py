"""candor/stats/units.py: outcome rows reduced to paired units, by hand."""
from __future__ import annotations

from candor.stats.units import detection_units, fields_units, identification_units, valuation_units


def test_identification_units_majority_per_lot():
    rows = []
    for cand, outs in (("a", ["hit", "hit", "wrong"]), ("b", ["hit", "abstain", "wrong"])):
        for run, o in enumerate(outs):
            rows.append(dict(lot="L1", tier="held", candidate=cand, run=run, outcome=o,
                             count_exact=True if run else None))
    u = identification_units(rows)
    assert u["identification.hit"].outcomes == {"a": {("L1",): True}, "b": {("L1",): False}}
    assert u["identification.hit"].unit == "lot"
    assert u["identification.held.hit"].outcomes["a"] == {("L1",): True}
    assert u["identification.not_wrong"].outcomes == {"a": {("L1",): True}, "b": {("L1",): True}}
    # count: runs 1 and 2 labelled, both exact -> majority of labelled runs
    assert u["identification.count_exact"].outcomes["a"] == {("L1",): True}


def test_identification_units_even_runs_tie_is_not_majority():
    rows = [dict(lot="L", tier="photo", candidate="a", run=i, outcome=o, count_exact=None)
            for i, o in enumerate(["hit", "wrong"])]
    u = identification_units(rows)
    assert u["identification.hit"].outcomes["a"][("L",)] is False
    assert "identification.count_exact" not in u


def test_fields_valuation_detection_units():
    f = fields_units([dict(case="c", candidate="a", position=0, field="x", hits=2, total=3),
                      dict(case="c", candidate="a", position=1, field="y", hits=1, total=2),
                      dict(case="c", candidate="a", position=2, field="x", hits=0, total=3),   # a repeated path
                      dict(case="c", candidate="a", position=3, field="z", hits=0, total=0)])
    assert f["fields.majority"].outcomes["a"] == {("c", "0", "x"): True, ("c", "1", "y"): False,
                                                  ("c", "2", "x"): False}
    v = valuation_units([dict(lot="L1", candidate="a", in_band=True),
                         dict(lot="L2", candidate="a", in_band=None),
                         dict(lot="L3", candidate="a", in_band=False)])
    assert v["valuation.in_band"].outcomes["a"] == {("L1",): True, ("L2",): False, ("L3",): False}
    d = detection_units(
        [dict(frame="f1", split="test", model="m", tp=2, fp=0, fn=0),
         dict(frame="f2", split="test", model="m", tp=1, fp=1, fn=0)],
        [dict(frame="f1", split="test", label="0", **{"class": "deer"}, model="m", found=True),
         dict(frame="f2", split="test", label="0", **{"class": "tree"}, model="m", found=False)],
        track="detection.demo")
    assert d["detection.demo.test.frame_error_free"].outcomes["m"] == {("f1",): True, ("f2",): False}
    assert d["detection.demo.test.label_found"].outcomes["m"] == {("f1", "0"): True, ("f2", "0"): False}
    assert d["detection.demo.test.class.deer.label_found"].outcomes["m"] == {("f1", "0"): True}
