"""score-lots stage: hand-computed identification/count/field metrics, outcome tables, determinism,
and the committed demo recordings scored against the script that generated them."""
from __future__ import annotations

import csv
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

import candor_eval.stages.identify as identify
import candor_eval.stages.score_lots as score_lots
from candor_eval.common.errors import run_main
from candor_eval.lots.golden import load_golden
from candor_eval.stats.outcomes import TABLES, parse_table
from tests.conftest import ROOT, TESTS, VOCABULARY, hint_argv

FIXTURE = TESTS / "data" / "lots"
REPO = ROOT
ITEM = {"type": "item", "item": {"itemType": "Cordless Drill", "categorySpecific": "Power Tools",
                                 "itemAttributes": [{"name": "Voltage", "value": "20 Volts"}]}}


def ans(case, run, status="ok", model=None, count=None, fields=None, error=None):
    return {"case": case, "run": run, "status": status, "make": None, "model": model,
            "count": count, "category": None, "fields": fields if status == "ok" else None, "error": error}


ANSWERS = {
    "a": [ans("T001", 1, model="Dell OptiPlex 7090", count=10), ans("T001", 2, model="OptiPlex 3080", count=24),
          ans("T002", 1, model="True RMS", count=2), ans("T002", 2, "error", error="HTTP 500 boom"),
          ans("drill", 1, fields=ITEM), ans("drill", 2, "unparseable", error="not JSON")],
    "b": [ans("T001", 1, model="OptiPlex 7090 SFF", count=10), ans("T001", 2, model="e.g. 7090", count=10),
          ans("T001", 3, model="7090 or 7080", count=10),
          ans("T002", 1, model="Fluke 87V", count=1), ans("T002", 2, "unparseable", error="not JSON"),
          ans("drill", 1, fields=ITEM), ans("drill", 2, fields={"type": "container", "container": {}})],
}


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root / "data" / "lots")
    shutil.copytree(VOCABULARY, root / "data" / "lots" / "vocabulary")
    monkeypatch.chdir(root)
    (root / "params.yaml").write_text(json.dumps({"identify": {"candidates": ["a", "b"], "mode": "replay"},
                                                  "lots": {"min_number_digits": 3}}))
    for cand, rows in ANSWERS.items():
        p = root / "build" / "answers" / f"{cand}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def run() -> int:
    return run_main(score_lots.main, ["--lots", "data/lots", "--answers", "build/answers", "--metrics", "metrics"])


def test_hand_computed_metrics_and_outcome_tables(work: Path, capsys):
    """Units: the lot (strict majority of its scored runs; a tie is ``split``), the (case, field), the case."""
    assert run() == 0
    doc = json.loads((work / "metrics/identification.json").read_text())
    m = doc["identification"]
    a = m["a"]   # T001 (held): hit, wrong -> tie, split; T002 (photo): abstain (+ one provider error)
    assert {k: a["all"][k] for k in ("lots", "hit", "abstain", "wrong", "hedged", "split", "consistent", "errors")} == \
        {"lots": 2, "hit": 0, "abstain": 1, "wrong": 0, "hedged": 0, "split": 1, "consistent": 1, "errors": 1}
    assert a["all"]["runs"] == {"n": 3, "hit": 1, "abstain": 1, "wrong": 1, "hedged": 0}   # descriptive
    assert (a["all"]["abstain_rate"], a["all"]["consistent_rate"]) == (0.5, 0.5)
    assert (a["held"]["lots"], a["held"]["split"], a["photo"]["abstain"], a["photo"]["errors"]) == (1, 1, 1, 1)
    # counts: T001 10 then 24 of 10 -> tie, not exact; T002 2 of 2 -> exact
    assert a["count"]["all"] == {"lots": 2, "exact": 1, "exact_rate": 0.5, "runs": {"n": 3, "exact": 2}}
    b = m["b"]   # T001: hit, hedged (e.g.), hedged (two models) -> abstain and hedged; T002: hit, unparseable -> split
    assert {k: b["all"][k] for k in ("lots", "hit", "abstain", "wrong", "hedged", "split", "consistent")} == \
        {"lots": 2, "hit": 0, "abstain": 1, "wrong": 0, "hedged": 1, "split": 1, "consistent": 0}
    assert b["all"]["runs"] == {"n": 5, "hit": 2, "abstain": 3, "wrong": 0, "hedged": 2}
    assert b["count"]["photo"] == {"lots": 1, "exact": 0, "exact_rate": 0.0, "runs": {"n": 2, "exact": 0}}
    counts = doc["counts"]
    assert counts["identification.b.all.hedged_rate"] == {"k": 1, "n": 2, "unit": "lot"}
    assert counts["identification.a.all.consistent_rate"] == {"k": 1, "n": 2, "unit": "lot"}
    assert {c["unit"] for c in counts.values()} == {"lot"}          # no rate counts runs
    rows = list(csv.reader((work / "metrics/outcomes/identification.csv").open()))
    assert rows == [["lot", "tier", "candidate", "run", "outcome", "count_exact"],
                    ["T001", "held", "a", "1", "hit", "1"], ["T001", "held", "a", "2", "wrong", "0"],
                    ["T001", "held", "b", "1", "hit", "1"], ["T001", "held", "b", "2", "abstain", "1"],
                    ["T001", "held", "b", "3", "abstain", "1"],
                    ["T002", "photo", "a", "1", "abstain", "1"],
                    ["T002", "photo", "b", "1", "hit", "0"], ["T002", "photo", "b", "2", "abstain", "0"]]
    text = (work / "metrics/outcomes/fields.csv").read_text()
    fields = list(csv.reader(text.splitlines()))
    assert fields[0] == ["case", "candidate", "position", "field", "hits", "total"]
    assert ["drill", "a", "0", "item.itemType", "1", "2"] in fields          # unparseable counts, as a miss
    assert ["drill", "b", "0", "item.itemType", "1", "2"] in fields          # container: path did not resolve
    assert ["drill", "a", "3", "item.itemModel", "0", "2"] in fields         # empty expected list
    # the case repeats the path item.itemAttributes: two rows, told apart by position; stats accepts the table
    assert ["drill", "a", "2", "item.itemAttributes", "1", "2"] in fields
    assert ["drill", "a", "4", "item.itemAttributes", "1", "2"] in fields
    assert len(parse_table(TABLES["fields.csv"], text, where="fields.csv")) == 10
    fa = json.loads((work / "metrics/fields/a.json").read_text())
    assert fa["overall"] == round((0.5 + 0.5 + 0.5 + 0 + 0.5) / 5, 6)
    assert fa["fields_met"] == {"met": 0, "n": 5, "rate": 0.0}               # 1 of 2 runs is no majority
    assert fa["counts"] == {"fields_met.rate": {"k": 0, "n": 5, "unit": "(case, field)", "cluster": "case",
                                                "clusters": 1, "sum_k2": 0, "sum_kn": 0, "sum_n2": 25},
                            "cases_met.rate": {"k": 0, "n": 1, "unit": "case"}}
    assert [f["position"] for f in fa["cases"]["drill"]["fields"]] == [0, 1, 2, 3, 4]
    assert any("expected list is empty" in n for n in fa["cases"]["drill"]["notes"])
    fb = json.loads((work / "metrics/fields/b.json").read_text())
    assert any("path did not resolve in 1/2" in n for n in fb["cases"]["drill"]["notes"])
    out = capsys.readouterr().out
    assert "drill — avg" in out and "split   1" in out


def test_outputs_are_byte_identical_on_rerun_and_hold_no_model_text(work: Path):
    assert run() == 0
    files = sorted(p for p in (work / "metrics").rglob("*") if p.is_file())
    first = {p: p.read_bytes() for p in files}
    assert run() == 0
    assert {p: p.read_bytes() for p in files} == first
    text = b"".join(first.values()).decode()
    assert "Cordless Drill" not in text and "OptiPlex 3080" not in text


def test_stale_field_reports_are_removed(work: Path):
    (work / "metrics/fields").mkdir(parents=True)
    (work / "metrics/fields/old.json").write_text("{}")
    assert run() == 0
    assert sorted(p.name for p in (work / "metrics/fields").iterdir()) == ["a.json", "b.json"]


def test_the_recorded_environment_reaches_the_identification_metrics(work: Path):
    """b's answers recorded MODE=fast on T001 run 1 and MODE unset on run 2: {MODE: [null, "fast"]}; a recorded
    none, so its summary has no environment key."""
    rows = [dict(r, environment={"MODE": "fast" if r["run"] == 1 else None}) if r["case"] == "T001" else r
            for r in ANSWERS["b"]]
    (work / "build/answers/b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run() == 0
    doc = json.loads((work / "metrics/identification.json").read_text())["identification"]
    assert doc["b"]["environment"] == {"MODE": [None, "fast"]} and "environment" not in doc["a"]


@pytest.mark.parametrize("edit, needle", [
    (lambda w: (w / "build/answers/b.jsonl").unlink(), "file not found"),
    (lambda w: (w / "build/answers/b.jsonl").write_text(json.dumps(ans("T001", 1, "maybe")) + "\n"),
     "b.jsonl:line 1.status"),
    (lambda w: (w / "build/answers/b.jsonl").write_text(2 * (json.dumps(ans("T001", 1)) + "\n")),
     "b.jsonl:line 2.run: duplicate (case, run)"),
    (lambda w: (w / "data/lots/lots.csv").write_text((w / "data/lots/lots.csv").read_text().replace(
        "T002,Fluke,87V,87V,", "T002,Fluke,Multimeter,,")), "lot T002.model: no distinctive model token"),
    (lambda w: (w / "params.yaml").write_text(json.dumps({"identify": {"candidates": ["a"]},
                                                          "lots": {"spec_wrds": []}})), "lots.spec_wrds"),
])
def test_bad_input_exits_2_and_writes_nothing(work: Path, capsys, edit, needle):
    edit(work)
    assert run() == 2
    assert needle in capsys.readouterr().err
    assert not (work / "metrics").exists()


def load_tool():
    spec = importlib.util.spec_from_file_location("make_recordings", REPO / "tools/lots/make_recordings.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_recordings_are_reproduced_by_the_seeded_tool():
    tool = load_tool()
    golden = load_golden(REPO / "data/lots")
    for cand in ("prompt-a", "prompt-b"):
        sha = tool.sha256_text(REPO / "data/lots/prompts" / f"{cand}.txt")
        lines = tool.build(golden, candidate=cand, sha=sha, seed=0)
        committed = (REPO / "data/lots/recordings" / f"{cand}.jsonl").read_text()
        assert "".join(x.to_json() + "\n" for x in lines) == committed


def test_demo_outcomes_follow_the_script(tmp_path: Path, monkeypatch):
    """Replay + score the committed demo; every (lot, run) outcome is the one its script code means
    (a hedged answer, code E, is an abstention)."""
    tool = load_tool()
    monkeypatch.chdir(REPO)
    out = tmp_path / "answers"
    for cand in ("prompt-a", "prompt-b", "ocr-baseline"):     # the OCR candidate is a real model: no script
        assert run_main(identify.main, ["--candidate", cand, "--answers", str(out / f"{cand}.jsonl")]) == 0
    assert run_main(score_lots.main, ["--answers", str(out), "--metrics", str(tmp_path / "m")]) == 0
    meaning = {"H": "hit", "E": "abstain", "P": "hit", "S": "abstain", "C": "abstain", "U": "abstain", "W": "wrong"}
    rows = [r for r in csv.DictReader((tmp_path / "m/outcomes/identification.csv").open())
            if r["candidate"] != "ocr-baseline"]
    assert len(rows) == 2 * 3 * len(tool.SCRIPT)
    for r in rows:
        ids, counts = tool.SCRIPT[r["lot"]][r["candidate"]]
        code = ids[int(r["run"]) - 1]
        assert r["outcome"] == meaning[code], r
        right_count = counts[int(r["run"]) - 1] == "." and code != "U"   # unparseable answers count nothing
        assert r["count_exact"] == ("1" if right_count else "0"), r
    committed = (REPO / "metrics/identification.json").read_bytes()
    assert (tmp_path / "m/identification.json").read_bytes() == committed


# ------------------------------------------------------------------ word lists and the commands hints print

def score(*argv: str) -> tuple[int, str]:
    """score-lots with ``argv``; its identification.json (empty when none was written)."""
    out = Path("metrics/identification.json")
    out.unlink(missing_ok=True)
    code = run_main(score_lots.main, ["--answers", "build/answers", "--metrics", "metrics", *argv])
    return code, out.read_text() if out.exists() else ""


def test_tokens_come_from_the_bench_of_lots_else_the_package_and_a_flag_wins(work: Path):
    code, committed = score("--lots", "data/lots")
    assert code == 0
    (work / "data/lots").rename(work / "my bench")                    # no data/lots left in the working directory
    shutil.rmtree(work / "my bench/vocabulary")
    assert score("--lots", "my bench") == (0, committed)             # candor's packaged tokens.yaml
    (work / "my bench/vocabulary").mkdir()
    (work / "my bench/vocabulary/tokens.yaml").write_text(
        "spec_words: []\nform_factors: []\ngeneration_prefixes: []\nhedge_markers: []\n")
    code, own = score("--lots", "my bench")                          # no hedge marker: "e.g. 7090" hedges no more
    assert code == 0 and json.loads(own)["identification"]["b"]["all"]["hedged"] == 0
    assert json.loads(committed)["identification"]["b"]["all"]["hedged"] == 1
    assert score("--lots", "my bench", "--tokens", str(VOCABULARY / "tokens.yaml")) == (0, committed)


def test_the_rebuild_hint_of_missing_answers_repeats_the_flags_and_parses_as_identify(work: Path, capsys):
    (work / "data/lots").rename(work / "my bench's lots")
    (work / "params.yaml").rename(work / "my params.yaml")
    (work / "build/answers").rename(work / "my answers")
    (work / "my answers/b.jsonl").unlink()
    code = run_main(score_lots.main, ["--lots", "my bench's lots", "--params", "my params.yaml",
                                      "--answers", "my answers", "--metrics", "metrics"])
    err = capsys.readouterr().err
    assert code == 2 and "my answers/b.jsonl: file not found" in err
    args = identify.build_parser().parse_args(hint_argv(err, stage="identify"))
    assert (args.candidate, args.lots, args.params, args.answers, args.tokens) == (
        "b", "my bench's lots", "my params.yaml", "my answers/b.jsonl", None)


def test_a_bench_of_cases_alone_without_word_lists_is_scored(work: Path):
    """No lots.csv, no photos, no vocabulary/: the cases are scored, the identification block has zero lots and
    the identification outcomes are their header alone."""
    lots = work / "data/lots"
    for gone in ("lots.csv", "photos", "vocabulary"):
        shutil.rmtree(lots / gone) if (lots / gone).is_dir() else (lots / gone).unlink()
    for cand, rows in ANSWERS.items():
        (work / "build/answers" / f"{cand}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows if r["case"] == "drill"))
    assert run() == 0
    a = json.loads((work / "metrics/identification.json").read_text())["identification"]["a"]["all"]
    assert (a["lots"], a["hit_rate"], a["runs"]["n"]) == (0, None, 0)
    assert (work / "metrics/outcomes/identification.csv").read_text().count("\n") == 1
    fields = json.loads((work / "metrics/fields/b.json").read_text())
    assert fields["cases_met"]["n"] == 1
