"""Recording lines: shapes, parsing of raw text, duplicates, a cut-off last line."""
from __future__ import annotations

import json

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.recording import (
    RecordLine,
    append_line,
    load_recording,
    parse_answer,
    parse_recording,
    without_surrogates,
)

SHA = "a" * 64


def line(case="L1", run=1, raw='{"a": 1}', error=None, **kw) -> RecordLine:
    if error is not None:
        return RecordLine(case=case, run=run, error=error, provider="p", model="m", prompt_sha256=SHA, gallery="all")
    parsed, why = parse_answer(raw)
    return RecordLine(case=case, run=run, raw=raw, parsed=parsed, parse_error=why, provider="p", model="m",
                      prompt_sha256=SHA, gallery="all", **kw)


@pytest.mark.parametrize("raw, ok", [
    ('{"a": 1}', True), ('```json\n{"a": 1}\n```', True), ('  {"a": 1}\n', True),
    ('Here it is:\n```json\n{"a": 1}\n```', False), ('{"a": ', False), ("[1, 2]", False), ("", False),
])
def test_parse_answer(raw, ok):
    obj, why = parse_answer(raw)
    assert (obj == {"a": 1}) is ok and (why is None) is ok


def test_line_shapes_are_enforced():
    with pytest.raises(ValueError, match="do not agree"):
        RecordLine(case="L1", run=1, raw='{"a": 1}', parsed={"a": 2}, provider="p", model="m", prompt_sha256=SHA,
                   gallery="all")
    with pytest.raises(ValueError, match="either an error or the raw text"):
        RecordLine(case="L1", run=1, provider="p", model="m", prompt_sha256=SHA, gallery="all")
    with pytest.raises(ValueError, match="error line"):
        RecordLine(case="L1", run=1, raw="x", error="boom", provider="p", model="m", prompt_sha256=SHA,
                   gallery="all")


def test_errors_name_file_line_and_field_and_duplicates():
    good = line().to_json()
    bad = json.loads(good) | {"run": 0}
    text = "\n".join([good, json.dumps(bad), good, "{oops"]) + "\n"
    with pytest.raises(InputError) as err:
        parse_recording(text, file="rec.jsonl")
    msg = err.value.message
    assert "rec.jsonl:line 2.run: Input should be greater than or equal to 1" in msg
    assert "rec.jsonl:line 3.run: duplicate (case, run) (first on line 1)" in msg
    assert "rec.jsonl:line 4: not valid JSON" in msg


def test_partial_tail_dropped_only_when_allowed(tmp_path):
    p = tmp_path / "r.jsonl"
    append_line(p, line())
    append_line(p, line(run=2, raw='{"b": 2}'))
    with open(p, "a") as fh:
        fh.write('{"case": "L1", "run": 3, "raw"')
    assert [ln.run for ln in load_recording(p, allow_partial_tail=True)] == [1, 2]
    with pytest.raises(InputError, match="line 3: not valid JSON"):
        load_recording(p)
    with pytest.raises(InputError, match="recording not found") as err:
        load_recording(tmp_path / "none.jsonl")
    assert err.value.hint == "record it live (identify.mode: live), or pick a candidate that has one"
    with pytest.raises(InputError) as err:
        load_recording(tmp_path / "none.jsonl", rerecord="candor record p")
    assert err.value.hint == "record it live with `candor record p`, or pick a candidate that has one"



@pytest.mark.parametrize("run, needle", [
    (True, "rec.jsonl:line 1.run: Input should be a valid integer (got True)"),
    ("1", "rec.jsonl:line 1.run: Input should be a valid integer (got '1')"),
    (1.0, "rec.jsonl:line 1.run: Input should be a valid integer (got 1.0)"),
])
def test_run_is_a_json_integer_and_anything_else_is_named(run, needle):
    text = json.dumps(json.loads(line().to_json()) | {"run": run}) + "\n"
    with pytest.raises(InputError) as err:
        parse_recording(text, file="rec.jsonl")
    assert needle in err.value.message


def test_endpoint_and_version_are_left_out_when_absent_and_kept_when_set():
    assert "endpoint" not in line().to_json() and "version" not in line().to_json()
    full = line().model_copy(update={"endpoint": "http://h/v1?k=***", "version": "app 1.2"})
    doc = json.loads(full.to_json())
    assert (doc["endpoint"], doc["version"]) == ("http://h/v1?k=***", "app 1.2")
    assert parse_recording(full.to_json() + "\n", file="r") == [full]
    assert "environment" not in line().to_json()
    env = line().model_copy(update={"environment": {"ANALYSIS_MODE": "fast", "PROVIDER": None}})
    assert json.loads(env.to_json())["environment"] == {"ANALYSIS_MODE": "fast", "PROVIDER": None}
    assert parse_recording(env.to_json() + "\n", file="r") == [env]


def test_sources_are_left_out_when_absent_and_each_is_a_sha256():
    assert "sources" not in line().to_json()
    with_parts = line().model_copy(update={"sources": {"app/a.ts": "a" * 64}})
    assert json.loads(with_parts.to_json())["sources"] == {"app/a.ts": "a" * 64}
    assert parse_recording(with_parts.to_json() + "\n", file="r") == [with_parts]
    bad = json.dumps(json.loads(line().to_json()) | {"sources": {"app/a.ts": "xyz"}})
    with pytest.raises(InputError, match="line 1.sources"):
        parse_recording(bad + "\n", file="r")


def test_without_surrogates_keeps_every_other_character():
    assert without_surrogates("é✓\U0001F600" + chr(0xDFFF)) == "é✓\U0001F600\ufffd"
