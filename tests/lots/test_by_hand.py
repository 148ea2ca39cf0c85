"""A by-hand run (:mod:`candor_eval.lots.by_hand`): ``--case``/``--runs``/``--label`` need ``--out``, ``--out`` lies
outside the repository root, ``--runs`` >= 1; the throwaway report pairs each answer with its raw text."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.answers import normalise_line
from candor_eval.lots.by_hand import check_by_hand, throwaway_report
from candor_eval.lots.fields import CaseScore, FieldScore
from candor_eval.lots.recording import RecordLine, parse_answer


@pytest.mark.parametrize(("flags", "needle"), [
    ({"cases": ["drill*"]}, "--case, --runs and --label are for by-hand runs"),
    ({"runs": 2}, "--case, --runs and --label are for by-hand runs"),
    ({"label": "x"}, "--case, --runs and --label are for by-hand runs"),
    ({"out": "inside/report.json"}, "must stay outside the repository"),
    ({"runs": 0, "out": "OUTSIDE"}, "--runs: must be at least 1"),
])
def test_by_hand_flags_are_refused(tmp_path: Path, flags, needle):
    root = tmp_path / "repo"
    root.mkdir()
    kw = {"cases": [], "runs": None, "label": None, "out": None} | flags
    if kw["out"] == "OUTSIDE":
        kw["out"] = str(tmp_path / "report.json")
    elif kw["out"]:
        kw["out"] = str(root / kw["out"])
    with pytest.raises(InputError, match=needle):
        check_by_hand(root=root, **kw)


@pytest.mark.parametrize("marker", [".git", ".dvc"])
def test_the_report_must_stay_outside_the_whole_repository_of_a_project_in_a_subfolder(tmp_path: Path, marker):
    repo = tmp_path / "repo"
    (repo / marker).mkdir(parents=True)
    (repo / "eval").mkdir()
    with pytest.raises(InputError, match="must stay outside the repository") as err:
        check_by_hand(cases=[], runs=None, label=None, out=str(repo / "report.json"), root=repo / "eval")
    assert f"a path outside {repo.resolve().as_posix()}" in str(err.value)
    check_by_hand(cases=[], runs=None, label=None, out=str(tmp_path / "report.json"), root=repo / "eval")


def test_a_by_hand_run_with_a_report_outside_the_root_passes(tmp_path: Path):
    root = tmp_path / "repo"
    root.mkdir()
    check_by_hand(cases=["drill*"], runs=1, label="x", out=str(tmp_path / "r.json"), root=root)
    check_by_hand(cases=[], runs=None, label=None, out=None, root=root)      # a pipeline run


def test_the_report_pairs_answers_with_their_raw_text():
    raw = '{"type": "item", "item": {"itemType": "Drill"}}'
    parsed, why = parse_answer(raw)
    line = RecordLine(case="drill", run=1, provider="openai-compatible", model="m", prompt_sha256="ab" * 32,
                      gallery="all", raw=raw, parsed=parsed, parse_error=why)
    score = CaseScore(case="drill", fields=(FieldScore(0, "item.itemType", ("Drill",), 1, 1, 0),), notes=(),
                      errors=(), runs=1)
    doc = throwaway_report(label="L", candidate="c", mode="replay", runs=1, sha="s", lines=[line],
                           answers=[normalise_line(line)], scores=[score])
    assert (doc["label"], doc["provider"], doc["model"], doc["prompt_sha256"]) == ("L", "openai-compatible", "m", "s")
    assert doc["answers"][0]["raw"] == raw and doc["answers"][0]["case"] == "drill"
    assert doc["cases"] == [{"case": "drill", "score": 1.0, "errors": [], "notes": [],
                             "fields": [{"position": 0, "field": "item.itemType", "expected": ["Drill"], "hits": 1,
                                         "total": 1, "score": 1.0, "met": True}]}]
    empty = throwaway_report(label="L", candidate="c", mode="live", runs=1, sha="s", lines=[], answers=[], scores=[])
    assert empty["provider"] is None and empty["answers"] == []


@pytest.mark.parametrize("label", ["gpt-x/newprompt", "../../../escaped", "", "a;b"])
def test_the_label_is_a_name_since_it_names_the_default_live_recording(tmp_path: Path, label):
    root = tmp_path / "repo"
    root.mkdir()
    with pytest.raises(InputError, match="--label: not a valid report name") as err:
        check_by_hand(cases=[], runs=None, label=label, out=str(tmp_path / "r.json"), root=root)
    assert "one path segment" in str(err.value)
    check_by_hand(cases=[], runs=None, label="gpt-x-newprompt", out=str(tmp_path / "r.json"), root=root)
