"""Field matching and scoring (docs/lots.md, "Scoring"), with the examples of its definition."""
from __future__ import annotations

import pytest

from candor_eval.lots.fields import (
    Expectation,
    RunAnswer,
    field_matches,
    field_values,
    format_case_table,
    get_field,
    normalise,
    overall_score,
    parse_path,
    score_case,
)


@pytest.mark.parametrize("text, expected", [
    ("Power Tools", "power tools"), ("power-tools", "power tools"), ("Power  tools", "power tools"),
    ("  Power--Tools ", "power tools"), ("Café Équipement", "café équipement"),
    ("ＰＯＷＥＲ　ＴＯＯＬＳ", "power tools"), ("Дрель-Шуруповёрт", "дрель шуруповёрт"), ("ΔΡΑΠΑΝΟ", "δραπανο"),
    ("電動 ドリル", "電動 ドリル"), ("--", ""), ("20V MAX!", "20v max"),
])
def test_normalise(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize("expected, actual, ok", [
    (["Drill"], ["Cordless Drill"], True),          # actual longer than expected
    (["Hammer Drill"], ["Drill"], False),           # never shorter
    (["Power Tools"], ["power-tools"], True),
    (["Hammer Drill", "Drill"], ["Drill"], True),   # any expected value satisfies
    ([], ["anything"], False),                      # an empty list never matches
    (["Drill"], [], False),
])
def test_field_matches(expected, actual, ok):
    assert field_matches(expected, actual) is ok


def test_attributes_compare_as_name_value():
    values = field_values([{"name": "Voltage", "value": "20 Volts"}, {"name": "Chuck", "value": None}])
    assert values == ["Voltage: 20 Volts", "Chuck"]
    assert field_matches(["Voltage"], values)
    assert not field_matches(["Amperage"], values)


def test_arrays_are_flattened_and_scalars_stringified():
    assert field_values([["a", ["b"]], 3, None, True]) == ["a", "b", "3", "true"]


@pytest.mark.parametrize("path, resolved, value", [
    ("item.itemType", True, "Drill"),
    ("container.containerItems[0].itemType", False, None),
    ("item.list[1]", True, 2),
    ("item.list[5]", False, None),
    ("item.itemType.deeper", False, None),
    ("item.missing", True, None),
])
def test_get_field(path, resolved, value):
    data = {"item": {"itemType": "Drill", "list": [1, 2], "missing": None}}
    if path == "item.missing":
        assert get_field(data, path) == (True, None)
    else:
        assert get_field(data, path) == (resolved, value)


def test_parse_path_rejects_malformed():
    assert parse_path("a.b[0][1].c") == ["a", "b", 0, 1, "c"]
    with pytest.raises(ValueError):
        parse_path("a..b")


ITEM = {"item": {"itemType": "Cordless Drill", "categorySpecific": "power-tools",
                 "itemAttributes": [{"name": "Voltage", "value": "20 Volts"}]}}
MISS = {"item": {"itemType": "Hammer", "categorySpecific": "Tools", "itemAttributes": []}}
CONTAINER = {"container": {"containerItems": [{"itemType": "Drill"}]}}
EXP = [Expectation("item.itemType", ("Drill",)), Expectation("item.categorySpecific", ("Power Tools",)),
       Expectation("item.itemAttributes", ("Voltage",))]


def test_score_case_hand_computed():
    runs = [RunAnswer(1, "ok", ITEM), RunAnswer(2, "ok", MISS), RunAnswer(3, "ok", ITEM)]
    cs = score_case("drill", EXP, runs)
    assert [(f.hits, f.total) for f in cs.fields] == [(2, 3), (2, 3), (2, 3)]
    assert cs.score == pytest.approx(2 / 3)
    assert cs.notes == () and cs.errors == ()


def test_errors_are_dropped_from_total_and_kept_verbatim():
    runs = [RunAnswer(1, "ok", ITEM), RunAnswer(2, "error", error="HTTP 500 boom"), RunAnswer(3, "ok", MISS)]
    cs = score_case("drill", EXP[:1], runs)
    assert (cs.fields[0].hits, cs.fields[0].total) == (1, 2)
    assert cs.errors == ("run 2: HTTP 500 boom",)


def test_unresolved_path_and_empty_expected_are_noted():
    exp = [Expectation("item.itemType", ("Drill",)), Expectation("item.itemModel", ())]
    runs = [RunAnswer(1, "ok", CONTAINER), RunAnswer(2, "ok", ITEM), RunAnswer(3, "unparseable", error="not JSON")]
    cs = score_case("c", exp, runs)
    assert [(f.hits, f.total, f.unresolved) for f in cs.fields] == [(1, 3, 1), (0, 3, 2)]
    assert any("expected list is empty" in n for n in cs.notes)
    assert any("item.itemType: path did not resolve in 1/3" in n for n in cs.notes)
    assert any("1/3 run(s) unparseable" in n for n in cs.notes)


def test_all_runs_failed_gives_none_and_is_left_out_of_the_overall_mean():
    failed = score_case("x", EXP, [RunAnswer(1, "error", error="e")])
    assert failed.fields[0].score is None and failed.score is None
    good = score_case("y", EXP, [RunAnswer(1, "ok", ITEM)])
    assert overall_score([failed, good]) == 1.0
    assert overall_score([failed]) is None and overall_score([]) is None


def test_overall_is_mean_of_case_means_not_of_fields():
    a = score_case("a", EXP, [RunAnswer(1, "ok", ITEM)])                  # 1.0 over 3 fields
    b = score_case("b", EXP[:1], [RunAnswer(1, "ok", MISS)])              # 0.0 over 1 field
    assert overall_score([a, b]) == 0.5


def test_console_table_shape():
    cs = score_case("drill-on-bench", EXP[:2], [RunAnswer(1, "ok", ITEM), RunAnswer(2, "ok", MISS),
                                                RunAnswer(3, "ok", ITEM)])
    text = format_case_table(cs)
    assert text.splitlines()[0] == "drill-on-bench — avg 0.67"
    assert "│ item.itemType         │ Drill       │ 2/3  │ 0.67  │" in text
    failed = score_case("c", EXP[:1], [RunAnswer(1, "ok", ITEM), RunAnswer(2, "error", None, error="HTTP 429")])
    assert format_case_table(failed).splitlines()[-1] == ("  recorded failure (in replay mode: replayed from the "
                                                          "recording, no call made): run 2: HTTP 429")
    assert format_case_table(failed, failure="failed call").splitlines()[-1] == "  failed call: run 2: HTTP 429"
    long = score_case("c", EXP[:1], [RunAnswer(1, "error", None, error="HTTP 500: " + "word " * 40)])
    lines = format_case_table(long).splitlines()
    assert max(map(len, lines)) <= 100 and lines[-1].startswith("    word")
    assert [ln for ln in lines if ln.startswith("  recorded failure")] == [lines[-4]]      # 4 lines, wrapped
