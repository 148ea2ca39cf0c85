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


def _random_cell(rng, kind: str, *, bad: bool) -> str:
    """A cell of column type ``kind``: valid, or (``bad``) one of the near misses the reader must refuse."""
    if bad:
        return rng.choice({"int": ["-1", "+2", "1.0", " 3", "\u0663", "", str(2 ** 53)],
                           "bool": ["2", "", "true", " 1"], "bool?": ["2", "true", "0 "],
                           "outcome": ["Hit", "", "miss"]}.get(kind, [""]))
    return {"int": lambda: str(rng.choice([0, 1, 2, 7, 10, 2 ** 53 - 1])), "bool": lambda: rng.choice("01"),
            "bool?": lambda: rng.choice(["0", "1", ""]), "outcome": lambda: rng.choice(["hit", "abstain", "wrong"]),
            }.get(kind, lambda: rng.choice(["a", "b", "'=x", "x y", "c,1"]))()


def test_the_column_reader_is_the_row_by_row_check_on_random_tables():
    """:func:`parse_table` reads a table without problems column by column and hands any other to
    the row-by-row check: on random tables of every spec, valid or with one bad cell, repeated key or
    hits above total, both give the same rows, or the column reader gives none and the check raises."""
    import csv
    import io
    import random

    from candor_eval.stats import outcomes as oc

    rng = random.Random(20261203)
    outcomes = {"ok": 0, "bad": 0}
    for trial in range(400):
        spec = rng.choice(list(TABLES.values()))
        columns = list(spec.written if rng.random() < 0.5 else spec.columns) + (["extra"] if trial % 3 == 0 else [])
        rows = []
        for i in range(rng.randint(0, 12)):
            row = {c: _random_cell(rng, spec.types.get(c, "str"), bad=False) for c in columns}
            row[spec.key[0]] = f"k{i}"                              # distinct keys unless a repeat is planted
            if spec.name == "fields.csv":
                row["hits"] = str(min(int(row["hits"]), int(row["total"])))
            rows.append(row)
        flaw = rng.choice(["none", "none", "cell", "repeat", "empty key", "hits"]) if rows else "none"
        target = rng.choice(rows) if rows else {}
        if flaw == "cell":
            col = rng.choice([c for c in columns if c in spec.types] or columns)
            target[col] = _random_cell(rng, spec.types.get(col, "str"), bad=True)
        elif flaw == "repeat" and len(rows) > 1:
            other = rng.choice([r for r in rows if r is not target])
            target.update({c: other[c] for c in spec.key})
        elif flaw == "empty key":
            target[rng.choice([c for c in spec.key if c not in spec.types])] = ""
        elif flaw == "hits" and spec.name == "fields.csv":
            target["hits"], target["total"] = "3", "2"
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([r[c] for c in columns] for r in rows)
        table = oc.parse_rows(buf.getvalue(), where="t.csv", columns=spec.columns)
        read = [c for c in spec.written if c in columns]
        fast = oc._valid_rows(spec, tuple(read), [raw for _, raw in table.rows])
        try:
            checked = oc._checked_rows(spec, tuple(read), table.rows, where="t.csv")
        except InputError:
            assert fast is None
            outcomes["bad"] += 1
            continue
        assert fast is not None and fast == checked
        assert [list(r) for r in fast] == [list(r) for r in checked]          # the same columns, in order
        assert [[type(v) for v in r.values()] for r in fast] == [[type(v) for v in r.values()] for r in checked]
        outcomes["ok"] += 1
    assert outcomes["ok"] > 100 and outcomes["bad"] > 50                 # both kinds were tried
