"""Recording lines: shapes, parsing of raw text, duplicates, a cut-off last line."""
from __future__ import annotations

import json

import pytest

from candor.common.errors import InputError
from candor.lots.recording import RecordLine, append_line, load_recording, parse_answer, parse_recording

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
    with pytest.raises(InputError, match="recording not found"):
        load_recording(tmp_path / "none.jsonl")

