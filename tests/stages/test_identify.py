"""identify stage: replay checks, live calls against a local chat server, resume, exit codes, key hygiene,
and a local-ocr candidate recorded and replayed (with a stand-in for RapidOCR: tests/lots/test_ocr.py runs the
real one)."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import candor_eval.lots.live as live
import candor_eval.lots.responders as responders
import candor_eval.stages.identify as identify
import candor_eval.stages.record as record
from candor_eval.common.errors import run_main
from candor_eval.lots.ocr_reading import read_answer, reader_sha256, reading_text
from candor_eval.lots.recording import RecordLine, load_recording, parse_answer
from candor_eval.lots.vocabulary import Makes, read_vocabulary
from tests.chat_server import chat_server
from tests.conftest import ROOT, TESTS, VOCABULARY, hint_argv

FIXTURE = TESTS / "data" / "lots"
KEY = "sk-SENTINEL-identify-9731"
ENV = "CANDOR_TEST_KEY"
ANSWER = json.dumps({"type": "item", "item": {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090",
                                              "itemType": "Drill", "quantity": 10}})


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_work(tmp_path, monkeypatch)


def make_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary repo-like folder: data/lots (the test fixture, the committed vocabulary) and params.yaml;
    cwd is set to it."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root / "data" / "lots")
    shutil.copytree(VOCABULARY, root / "data" / "lots" / "vocabulary")
    monkeypatch.chdir(root)
    monkeypatch.delenv(ENV, raising=False)
    write_params(root, base_url="http://127.0.0.1:9/v1")
    return root


def write_params(root: Path, **kw) -> None:
    ident = {"mode": "replay", "candidates": ["p"], "runs": 2, "gallery": "all", "pause_s": 0, "timeout_s": 2,
             "retries": 2, "backoff_s": 0, "model": "test-model", "api_key_env": ENV} | kw
    (root / "params.yaml").write_text(json.dumps({"identify": ident}))


def sha(root: Path) -> str:
    return hashlib.sha256((root / "data/lots/prompts/p.txt").read_bytes()).hexdigest()


def write_recording(root: Path, *, runs=(1, 2), ids=("T001", "T002", "drill"), prompt_sha=None, gallery="all"):
    lines = []
    for i in ids:
        for r in runs:
            parsed, why = parse_answer(ANSWER)
            lines.append(RecordLine(case=i, run=r, raw=ANSWER, parsed=parsed, parse_error=why, provider="h",
                                    model="m", prompt_sha256=prompt_sha or sha(root), gallery=gallery).to_json())
    p = root / "data/lots/recordings/p.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(reversed(lines)) + "\n")


def run(*argv: str) -> int:
    return run_main(identify.main, ["--candidate", "p", *argv])


def answers(root: Path) -> list[dict]:
    return [json.loads(x) for x in (root / "build/answers/p.jsonl").read_text().splitlines()]


def test_replay_writes_sorted_normalised_answers(work: Path, capsys):
    write_recording(work)
    assert run() == 0
    got = answers(work)
    assert [(a["case"], a["run"]) for a in got] == [("T001", 1), ("T001", 2), ("T002", 1), ("T002", 2),
                                                    ("drill", 1), ("drill", 2)]
    assert got[0]["model"] == "OptiPlex 7090" and got[0]["count"] == 10 and got[0]["status"] == "ok"
    assert "drill — avg" in capsys.readouterr().out
    before = (work / "build/answers/p.jsonl").read_bytes()
    assert run() == 0 and (work / "build/answers/p.jsonl").read_bytes() == before


@pytest.mark.parametrize("setup, needle", [
    (lambda w: write_recording(w, runs=(1,)), "3 (case, run) pair(s) not recorded"),
    (lambda w: write_recording(w, prompt_sha="b" * 64), "recorded with a different prompt"),
    (lambda w: write_recording(w, gallery="first"), "recorded with a different gallery setting"),
    (lambda w: None, "recording not found"),
])
def test_replay_refuses_missing_or_stale_recordings(work: Path, capsys, setup, needle):
    setup(work)
    assert run() == 2
    err = capsys.readouterr().err
    assert needle in err
    assert not (work / "build/answers/p.jsonl").exists()


def test_replay_runs_param_selects_recorded_runs(work: Path):
    write_recording(work, runs=(1, 2, 3))
    write_params(work, runs=1, base_url="http://127.0.0.1:9/v1")
    assert run() == 0
    assert [a["run"] for a in answers(work)] == [1, 1, 1]


def test_help_needs_no_key(work: Path, capsys):
    with pytest.raises(SystemExit) as exc:
        identify.main(["--help"])
    assert exc.value.code == 0 and "replay" in capsys.readouterr().out


def test_live_without_key_exits_2_naming_the_variable(work: Path, capsys):
    assert run("--mode", "live") == 2
    assert f"API key variable {ENV} is not set" in capsys.readouterr().err


# json.dumps writes NaN and Infinity bare: YAML reads them as text, refused as text (not numbers)
@pytest.mark.parametrize("kw, needle", [
    ({"timeout_s": float("nan")}, "identify.timeout_s: must be a number, not str"),
    ({"timeout_s": "inf"}, "identify.timeout_s: must be a number, not str"),
    ({"pause_s": "Infinity"}, "identify.pause_s: must be a number, not str"),
    ({"backoff_s": "-inf"}, "identify.backoff_s: must be a number, not str"),
    ({"timeout_s": 1e300}, "identify.timeout_s: Input should be less than or equal to 3600"),
    ({"max_calls_per_minute": "nan"}, "identify.max_calls_per_minute: must be a number, not str"),
    ({"max_calls_per_minute": 0}, "identify.max_calls_per_minute: Input should be greater than 0"),
    ({"concurrency": 0}, "identify.concurrency: Input should be greater than or equal to 1"),
    ({"base_url": "api.example.com/v1"}, "base_url needs the scheme http:// or https://"),
    ({"base_url": "https:///v1"}, "base_url has no host"),
    ({"base_url": "https://me:pw-SENTINEL-0099@api.example.com/v1"}, "base_url user-info"),
    ({"base_url": "https://api.example.com/v1?api_key=pw-SENTINEL-0099"},
     "named like a credential (api_key): a URL is written to params, logs and dvc.lock; put the credential in "
     "the variable named by identify.api_key_env"),
])
def test_bad_live_params_exit_2_naming_the_key_before_any_work(work: Path, monkeypatch, capsys, kw, needle):
    monkeypatch.setenv(ENV, KEY)
    write_params(work, mode="live", **kw)
    assert run() == 2
    err = capsys.readouterr().err
    assert needle in err and "pw-SENTINEL" not in err
    assert not (work / "build").exists()


def all_text(root: Path, *extra: str) -> str:
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".csv", ".yaml")]
    return "\n".join([*(p.read_text(errors="replace") for p in files), *extra])


def test_live_calls_records_and_never_leaks_the_key(work: Path, monkeypatch, capsys, caplog):
    monkeypatch.setenv(ENV, KEY)
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live")
        assert run() == 0
    assert len(srv.requests) == 6
    by_images = sorted(len(r["json"]["messages"][0]["content"]) - 1 for r in srv.requests)
    assert by_images == [1, 1, 1, 1, 2, 2]          # T001 sends its whole gallery
    urls = [c["image_url"]["url"] for r in srv.requests for c in r["json"]["messages"][0]["content"][1:]]
    assert all(u.startswith("data:image/png;base64,") for u in urls)
    prompts = [r["json"]["messages"][0]["content"][0]["text"] for r in srv.requests]
    assert sum("- itemType: Drill" in p for p in prompts) == 2        # the case's categoryLibrary
    assert sum("No inventory yet" in p for p in prompts) == 4          # lots get the defaults
    rec = load_recording(work / "build/live/p.jsonl")
    assert {(x.case, x.run) for x in rec} == {(i, r) for i in ("T001", "T002", "drill") for r in (1, 2)}
    assert {x.prompt_sha256 for x in rec} == {sha(work)} and {x.provider for x in rec} == {"127.0.0.1"}
    assert [a["status"] for a in answers(work)] == ["ok"] * 6
    out = capsys.readouterr()
    assert KEY not in all_text(work, out.out, out.err, caplog.text)


def test_live_gallery_first_sends_one_photo(work: Path, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", gallery="first", runs=1)
        assert run() == 0
    assert all(len(r["json"]["messages"][0]["content"]) == 2 for r in srv.requests)


def test_gallery_per_candidate_first_for_one_all_for_the_other(work: Path, monkeypatch):
    """gallery {p: first}: p sends one photo per call (prompt + 1 image = 2 parts); q, unlisted, the whole gallery
    (T001 has two photos: 3 parts). A replay of p's gallery-all recording is refused under first."""
    monkeypatch.setenv(ENV, KEY)
    shutil.copy(work / "data/lots/prompts/p.txt", work / "data/lots/prompts/q.txt")
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", gallery={"p": "first"}, candidates=["p", "q"], runs=1)
        assert run() == 0
        sent_p = len(srv.requests)
        assert run("--candidate", "q", "--answers", "build/answers/q.jsonl") == 0
    parts = [len(r["json"]["messages"][0]["content"]) for r in srv.requests]
    assert sent_p == 3 and parts[:3] == [2, 2, 2] and 3 in parts[3:]
    write_recording(work, gallery="all")
    write_params(work, gallery={"p": "first"}, candidates=["p", "q"])
    assert run() == 2


def test_record_env_values_are_in_every_recorded_line_and_answer(work: Path, monkeypatch):
    """record_env {p: [ANALYSIS_MODE, PROVIDER_CHOICE]}: ANALYSIS_MODE=experimental set, PROVIDER_CHOICE unset."""
    monkeypatch.setenv(ENV, KEY)
    monkeypatch.setenv("ANALYSIS_MODE", "experimental")
    monkeypatch.delenv("PROVIDER_CHOICE", raising=False)
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=1,
                     record_env={"p": ["ANALYSIS_MODE", "PROVIDER_CHOICE"]})
        assert run() == 0
    want = {"ANALYSIS_MODE": "experimental", "PROVIDER_CHOICE": None}
    rec = load_recording(work / "build/live/p.jsonl")
    assert len(rec) == 3 and all(x.environment == want for x in rec)
    assert all(a["environment"] == want for a in answers(work))


def test_an_http_route_as_it_is_declared_body_answer_path_no_version(work: Path, monkeypatch):
    """The app's own route: its request shape, its answer under result.analysis, no version header."""
    analysis = json.loads(ANSWER)
    body = json.dumps({"result": {"analysis": analysis}}).encode()
    with chat_server([("reply", 200, body, {})]) as srv:
        route = {"http": srv.url + "/api/analyze", "version_header": None, "answer_path": "result.analysis",
                 "body": {"imageDataUrl": "{{image}}", "categoryLibrary": "{{category_library}}"}}
        write_params(work, mode="live", runs=1, providers={"p": route}, sources={"p": "data/lots/prompts/p.txt"})
        assert run() == 0
    assert all(set(r["json"]) == {"imageDataUrl", "categoryLibrary"} for r in srv.requests) and len(srv.requests) == 3
    assert all(r["json"]["imageDataUrl"].startswith("data:image/") for r in srv.requests)
    rec = load_recording(work / "build/live/p.jsonl")
    assert all(x.parsed == analysis and x.version is None and x.provider == "http" for x in rec)
    assert '"version"' not in (work / "build/live/p.jsonl").read_text()


def test_live_failures_are_recorded_others_kept_exit_1_and_retried_on_rerun(work: Path, monkeypatch, capsys, caplog):
    monkeypatch.setenv(ENV, KEY)
    # retries=2: run T001/1 ok, then T001/2 fails three times, then the rest succeed
    script = [("ok", ANSWER), ("status", 500), ("status", 500), ("status", 500), ("ok", ANSWER)]
    with chat_server(script) as srv:
        write_params(work, base_url=srv.url, mode="live")
        assert run() == 1
    rec = load_recording(work / "build/live/p.jsonl")
    errors = [x for x in rec if x.error]
    assert [(x.case, x.run) for x in errors] == [("T001", 2)]
    assert errors[0].error.startswith("after 3 attempt(s): HTTP 500 Internal Server Error")
    got = {(a["case"], a["run"]): a for a in answers(work)}
    assert got[("T001", 2)]["status"] == "error" and got[("T001", 1)]["status"] == "ok" and len(got) == 6
    with chat_server([("ok", ANSWER)]) as srv2:
        write_params(work, base_url=srv2.url, mode="live")
        assert run() == 0
    assert len(srv2.requests) == 1                     # only the failed pair is called again
    assert all(x.error is None for x in load_recording(work / "build/live/p.jsonl"))
    out = capsys.readouterr()
    assert KEY not in all_text(work, out.out, out.err, caplog.text)


def test_resume_after_interruption_skips_recorded_pairs(work: Path, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    real = live.complete
    calls = {"n": 0}

    def flaky(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kw)

    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live")
        monkeypatch.setattr(live, "complete", flaky)
        with pytest.raises(KeyboardInterrupt):
            run()
        assert len(load_recording(work / "build/live/p.jsonl")) == 2
        assert not (work / "build/answers/p.jsonl").exists()
        with open(work / "build/live/p.jsonl", "a") as fh:      # a line cut off mid-write
            fh.write('{"case": "T002", "run"')
        monkeypatch.setattr(live, "complete", real)
        assert run() == 0
    assert len(srv.requests) == 2 + 4
    assert len(load_recording(work / "build/live/p.jsonl")) == 6


def test_live_refuses_a_recording_made_with_another_prompt(work: Path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, KEY)
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=1)
        assert run() == 0
        (work / "data/lots/prompts/p.txt").write_text("A different prompt.\n")
        assert run() == 2
    assert "another prompt (or code), model, gallery or provider" in capsys.readouterr().err


def test_by_hand_flags_need_out_outside_the_repo(work: Path, tmp_path: Path, capsys):
    write_recording(work)
    assert run("--case", "T00*") == 2
    assert "--out PATH" in capsys.readouterr().err
    assert run("--case", "T00*", "--out", str(work / "report.json")) == 2
    assert "must stay outside the repository" in capsys.readouterr().err
    assert run("--case", "nothing*", "--out", str(tmp_path / "r.json")) == 2
    report = tmp_path / "bm.json"
    assert run("--case", "T00*", "--case", "dr*", "--runs", "1", "--label", "my-try", "--out", str(report)) == 0
    doc = json.loads(report.read_text())
    assert doc["label"] == "my-try" and doc["runs"] == 1
    assert [(a["case"], a["run"]) for a in doc["answers"]] == [("T001", 1), ("T002", 1), ("drill", 1)]
    assert doc["answers"][0]["raw"] == ANSWER and doc["cases"][0]["case"] == "drill"
    assert not (work / "build/answers/p.jsonl").exists()     # a throwaway run leaves the pipeline alone


@pytest.mark.parametrize(("argv", "needle"), [
    (["--label", "gpt-x/newprompt"], "--label: not a valid report name"),
    (["--label", "../../../escaped"], "--label: not a valid report name"),
])
def test_a_label_that_is_not_a_name_exits_2_writing_nothing(work: Path, tmp_path: Path, capsys, argv, needle):
    """The label names the default live recording build/live/<label>.jsonl: a/b would nest, ../ escape."""
    write_recording(work)
    assert run(*argv, "--mode", "live", "--out", str(tmp_path / "r.json")) == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists() and not (work / "build").exists()


@pytest.mark.parametrize("candidate", ["../../escape", "x;touch${IFS}PWNED;#", "a/b"])
def test_a_candidate_that_is_not_a_name_exits_2(work: Path, capsys, candidate):
    write_recording(work)
    assert run_main(identify.main, ["--candidate", candidate]) == 2
    assert "--candidate: not a valid candidate name" in capsys.readouterr().err
    assert not (work / "build").exists()


def test_live_pauses_between_calls_not_before_the_first(work: Path, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    pauses: list[float] = []
    monkeypatch.setattr(live.time, "sleep", pauses.append)
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=1, pause_s=1.5)
        assert run() == 0
    assert len(srv.requests) == 3 and pauses == [1.5, 1.5]


def test_live_checks_images_before_any_call(work: Path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, KEY)
    (work / "data/lots/photos/t2.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * (5 * 1024 * 1024))
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=1)
        assert run() == 2
    assert srv.requests == [] and "image too large (photos/t2.png)" in capsys.readouterr().err


class FakeOcr:
    """A stand-in for the local OCR responder: the real reading rules over a fixed reading."""

    provider = "local-ocr"
    model = "fake-ocr==0"
    endpoint = None

    def __init__(self, rules):
        self.rules = rules

    def load(self, images):
        return list(images)

    def reply(self, *, prompt, images, context):
        return live.Reply(text=reading_text(read_answer([["lot T x3"], ["Dell", "P2419H"]] * len(images),
                                                       rules=self.rules)))


def test_local_ocr_candidate_records_without_key_or_pause_then_replays(work: Path, monkeypatch):
    monkeypatch.setattr(responders, "OcrResponder", FakeOcr)
    pauses: list[float] = []
    monkeypatch.setattr(live.time, "sleep", pauses.append)
    write_params(work, mode="live", providers={"p": "local-ocr"}, pause_s=5)
    assert run() == 0                                   # no API key set, no pause between local reads
    assert pauses == []
    rec = load_recording(work / "build/live/p.jsonl")
    expected_sha = reader_sha256((work / "data/lots/prompts/p.txt").read_bytes(),
                                 read_vocabulary(Makes, VOCABULARY / "makes.yaml").model_dump())
    assert len(rec) == 6 and {(x.provider, x.model, x.prompt_sha256) for x in rec} == {
        ("local-ocr", "fake-ocr==0", expected_sha)}
    got = answers(work)
    assert {(a["make"], a["model"], a["count"]) for a in got} == {("Dell", "P2419H", 3)}
    (work / "data/lots/recordings").mkdir(parents=True, exist_ok=True)
    shutil.copy(work / "build/live/p.jsonl", work / "data/lots/recordings/p.jsonl")     # promote
    (work / "build/answers/p.jsonl").unlink()
    write_params(work, providers={"p": "local-ocr"})
    assert run() == 0 and answers(work) == got          # replay gives the same answers
    (work / "data/lots/vocabulary/makes.yaml").write_text("makes: [Dell, HP]\n")
    assert run() == 2                                   # another makes list: the recording is stale


def test_live_records_the_endpoint_with_query_values_masked(work: Path, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url + "?api-version=2024-06-01&deployment=dep-SENTINEL-77", mode="live",
                     runs=1)
        assert run() == 0
    text = (work / "build/live/p.jsonl").read_text()
    assert "dep-SENTINEL-77" not in text
    assert {x.endpoint for x in load_recording(work / "build/live/p.jsonl")} == {
        srv.url + "?api-version=***&deployment=***"}


def test_a_latin1_prompt_in_live_mode_exits_2_naming_the_file_before_any_call(work: Path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, KEY)
    (work / "data/lots/prompts/p.txt").write_bytes("Catalogue the lot. Caf\xe9 style.\n".encode("latin-1"))
    with chat_server([("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live")
        assert run() == 2
    err = capsys.readouterr().err
    assert "data/lots/prompts/p.txt: not UTF-8 text (byte 22" in err and "Traceback" not in err
    assert srv.requests == [] and not (work / "build").exists()


def test_a_non_text_content_part_is_a_recorded_malformed_response(work: Path, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    body = json.dumps({"choices": [{"message": {"content": [{"type": "image_url", "image_url": {"url": "x"}}]}}]})
    with chat_server([("malformed", body.encode()), ("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=1)
        assert run() == 1
    rec = load_recording(work / "build/live/p.jsonl")
    assert [x.error for x in rec if x.error] == [
        "after 1 attempt(s): malformed response: choices[0].message.content[0] is a 'image_url' part, not text"]
    assert [x.raw for x in rec if x.error is None] == [ANSWER, ANSWER]


def test_a_lone_surrogate_in_a_live_answer_is_recorded_replaced(work: Path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, KEY)
    body = b'{"choices": [{"message": {"content": "{\\"imageNotes\\": \\"a\\ud800b\\"}"}}]}'
    with chat_server([("malformed", body)]) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=1)
        assert run() == 0
    assert "Traceback" not in capsys.readouterr().err
    rec = load_recording(work / "build/live/p.jsonl")
    assert {x.raw for x in rec} == {'{"imageNotes": "a\ufffdb"}'}
    assert {x.parsed["imageNotes"] for x in rec} == {"a\ufffdb"}


PRODUCTION = """\
import json

CALLS = []


class Busy(Exception):
    transient = True


def analyze(images, context):
    CALLS.append(context["id"])
    if context["id"] == "T002" and context["run"] == 2:
        raise ValueError("no nameplate in view")
    if context["id"] == "T001" and context["run"] == 1 and CALLS.count("T001") == 1:
        raise Busy("try again")
    return {"type": "item", "item": {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090",
                                     "quantity": len(images)}, "imageNotes": context["kind"]}
"""


def test_python_provider_records_live_then_replays_and_a_code_change_makes_it_stale(work: Path, capsys, user_code):
    (work / "prodcode").mkdir()
    (work / "prodcode" / "analysis.py").write_text(PRODUCTION)
    (work / "data/lots/prompts/p.txt").unlink()                  # a python candidate needs no prompt
    providers = {"p": {"python": "prodcode.analysis:analyze"}}
    write_params(work, mode="live", providers=providers)
    assert run() == 1                                             # T002 run 2 failed, the others are kept
    rec = load_recording(work / "build/live/p.jsonl")
    code_sha = hashlib.sha256((work / "prodcode/analysis.py").read_bytes()).hexdigest()
    assert {(x.provider, x.model, x.prompt_sha256) for x in rec} == {("python", "prodcode.analysis:analyze",
                                                                      code_sha)}
    assert [(x.case, x.run, x.error) for x in rec if x.error] == [
        ("T002", 2, "after 1 attempt(s): ValueError: no nameplate in view")]
    t1 = next(x for x in rec if (x.case, x.run) == ("T001", 1))
    assert t1.parsed["item"]["quantity"] == 2 and t1.parsed["imageNotes"] == "lot"    # retried, whole gallery
    drill = next(x for x in rec if x.case == "drill")
    assert drill.parsed["imageNotes"] == "case"
    # promote (with the failed run recorded again by a second, now passing, attempt)
    (work / "prodcode" / "analysis.py").write_text(PRODUCTION)
    rec_file = work / "data/lots/recordings/p.jsonl"
    rec_file.parent.mkdir(exist_ok=True)
    lines = [x.model_copy(update={"error": None, "raw": t1.raw, "parsed": t1.parsed}) if x.error else x for x in rec]
    rec_file.write_text("".join(x.to_json() + "\n" for x in lines))
    write_params(work, providers=providers)
    assert run() == 0
    first = (work / "build/answers/p.jsonl").read_bytes()
    assert run() == 0 and (work / "build/answers/p.jsonl").read_bytes() == first       # byte-identical replay
    capsys.readouterr()
    with open(work / "prodcode" / "analysis.py", "a") as fh:
        fh.write("# one more line\n")
    assert run() == 2
    err = capsys.readouterr().err
    assert "recorded with other production code: prodcode/analysis.py changed" in err
    assert "record it again with `candor record" in err and " p` (add --force to replace a recording" in err
    # a folder as the declared source: a change to any file of it is a change
    write_params(work, providers=providers, sources={"p": "prodcode"})
    assert run() == 2 and "prodcode changed" in capsys.readouterr().err


def test_python_provider_import_errors_exit_2_naming_the_key(work: Path, capsys, user_code):
    write_params(work, mode="live", providers={"p": {"python": "nowhere.at_all:analyze"}})
    assert run() == 2
    err = capsys.readouterr().err
    assert "identify.providers.p.python" in err and "module nowhere not found" in err and "Traceback" not in err


def test_python_provider_import_error_quoting_the_key_exits_2_with_it_redacted(work: Path, capsys, monkeypatch,
                                                                                 user_code):
    (work / "prodcode").mkdir()
    (work / "prodcode" / "badcfg.py").write_text(
        "import json, os\nraise RuntimeError('no account for ' + json.dumps(os.environ['CANDOR_TEST_KEY']))\n")
    monkeypatch.setenv(ENV, 'sk-"q/b\\s<&>-TAIL-import-41')
    write_params(work, mode="live", providers={"p": {"python": "prodcode.badcfg:analyze"}})
    assert run() == 2
    err = capsys.readouterr().err
    assert "cannot import prodcode.badcfg: RuntimeError: no account for \"***\"" in err and "TAIL" not in err


def test_python_provider_resumes_after_an_interruption_and_takes_the_by_hand_flags(work: Path, tmp_path: Path,
                                                                                 monkeypatch, user_code):
    (work / "prodcode").mkdir()
    (work / "prodcode" / "stop.py").write_text(
        "import os, signal, time\nCALLS = []\n\n\ndef analyze(images, context):\n    CALLS.append(1)\n"
        "    if len(CALLS) == 3 and os.environ.get('STOP_AT_THREE'):\n"      # Ctrl-C on the stage, mid-call
        "        os.kill(os.getppid(), signal.SIGINT)\n        time.sleep(10)\n"
        "    return {'type': 'item', 'item': {'itemModel': 'OptiPlex 7090'}, 'imageNotes': context['id']}\n")
    write_params(work, mode="live", providers={"p": {"python": "prodcode.stop:analyze"}})
    monkeypatch.setenv("STOP_AT_THREE", "1")
    with pytest.raises(KeyboardInterrupt):
        run()
    monkeypatch.delenv("STOP_AT_THREE")
    assert len(load_recording(work / "build/live/p.jsonl")) == 2
    assert not (work / "build/live/p.jsonl.lock").exists()          # the lock went with the interrupted run
    assert run() == 0
    rec = load_recording(work / "build/live/p.jsonl")
    assert [(x.case, x.run) for x in rec] == [(i, r) for i in ("T001", "T002", "drill") for r in (1, 2)]
    report = tmp_path / "bm.json"
    assert run("--case", "dr*", "--runs", "1", "--label", "try", "--out", str(report),
               "--record", str(tmp_path / "try.jsonl")) == 0
    doc = json.loads(report.read_text())
    assert (doc["label"], doc["runs"], [a["case"] for a in doc["answers"]]) == ("try", 1, ["drill"])
    assert json.loads(doc["answers"][0]["raw"])["imageNotes"] == "drill"


def test_production_code_logging_or_printing_its_key_never_reaches_the_console(work: Path, monkeypatch, caplog,
                                                                                 capsys, user_code):
    """The code runs in a worker whose stdout and stderr are candor's to drain: its logs and prints never reach
    the console; a crashed call's message ends with the last of them, the key redacted."""
    (work / "prodcode").mkdir()
    (work / "prodcode" / "chatty.py").write_text(
        "import logging, os\n\n\ndef analyze(images, context):\n"
        "    logging.getLogger('prodcode').warning('POST with key %s', os.environ['CANDOR_TEST_KEY'])\n"
        "    print('the key is', os.environ['CANDOR_TEST_KEY'])\n"
        "    if context['id'] == 'drill':\n        os._exit(3)\n"
        "    return {'type': 'item'}\n")
    monkeypatch.setenv(ENV, KEY)                   # identify.api_key_env names it: its value is a secret
    write_params(work, mode="live", runs=1, providers={"p": {"python": "prodcode.chatty:analyze"}})
    assert run() == 1
    out = capsys.readouterr()
    recorded = (work / "build/live/p.jsonl").read_text()
    assert KEY not in caplog.text + out.out + out.err + recorded
    drill = next(x for x in load_recording(work / "build/live/p.jsonl") if x.case == "drill")
    assert drill.error.startswith("after 1 attempt(s): the process exited with status 3 before answering; stderr: ")
    assert "POST with key ***" in drill.error and "the key is ***" in drill.error
    assert not [f for h in logging.getLogger().handlers for f in h.filters
                if isinstance(f, live.RedactingFilter)]          # removed after the run


# ------------------------------------------------------------------ word lists and the commands hints print

def test_a_bench_without_vocabulary_reads_the_packaged_makes_with_the_same_digest(work: Path, capsys):
    """A local-ocr recording's digest is of the makes list, not of its place: a recording made with the committed
    list replays on a bench without vocabulary/ (candor's packaged list, the same bytes). The bench's own list
    wins over the packaged one; a --makes flag wins over both."""
    shutil.rmtree(work / "data/lots/vocabulary")
    write_params(work, providers={"p": "local-ocr"})
    committed = reader_sha256((work / "data/lots/prompts/p.txt").read_bytes(),
                              read_vocabulary(Makes, VOCABULARY / "makes.yaml").model_dump())
    write_recording(work, prompt_sha=committed)
    assert run() == 0
    (work / "data/lots/vocabulary").mkdir()
    (work / "data/lots/vocabulary/makes.yaml").write_text("makes: [Dell, HP]\n")
    capsys.readouterr()
    assert run() == 2 and "recorded with a different prompt" in capsys.readouterr().err
    assert run("--makes", str(VOCABULARY / "makes.yaml")) == 0


def test_live_suggests_the_bench_categories_else_the_packaged_ones_and_a_flag_wins(work: Path, monkeypatch):
    """The bench of --lots, not the working directory's data/lots, holds the word lists."""
    monkeypatch.setenv(ENV, KEY)
    tiers = "specific: null\nitemType: null\n"
    shutil.copytree(FIXTURE, work / "other")
    (work / "other/vocabulary").mkdir()
    (work / "other/vocabulary/category-library.yaml").write_text("functional: [Bench Tier]\n" + tiers)
    (work / "mine.yaml").write_text("functional: [Flag Tier]\n" + tiers)

    def prompts(record: str, *argv: str) -> list[str]:
        with chat_server([("ok", ANSWER)]) as srv:
            write_params(work, base_url=srv.url, mode="live", runs=1)
            assert run("--record", f"build/live/{record}.jsonl", *argv) == 0
        assert len(srv.requests) == 3
        return [r["json"]["messages"][0]["content"][0]["text"] for r in srv.requests]

    bench = prompts("bench", "--lots", "other")
    assert sum("- categoryFunctional: Bench Tier" in p for p in bench) == 2                         # the two lots
    flag = prompts("flag", "--lots", "other", "--categories", "mine.yaml")
    assert sum("- categoryFunctional: Flag Tier" in p for p in flag) == 2
    (work / "other/vocabulary/category-library.yaml").unlink()
    shutil.rmtree(work / "data/lots/vocabulary")
    packaged = "- categoryFunctional: Computers, Electronics"                                  # the committed list
    assert sum(packaged in p for p in prompts("packaged", "--lots", "other")) == 2


@pytest.mark.parametrize("stale", [True, False], ids=["stale", "missing"])
def test_the_rerecord_hint_repeats_the_run_s_flags_and_runs_as_printed(work: Path, monkeypatch, capsys, stale):
    """A bench elsewhere, a params file and word lists with spaces and quotes in their names: the hint's command
    (``candor record``) parses back to the same flags, records the candidate live and promotes the recording
    where the replay reads it, so the run that failed replays."""
    monkeypatch.setenv(ENV, KEY)
    bench = work / "my bench's lots"
    shutil.copytree(FIXTURE, bench)                                         # no vocabulary/ of its own
    words = work / "my words"
    shutil.copytree(VOCABULARY, words)
    (work / "params.yaml").rename(work / "my params.yaml")
    flags = ["--lots", str(bench), "--params", "my params.yaml", "--makes", str(words / "makes.yaml"),
             "--tokens", str(words / "tokens.yaml"), "--categories", str(words / "category-library.yaml"),
             "--answers", "out/p answers.jsonl"]
    if stale:
        write_recording(work, prompt_sha="b" * 64)
        (bench / "recordings").mkdir()
        (work / "data/lots/recordings/p.jsonl").rename(bench / "recordings/p.jsonl")
    assert run(*flags) == 2
    err = capsys.readouterr().err
    assert ("recorded with a different prompt" if stale else "recording not found") in err
    argv = hint_argv(err, stage="record")
    args = record.build_parser().parse_args(argv)
    assert (args.candidate, args.lots, args.params, args.makes, args.tokens, args.categories) == (
        "p", str(bench), "my params.yaml", str(words / "makes.yaml"), str(words / "tokens.yaml"),
        str(words / "category-library.yaml"))
    with chat_server([("ok", ANSWER)]) as srv:
        (work / "my params.yaml").write_text((work / "my params.yaml").read_text().replace(
            "http://127.0.0.1:9/v1", srv.url))
        assert run_main(record.main, [*argv, "--force"]) == 0                # the printed command (+ --force)
    assert len(srv.requests) == 6
    assert run(*flags) == 0                                                  # promoted where the replay reads it


def test_the_rerecord_hint_of_a_default_run_has_no_extra_flag(work: Path, capsys):
    write_recording(work, prompt_sha="b" * 64)
    assert run() == 2
    assert hint_argv(capsys.readouterr().err, stage="record") == ["p"]


# ------------------------------------------------------------------ the exec provider through the stage

EXEC_SECRET = "tok-EXEC-STAGE-SENTINEL-5150"


def exec_params(work: Path, **kw) -> None:
    """An exec candidate ``p``: tests/exec_child.py copied to ``prodcode/`` (its source), the plan and the secret
    declared."""
    (work / "prodcode").mkdir(exist_ok=True)
    if not (work / "prodcode/analyze.py").exists():
        shutil.copy(TESTS / "exec_child.py", work / "prodcode/analyze.py")
    provider = {"exec": [sys.executable, "prodcode/analyze.py"], "env": ["EXEC_PLAN"], "secrets": ["EXEC_SECRET"]}
    write_params(work, providers={"p": provider}, sources={"p": "prodcode"}, **kw)


def test_exec_provider_records_every_failure_then_resumes_replays_and_goes_stale(work: Path, monkeypatch, capsys,
                                                                                caplog, tmp_path):
    (work / "data/lots/prompts/p.txt").unlink()                  # an exec candidate needs no prompt
    monkeypatch.setenv("EXEC_SECRET", EXEC_SECRET)
    monkeypatch.setenv("EXEC_PLAN", json.dumps({"T001/2": "silent", "T002/1": "crash", "T002/2": "garbage",
                                                "drill/1": "exit0", "drill/2": "secret"}))
    exec_params(work, mode="live", timeout_s=3, retries=0, concurrency=2)   # 3 s: a process's start on a busy machine
    assert run() == 1                                             # the failed runs are recorded, the stage exits 1
    out = capsys.readouterr()
    rec = load_recording(work / "build/live/p.jsonl")
    assert [(x.case, x.run) for x in rec] == [(i, r) for i in ("T001", "T002", "drill") for r in (1, 2)]
    errors = {(x.case, x.run): x.error for x in rec if x.error}
    assert errors == {("T001", 2): "after 1 attempt(s): timed out after 3 s (the process was killed)",
                      ("T002", 1): "after 1 attempt(s): the process exited with status 3 before answering; "
                                   "stderr: boom",
                      ("T002", 2): "after 1 attempt(s): malformed response: not a JSON line (Expecting value): "
                                   "'Loading model weights... done'",
                      ("drill", 1): "after 1 attempt(s): the process exited with status 0 before answering"}
    t1 = next(x for x in rec if (x.case, x.run) == ("T001", 1))
    assert (t1.provider, t1.model, t1.version) == ("exec", f"{sys.executable} prodcode/analyze.py", "tiny 1.0")
    assert t1.parsed["imageNotes"].split()[2] == "2"              # the whole gallery
    pid = int(t1.parsed["imageNotes"].split()[1])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)                                           # stopped when the run ended
    assert "Traceback" not in out.err and "boom" not in out.out
    assert EXEC_SECRET not in all_text(work, out.out, out.err, caplog.text)
    assert "token *** word ***" in (work / "build/live/p.jsonl").read_text()
    # resume: only the four failed pairs are asked again
    monkeypatch.setenv("EXEC_PLAN", "{}")
    assert run() == 0
    again = load_recording(work / "build/live/p.jsonl")
    assert all(x.error is None for x in again) and len(again) == 6
    kept = {(x.case, x.run): x.to_json() for x in again}
    assert all(kept[(x.case, x.run)] == x.to_json() for x in rec if not x.error)
    # promote, replay (no process started), and a change to the source makes it stale
    (work / "data/lots/recordings").mkdir(exist_ok=True)
    shutil.copy(work / "build/live/p.jsonl", work / "data/lots/recordings/p.jsonl")
    exec_params(work)
    assert run() == 0
    with open(work / "prodcode/analyze.py", "a") as fh:
        fh.write("# one more line\n")
    capsys.readouterr()
    assert run() == 2 and "prodcode changed" in capsys.readouterr().err
    # by hand
    exec_params(work, mode="live", retries=0)
    report = tmp_path / "bm.json"
    assert run("--case", "dr*", "--runs", "1", "--label", "try", "--out", str(report)) == 0
    doc = json.loads(report.read_text())
    assert (doc["label"], doc["runs"], [a["case"] for a in doc["answers"]]) == ("try", 1, ["drill"])


def test_exec_provider_program_not_found_exits_2_naming_the_key(work: Path, capsys):
    (work / "prodcode").mkdir()
    (work / "prodcode/a.mjs").write_text("")
    write_params(work, mode="live", providers={"p": {"exec": ["no-such-program-xyz", "a.mjs"]}},
                 sources={"p": "prodcode"})
    assert run() == 2
    err = capsys.readouterr().err
    assert "identify.providers.p.exec[0]: program 'no-such-program-xyz' not found" in err and "Traceback" not in err


def live_subprocess(work: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``candor identify`` in its own process (its console as a person sees it, stdout and stderr in one),
    with stderr not a terminal: no progress bar."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), ENV: KEY}
    return subprocess.run([sys.executable, "-m", "candor_eval.stages.identify", "--candidate", "p", *flags],
                          cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)


def test_a_live_run_of_96_calls_prints_a_tally_not_a_line_per_call(work: Path):
    """32 runs of 3 ids, the 2nd call failing: at most 10 lines, the tally counting calls and the failure
    (worded as a live failure, never as a replayed one); ``-v`` logs every raw answer and the tables."""
    script = [("ok", ANSWER), ("status", 500), ("ok", ANSWER)]
    with chat_server(script) as srv:
        write_params(work, base_url=srv.url, mode="live", runs=32, retries=0, concurrency=4)
        quiet = live_subprocess(work)
        assert len(srv.requests) == 96
    lines = quiet.stdout.splitlines()
    assert quiet.returncode == 1 and len(lines) <= 10, quiet.stdout
    assert max(map(len, lines)) <= 100
    assert any("96 call(s) in" in ln and "95 answered (0 unparseable), 1 failed" in ln for ln in lines)
    assert any("first failure: " in ln and "HTTP 500" in ln for ln in lines)
    assert any(ln.startswith("field scores: ") for ln in lines) and "OptiPlex" not in quiet.stdout
    shutil.rmtree(work / "build")
    with chat_server([("ok", ANSWER)] * 64 + [("status", 500), ("ok", ANSWER)]) as srv:   # drill run 1 fails
        write_params(work, base_url=srv.url, mode="live", runs=32, retries=0)
        loud = live_subprocess(work, "-v")
    assert loud.returncode == 1 and loud.stdout.count("OptiPlex 7090") >= 95
    assert "failed in this live run (recorded with its error): run 1: after 1 attempt(s): HTTP 500" in loud.stdout
    assert "replay" not in loud.stdout


def test_the_live_progress_bar_counts_calls_and_failures(work: Path, monkeypatch):
    """The bar (drawn here into a buffer, as on a terminal): n/total, the rate, and the failures so far."""
    import io

    from tqdm import tqdm

    drawn = io.StringIO()
    monkeypatch.setattr(live, "progress_bar", lambda total, desc: tqdm(total=total, desc=desc, unit="call",
                                                                      file=drawn, ncols=100, mininterval=0))
    monkeypatch.setenv(ENV, KEY)
    with chat_server([("ok", ANSWER), ("status", 500), ("ok", ANSWER)]) as srv:
        write_params(work, base_url=srv.url, mode="live", retries=0)
        assert run() == 1
    final = drawn.getvalue().split("\r")[-1]
    assert final.startswith("live p: 100%") and "6/6" in final and "call/s" in final and "failed 1" in final
