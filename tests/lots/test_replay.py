"""Replay (:mod:`candor_eval.lots.replay`): the ids a ``--case`` glob keeps, and the recorded line of every wanted
(id, run), refused when a pair is missing, recorded with another prompt or code (SHA-256) or another gallery
setting, all problems at once with the command that records it again."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.golden import Case, ExpectationSpec, Golden, Lot
from candor_eval.lots.recording import RecordLine
from candor_eval.lots.replay import check_replay, select_ids

SHA, OTHER = "a" * 64, "b" * 64
SPEC = ExpectationSpec(field="item.itemType", expected=("Drill",))
GOLDEN = Golden(root=Path("g"), cases=(Case(name="drill", image="d.png", expectations=(SPEC,)),),
                lots=tuple(Lot(id=i, make="Dell", model="OptiPlex 7090", category="c", tier="held", valuation=False)
                           for i in ("T002", "T001")))


def line(case: str, run: int, *, sha: str = SHA, gallery: str = "all") -> RecordLine:
    return RecordLine(case=case, run=run, raw="{}", parsed={}, provider="p", model="m", prompt_sha256=sha,
                      gallery=gallery)


@pytest.mark.parametrize(("globs", "ids"), [([], ["T001", "T002", "drill"]), (["T*"], ["T001", "T002"]),
                                            (["dr?ll", "T002"], ["T002", "drill"])])
def test_select_ids_keeps_what_a_glob_matches(globs, ids):
    assert select_ids(GOLDEN, globs) == ids


def test_a_glob_matching_nothing_is_refused():
    with pytest.raises(InputError, match="--case: no lot or case matches"):
        select_ids(GOLDEN, ["x*"])


def test_replay_returns_the_wanted_lines_in_id_run_order():
    lines = [line("T002", 1), line("T001", 2), line("T001", 1), line("T001", 3)]
    got = check_replay(lines, ids=["T001", "T002"], runs=1, sha=SHA, gallery="all", file="r.jsonl")
    assert [(ln.case, ln.run) for ln in got] == [("T001", 1), ("T002", 1)]      # run 2 and 3 are not wanted


def test_missing_stale_and_other_gallery_are_reported_at_once_with_the_fix():
    lines = [line("T001", 1, sha=OTHER), line("T001", 2, gallery="first")]
    with pytest.raises(InputError) as err:
        check_replay(lines, ids=["T001"], runs=3, sha=SHA, gallery="all", file="r.jsonl", rerecord="record-me")
    assert [p.what for p in err.value.problems] == ["1 (case, run) pair(s) not recorded",
                                                    "recorded with a different prompt",
                                                    "recorded with a different gallery setting"]
    assert err.value.problems[0].got == "T001 run 3" and err.value.problems[1].got == OTHER
    assert "`record-me`" in str(err.value)


def test_stale_production_code_names_the_code():
    with pytest.raises(InputError, match="recorded with other production code: app/ changed"):
        check_replay([line("T001", 1, sha=OTHER)], ids=["T001"], runs=1, sha=SHA, gallery="all", file="r",
                     code="app/")


def test_more_than_eight_missing_pairs_are_cut_short():
    with pytest.raises(InputError) as err:
        check_replay([], ids=["T001", "T002", "drill"], runs=3, sha=SHA, gallery="all", file="r")
    got = err.value.problems[0].got
    assert err.value.problems[0].what == "9 (case, run) pair(s) not recorded" and got.endswith(" ...")
    assert got.count(" run ") == 8


def test_stale_code_of_several_paths_names_the_paths_that_changed():
    parts = {"webapp/prompts.ts": "1" * 64, "webapp/services": "2" * 64}
    old = line("T001", 1, sha=OTHER).model_copy(update={"sources": {**parts, "webapp/prompts.ts": "3" * 64}})
    with pytest.raises(InputError, match="recorded with other production code: webapp/prompts.ts changed"):
        check_replay([old], ids=["T001"], runs=1, sha=SHA, gallery="all", file="r",
                     code="webapp/prompts.ts, webapp/services", parts=parts)
    with pytest.raises(InputError, match="production code: one of webapp/prompts.ts, webapp/services changed"):
        check_replay([line("T001", 1, sha=OTHER)], ids=["T001"], runs=1, sha=SHA, gallery="all", file="r",
                     code="webapp/prompts.ts, webapp/services", parts=parts)
    fresh = line("T001", 1).model_copy(update={"sources": parts})
    assert check_replay([fresh], ids=["T001"], runs=1, sha=SHA, gallery="all", file="r", code="x", parts=parts) \
        == [fresh]
