"""Tests for candor_eval/common/tables.py: the one CSV reader and writer."""
from __future__ import annotations

import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from candor_eval.common.errors import InputError
from candor_eval.common.tables import (
    BATCH,
    NUMBER,
    ascii_int,
    csv_text,
    neutralise,
    parse_json,
    parse_rows,
    read_bytes,
    read_json,
    read_rows,
    read_text,
    restore,
    write_csv,
)


def test_rows_carry_spreadsheet_row_numbers_and_extra_columns():
    t = parse_rows("a,b,c\n1,2,3\n\n4,5,6\n", where="t.csv", columns=("a", "b"))
    assert t.header == ("a", "b", "c")
    assert t.rows == ((2, {"a": "1", "b": "2", "c": "3"}), (4, {"a": "4", "b": "5", "c": "6"}))


def test_a_byte_order_mark_never_renames_the_first_column(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes("\ufeffframe,split\nf1,dev\n".encode())
    assert read_rows(p, columns=("frame",)).rows == ((2, {"frame": "f1", "split": "dev"}),)


@pytest.mark.parametrize("text, kw, message", [
    ("a,c\n1,2\n", {"columns": ("a", "b")}, "t.csv:row 1: missing column(s) b"),
    ("b,a\n1,2\n", {"columns": ("a", "b"), "exact": True}, "t.csv:row 1: wrong header (expected a,b, got 'b,a')"),
    ("", {"columns": ("a",)}, "got 'an empty file'"),
    ("a,b\n1,2,3\n", {}, "t.csv:row 2: more fields than columns (expected 2 fields, got 3)"),
    ("a,b\n1\n", {}, "t.csv:row 2: fewer fields than columns"),
])
def test_bad_tables_name_file_row_and_expectation(text, kw, message):
    with pytest.raises(InputError) as err:
        parse_rows(text, where="t.csv", **kw)
    assert message in err.value.message


def test_files_that_are_not_utf8_text_are_named(tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("name\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="latin.csv: not UTF-8 text"):
        read_rows(latin)
    with pytest.raises(InputError, match="is a folder"):
        read_text(tmp_path)
    with pytest.raises(InputError, match="nope.csv: file not found"):
        read_rows(tmp_path / "nope.csv")


def test_writer_quotes_minimally_and_round_trips(tmp_path):
    rows = [(1, "x,y"), ("say \"hi\"", ""), ("two\nlines", 0.5)]
    text = csv_text(["a", "b"], rows)
    assert text == 'a,b\n1,"x,y"\n"say ""hi""",\n"two\nlines",0.5\n'
    write_csv(tmp_path / "o.csv", ["a", "b"], rows)
    assert (tmp_path / "o.csv").read_text() == text
    back = read_rows(tmp_path / "o.csv", columns=("a", "b"), exact=True).rows
    assert [r["a"] for _, r in back] == ["1", 'say "hi"', "two\nlines"]


def test_repeated_column_names_and_unreadable_csv_are_named(tmp_path):
    with pytest.raises(InputError, match=r"t.csv:row 1: repeated column name\(s\) a"):
        parse_rows("a,a\n1,2\n", where="t.csv")
    with pytest.raises(InputError, match=r"t.csv:row 2: not readable as CSV"):
        parse_rows("a\n" + "x" * 200_000 + "\n", where="t.csv")


def test_read_json_names_the_file(tmp_path):
    good, bad, latin = tmp_path / "g.json", tmp_path / "b.json", tmp_path / "l.json"
    good.write_text('{"a": 1}')
    bad.write_text('{"a": ')
    latin.write_bytes('{"a": "caf\xe9"}'.encode("latin-1"))
    assert read_json(good) == {"a": 1}
    with pytest.raises(InputError, match="b.json: not valid JSON"):
        read_json(bad)
    with pytest.raises(InputError, match="l.json: not UTF-8 text"):
        read_json(latin)


@pytest.mark.parametrize("text, value", [("42", 42), ("007", 7), ("\u0664\u0662", None), ("\uff14", None),
                                         ("+4", None), ("-4", None), ("4_2", None), (" 4", None), ("", None)])
def test_ascii_int_takes_ascii_digits_only(text, value):
    assert ascii_int(text) == value


@pytest.mark.parametrize("text, message", [
    ("[1,", "not valid JSON (Expecting value at line 1, column 4)"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"a": "\\ud800"}', "lone surrogate"),
    ('["\\udc00x"]', "lone surrogate"),
])
def test_parse_json_refuses(text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        parse_json(text, where="x.json")


def test_parse_json_keeps_surrogate_pairs_and_escaped_backslashes():
    assert parse_json('["\\ud83d\\ude00", "\\\\ud800"]', where="x.json") == ["\U0001F600", "\\ud800"]


def test_read_text_names_a_folder_and_the_first_foreign_byte(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        read_text(tmp_path)
    (tmp_path / "a.csv").write_bytes(b"ab\xe9")
    with pytest.raises(InputError, match=r"a.csv: not UTF-8 text \(byte 2: b'\\xe9'\)"):
        read_text(tmp_path / "a.csv")


@pytest.mark.parametrize("cell, written", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1+1", "'+1+1"), ("-1+2", "'-1+2"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"), ("'=x", "''=x"), ("''", "'''"),
    ("-0.5", "-0.5"), ("+3", "+3"), ("-2e-05", "-2e-05"), ("'90s", "'90s"), ("a=b", "a=b"), ("", ""),
])
def test_formula_cells_are_neutralised_and_numbers_stay_numbers(cell, written):
    assert neutralise(cell) == written and restore(written) == cell


def test_written_tables_neutralise_text_cells_but_not_numbers():
    text = csv_text(["id", "n"], [("=cmd|' /C calc'!A0", -3), ("-x", -0.25)])
    assert text == "id,n\n'=cmd|' /C calc'!A0,-3\n'-x,-0.25\n"
    assert [r for _, r in parse_rows(text, where="t.csv").rows] == [{"id": "=cmd|' /C calc'!A0", "n": "-3"},
                                                                     {"id": "-x", "n": "-0.25"}]


def test_a_plain_batch_and_a_batch_with_formulas_and_carriage_returns_write_the_rule_s_bytes(tmp_path):
    """Rows go in batches (:data:`BATCH`): a batch of plain cells is written at once, a batch that holds a
    cell to neutralise or a carriage return row by row; each row's bytes are the rule's either way."""
    plain = [("a", 1, 0.5)] * BATCH
    careful = [("b", 2, None)] * 3 + [("=x", -1, "c\rd"), ("1,2", "-y", "'=z")]
    text = csv_text(["k", "n", "v"], plain + careful)
    assert text == ("k,n,v\n" + "a,1,0.5\n" * BATCH + "b,2,None\n" * 3
                    + "'=x,-1,\"c\rd\"\n" + "\"1,2\",'-y,''=z\n")
    write_csv(tmp_path / "t.csv", ["k", "n", "v"], iter(plain + careful))
    assert (tmp_path / "t.csv").read_bytes() == text.encode()


def test_every_cell_is_written_as_str_writes_it_whatever_its_type():
    """Cells by ``str``: a batch of str, int, bool and float cells goes to the csv writer as it is, any other
    batch is converted first (the writer alone would write None as an empty cell, a numpy float by repr,
    and would read an iterator row twice)."""
    import numpy as np

    fast = [("a", 1, True, 0.1, 1e-07, -0.0, 10**20)]
    assert csv_text(["k"] * 7, fast) == "k,k,k,k,k,k,k\na,1,True,0.1,1e-07,-0.0,100000000000000000000\n"
    other = [("a", None, np.float64(0.5), np.int64(3), np.float32(0.25), np.bool_(True))]
    assert csv_text(["k"] * 6, other) == "k,k,k,k,k,k\na,None,0.5,3,0.25,True\n"
    assert csv_text(["a", "b"], [iter(("x", 1)), ["y", 2.5]]) == "a,b\nx,1\ny,2.5\n"
    mixed = [("a", 1)] * (BATCH - 1) + [("b", np.float64(2.0))] + [("c", 3)]       # the one odd cell: batch 1
    assert csv_text(["k", "v"], mixed) == "k,v\n" + "a,1\n" * (BATCH - 1) + "b,2.0\nc,3\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(alphabet=st.sampled_from("=+-@\t\r'x1.e, \"\n"), max_size=6),
                         min_size=2, max_size=2), max_size=5))
def test_every_table_reads_back_as_written_and_no_cell_can_run(rows):
    """Property: the reader restores every cell (round trip), and no written cell starts a formula."""
    text = csv_text(["a", "b"], rows)
    back = [[r["a"], r["b"]] for _, r in parse_rows(text, where="t.csv").rows]
    assert back == rows
    for cell in (neutralise(c) for row in rows for c in row):
        assert not cell or cell[0] not in "=@\t\r" and (cell[0] not in "+-" or NUMBER.fullmatch(cell))


def test_a_capped_read_takes_a_regular_file_up_to_the_cap(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"abcd")
    assert read_bytes(p, max_bytes=4) == b"abcd" and read_text(p, max_bytes=4) == "abcd"
    with pytest.raises(InputError, match=r"t.txt: larger than 3 bytes \(expected a file\)"):
        read_bytes(p, max_bytes=3)
    link = tmp_path / "zero.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"zero.txt: not a regular file"):
        read_text(link, max_bytes=10)
    with pytest.raises(InputError, match=r"is a folder"):
        read_bytes(tmp_path, max_bytes=10)
    with pytest.raises(InputError, match=r"file not found"):
        read_bytes(tmp_path / "nosuch", max_bytes=10)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"fifo: not a regular file"):
        read_bytes(fifo, max_bytes=10)
