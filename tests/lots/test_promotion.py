"""Promotion (:mod:`candor_eval.lots.promotion`): a recording of other code is refused, one of this code seeds the
live run, what is promoted replays, and the manifest's entry of the recording alone changes."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.promotion import (
    live_record,
    manifest_with,
    promoted_lines,
    recording_text,
    replaced_problem,
    seed_lines,
)
from candor_eval.lots.recording import RecordLine

SHA, OTHER = "a" * 64, "b" * 64


def line(case: str, run: int, *, sha: str = SHA, gallery: str = "all", error: str | None = None) -> RecordLine:
    if error is not None:
        return RecordLine(case=case, run=run, error=error, provider="p", model="m", prompt_sha256=sha,
                          gallery=gallery)
    return RecordLine(case=case, run=run, raw="{}", parsed={}, provider="p", model="m", prompt_sha256=sha,
                      gallery=gallery)


def test_the_live_record_is_named_after_the_code():
    assert live_record("webapp-v2", "0123456789" + "f" * 54) == Path("build/live/webapp-v2-01234567.jsonl")


def test_a_recording_of_other_code_is_refused_one_of_this_code_is_not():
    assert replaced_problem([], sha=SHA, file="r.jsonl") is None
    assert replaced_problem([line("A", 1), line("A", 2)], sha=SHA, file="r.jsonl") is None
    problem = replaced_problem([line("A", 1), line("A", 2, sha=OTHER)], sha=SHA, file="r.jsonl")
    assert problem is not None
    assert (problem.where, problem.got) == ("r.jsonl", OTHER) and "recorded with other code" in problem.what


def test_seed_keeps_this_codes_answers_and_drops_failures_other_code_and_gallery():
    kept = line("A", 1)
    lines = [kept, line("A", 2, error="boom"), line("B", 1, sha=OTHER), line("B", 2, gallery="first")]
    assert seed_lines(lines, sha=SHA, gallery="all") == [kept]


def test_promoted_lines_are_every_run_in_order_and_a_gap_is_refused():
    lines = [line("B", 1), line("A", 2), line("A", 1), line("B", 2), line("C", 1)]
    got = promoted_lines(lines, ids=["A", "B"], runs=2, sha=SHA, gallery="all", file="live", code=None)
    assert [(x.case, x.run) for x in got] == [("A", 1), ("A", 2), ("B", 1), ("B", 2)]     # C: not a bench id
    with pytest.raises(InputError, match="1 \\(case, run\\) pair\\(s\\) not recorded"):
        promoted_lines(lines, ids=["A", "B", "C"], runs=2, sha=SHA, gallery="all", file="live", code=None)


def test_recording_text_is_one_json_line_per_line_in_id_run_order():
    assert recording_text([line("B", 1), line("A", 2)]) == line("A", 2).to_json() + "\n" + line("B", 1).to_json() + "\n"


def test_manifest_with_sets_the_recordings_entry_and_keeps_every_other_row(tmp_path):
    manifest = tmp_path / "manifest.csv"
    manifest.write_text("path,sha256,bytes,split\n"
                        f"lots.csv,{'1' * 64},10,all\n"
                        f"recordings/p.jsonl,{'2' * 64},5,\n")
    data = b'{"case": "A"}\n'
    digest = hashlib.sha256(data).hexdigest()
    assert manifest_with(manifest, "recordings/p.jsonl", data) == (
        "path,sha256,bytes,split\n"
        f"lots.csv,{'1' * 64},10,all\n"
        f"recordings/p.jsonl,{digest},14,\n")
    assert manifest_with(manifest, "recordings/a.jsonl", data) == (          # absent: added in path order
        "path,sha256,bytes,split\n"
        f"lots.csv,{'1' * 64},10,all\n"
        f"recordings/a.jsonl,{digest},14,\n"
        f"recordings/p.jsonl,{'2' * 64},5,\n")
