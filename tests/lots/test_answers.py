"""The normalised answer record: normalising recording lines, writing, reading back, bad lines."""
from __future__ import annotations

import json

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.answers import Answer, normalise_line, parse_answers, read_answers, write_answers
from candor_eval.lots.recording import RecordLine, parse_answer

SHA = "a" * 64
GOOD = {"case": "T1", "run": 1, "status": "ok", "make": "Dell", "model": "7090", "count": 1,
        "category": None, "fields": {}, "error": None}


def line(case="L1", run=1, raw='{"a": 1}', error=None) -> RecordLine:
    if error is not None:
        return RecordLine(case=case, run=run, error=error, provider="p", model="m", prompt_sha256=SHA, gallery="all")
    parsed, why = parse_answer(raw)
    return RecordLine(case=case, run=run, raw=raw, parsed=parsed, parse_error=why, provider="p", model="m",
                      prompt_sha256=SHA, gallery="all")


ITEM = {"type": "item", "item": {"itemManufacturer": " Dell ", "itemModel": "e.g. OptiPlex 7090",
                                 "itemType": "", "categorySpecific": "Desktop Computers", "quantity": "10"}}
CONTAINER = {"type": "container", "container": {"containerItems": [
    {"itemType": "Battery", "quantity": 2},
    {"itemManufacturer": "DeWalt", "itemModel": "DCD791", "itemType": "Drill", "quantity": 2},
    {"itemType": "Charger", "quantity": 1.0}]}}


def test_normalise_item_container_unparseable_error():
    a = normalise_line(line(raw=json.dumps(ITEM)))
    assert (a.status, a.make, a.model, a.count, a.category) == \
        ("ok", "Dell", "e.g. OptiPlex 7090", 10, "Desktop Computers")   # the hedge is kept in the text
    assert a.fields == ITEM and a.error is None
    c = normalise_line(line(raw=json.dumps(CONTAINER)))
    assert (c.make, c.model, c.count, c.category) == ("DeWalt", "DCD791", 5, "Drill")
    u = normalise_line(line(raw="Sorry, I cannot tell."))
    assert u.status == "unparseable" and u.error.startswith("not JSON") and u.fields is None
    e = normalise_line(line(error="HTTP 500"))
    assert e.status == "error" and e.error == "HTTP 500" and e.model is None
    assert list(json.loads(a.to_json())) == ["case", "run", "status", "make", "model", "count", "category",
                                            "fields", "error"]


@pytest.mark.parametrize("quantity, count", [(4, 4), ("4", 4), (4.0, 4), (4.5, None), ("several", None),
                                             (None, None), (True, None)])
def test_count_coercion(quantity, count):
    raw = json.dumps({"type": "item", "item": {"itemModel": "X100", "quantity": quantity}})
    assert normalise_line(line(raw=raw)).count == count


def test_written_answers_read_back_sorted(tmp_path):
    answers = [normalise_line(line(case="L2")), normalise_line(line(run=2, error="HTTP 500")), normalise_line(line())]
    write_answers(tmp_path / "a.jsonl", answers)
    back = read_answers(tmp_path / "a.jsonl")
    assert [(a.case, a.run) for a in back] == [("L1", 1), ("L1", 2), ("L2", 1)]
    assert back == sorted(answers, key=lambda a: (a.case, a.run))


@pytest.mark.parametrize(("line", "where"), [
    ("{not json", "a.jsonl:line 1"),
    (json.dumps(GOOD | {"run": 0}), "a.jsonl:line 1.run"),
    (json.dumps(GOOD | {"status": "maybe"}), "a.jsonl:line 1.status"),
    (json.dumps(GOOD | {"count": "many"}), "a.jsonl:line 1.count"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "count"}), "a.jsonl:line 1.count"),
    (json.dumps(GOOD | {"hedged": False}), "a.jsonl:line 1.hedged"),     # hedging is a scoring rule now
    (json.dumps(GOOD | {"raw": "text"}), "a.jsonl:line 1.raw"),
])
def test_bad_answers_name_file_line_and_field(line, where):
    with pytest.raises(InputError) as info:
        parse_answers(line + "\n", file="a.jsonl", rebuild="candor identify --candidate p")
    assert [p.where for p in info.value.problems] == [where]
    assert info.value.hint == "rebuild the answers: `candor identify --candidate p`"


def test_duplicate_and_missing_answers(tmp_path):
    text = json.dumps(GOOD) + "\n"
    with pytest.raises(InputError, match=r"a.jsonl:line 2.run: duplicate \(case, run\) \(first on line 1\)"):
        parse_answers(text + text, file="a.jsonl")
    with pytest.raises(InputError, match="(?s)none.jsonl: file not found.*hint: rebuild the answers with the identify "
                                         "stage"):
        read_answers(tmp_path / "none.jsonl")                     # no command given: the stage named, no command
    with pytest.raises(InputError, match="(?s)file not found.*hint: rebuild the answers: `candor identify -c x`"):
        read_answers(tmp_path / "none.jsonl", rebuild="candor identify -c x")
    (tmp_path / "bad.jsonl").write_bytes(b"\xff\n")
    with pytest.raises(InputError, match="(?s)not UTF-8.*hint: rebuild the answers: `cmd`"):
        read_answers(tmp_path / "bad.jsonl", rebuild="cmd")
    assert parse_answers(text, file="a.jsonl") == [Answer.model_validate(GOOD)]


def test_the_recorded_environment_rides_along_and_is_summed_up_per_variable():
    from candor_eval.lots.answers import environment_of
    fast = line().model_copy(update={"environment": {"MODE": "fast"}})
    ok = normalise_line(fast)
    err = normalise_line(line(run=2, error="HTTP 500").model_copy(update={"environment": {"MODE": None}}))
    assert (ok.environment, err.environment) == ({"MODE": "fast"}, {"MODE": None})
    assert json.loads(ok.to_json())["environment"] == {"MODE": "fast"}
    assert "environment" not in normalise_line(line()).to_json()       # answers without one keep their bytes
    slow = normalise_line(line(run=3).model_copy(update={"environment": {"MODE": "slow", "X": "1"}}))
    assert environment_of([ok, err, slow]) == {"MODE": [None, "fast", "slow"], "X": [None, "1"]}
    assert environment_of([normalise_line(line())]) == {}
