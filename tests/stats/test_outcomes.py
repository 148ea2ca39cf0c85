"""outcomes: the outcome-table contract and its validating reader."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.stats.outcomes import TABLES, parse_table, parse_tables

ID_HEADER = "lot,tier,candidate,run,outcome,count_exact\n"


@pytest.mark.parametrize("text,where_part,what", [
    ("lot,tier,candidate,run,outcome\nL1,held,a,1,hit\n", "t.csv:row 1", "missing column(s) count_exact"),
    (ID_HEADER + "L1,held,a,1,maybe,1\n", "t.csv:row 2.outcome", "bad value"),
    (ID_HEADER + "L1,held,a,x,hit,1\n", "t.csv:row 2.run", "bad value"),
    (ID_HEADER + "L1,held,a,1,hit,2\n", "t.csv:row 2.count_exact", "bad value"),
    (ID_HEADER + "L1,held,a,1,hit,1\nL1,held,a,1,wrong,1\n", "t.csv:row 3", "duplicate case L1/a/1 (first on row 2)"),
    (ID_HEADER + ",held,a,1,hit,1\n", "t.csv:row 2.lot", "empty case key"),
    (ID_HEADER + "L1,held,a,1\n", "t.csv:row 2", "fewer fields than columns"),
    (ID_HEADER + "L1,held,a,1,hit,1,x\n", "t.csv:row 2", "more fields than columns"),
])
def test_parse_table_errors(text, where_part, what):
    with pytest.raises(InputError) as err:
        parse_table(TABLES["identification.csv"], text, where="t.csv")
    assert where_part in err.value.message and what in err.value.message


def test_parse_table_fields_hits_exceed_total():
    with pytest.raises(InputError, match="hits exceed total"):
        parse_table(TABLES["fields.csv"], "case,candidate,position,field,hits,total\nc,a,0,x,4,3\n", where="f.csv")


def test_parse_table_fields_key_is_the_expectation_position():
    """A case may repeat a field path: rows are told apart by position; a repeated position is a duplicate."""
    head = "case,candidate,position,field,hits,total\n"
    assert len(parse_table(TABLES["fields.csv"], head + "c,a,0,x,1,3\nc,a,1,x,2,3\n", where="f.csv")) == 2
    with pytest.raises(InputError, match="duplicate case c/a/1"):
        parse_table(TABLES["fields.csv"], head + "c,a,1,x,1,3\nc,a,1,y,2,3\n", where="f.csv")


def test_parse_table_types_and_extra_columns():
    rows = parse_table(TABLES["valuation.csv"],
                       "lot,candidate,estimate,ratio,in_band,hedged,comps_precision,comps_recall,extra\n"
                       "L1,a,100,1.0,1,0,1.0,1.0,z\nL2,a,,,,0,,,z\n", where="v.csv")
    assert [r["in_band"] for r in rows] == [True, None]
    assert "extra" not in rows[0]


def test_outcome_text_writes_the_spec_columns_and_checks_rows():
    from candor_eval.stats.outcomes import outcome_text

    text = outcome_text("fields.csv", [{"case": "c,1", "candidate": "a", "position": 0, "field": "f", "hits": 1,
                                        "total": 2}, ("c2", "a", 0, "f", 0, 2)])
    assert text == 'case,candidate,position,field,hits,total\n"c,1",a,0,f,1,2\nc2,a,0,f,0,2\n'
    assert parse_table(TABLES["fields.csv"], text, where="fields.csv")[0]["case"] == "c,1"
    with pytest.raises(ValueError, match="are not"):
        outcome_text("fields.csv", [{"case": "c", "field": "f", "candidate": "a", "position": 0, "hits": 1,
                                     "total": 2}])
    with pytest.raises(ValueError, match="does not have the 6 columns"):
        outcome_text("fields.csv", [("c", "a", "f", 1)])


def test_write_outcome_streams_the_same_text_and_writes_nothing_on_a_bad_row(tmp_path):
    from candor_eval.stats.outcomes import outcome_text, write_outcome

    rows = [("c,1", "a", 0, "f", 1, 2), ("c2", "a", 0, "f", 0, 2)]
    write_outcome(tmp_path / "fields.csv", "fields.csv", iter(rows))
    assert (tmp_path / "fields.csv").read_text() == outcome_text("fields.csv", rows)
    with pytest.raises(ValueError, match="does not have the 6 columns"):
        write_outcome(tmp_path / "bad.csv", "fields.csv", iter([rows[0], ("c", "a")]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fields.csv"]


def test_parse_tables_leaves_out_absent_tables_and_reports_every_problem_at_once():
    texts = {"identification.csv": ID_HEADER + "L1,held,a,1,maybe,1\n", "fields.csv": None,
             "valuation.csv": "lot\n"}
    with pytest.raises(InputError) as err:
        parse_tables(texts, where=lambda name: f"out/{name}")
    assert "out/identification.csv:row 2.outcome" in err.value.message
    assert "out/valuation.csv:row 1" in err.value.message
    assert "docs/CONVENTIONS.md" in err.value.message
    got = parse_tables({"identification.csv": ID_HEADER + "L1,held,a,1,hit,\n", "fields.csv": None}, where=str)
    assert list(got) == ["identification.csv"] and got["identification.csv"][0]["count_exact"] is None
