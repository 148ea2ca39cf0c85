"""The dvc.yaml ``candor init`` writes (candor_eval/adopt/scaffold.py), per track."""
from __future__ import annotations

import pytest
import yaml

from candor_eval.adopt.lockfile import stages_of
from candor_eval.adopt.scaffold import dvc_yaml, params_with_missing, params_yaml, sections

SHAPES = [("detector", None), ("lots", None), ("both", None), ("lots", "cases"), ("lots", "lots"),
          ("both", "cases")]


@pytest.mark.parametrize("track, bench", SHAPES)
def test_each_track_gets_its_stages_each_with_its_code_fingerprint(track, bench):
    doc = yaml.safe_load(dvc_yaml(track, bench))
    assert list(doc["stages"]) == [s for s in stages_of(track, bench) if s != "latency"]
    for name, stage in doc["stages"].items():
        body = stage.get("do", stage)
        assert {"candor.lock": [f"code.{name}"]} in body["params"]
        assert not [d for d in body.get("deps", []) if d.startswith(("candor", "stages"))]
        outs = [next(iter(o.values())) for o in body["outs"]] + [next(iter(o.values())) for o in
                                                                   body.get("metrics", [])]
        assert all(o["persist"] for o in outs), name


def test_one_track_gets_nothing_of_the_other():
    detector, lots = dvc_yaml("detector"), dvc_yaml("lots")
    assert "identification" not in detector and "valuation" not in detector and "data/lots" not in detector
    assert "detection" not in lots and "gate" not in lots and "plots:" not in lots


def deps(doc: dict, stage: str) -> list[str]:
    body = doc["stages"][stage]
    return body.get("do", body)["deps"]


def test_a_cases_bench_depends_on_its_cases_only_and_has_no_valuation():
    """DVC refuses to run a stage whose dep is missing: a bench of cases has no lots.csv, photos or comps."""
    doc = yaml.safe_load(dvc_yaml("lots", "cases"))
    assert list(doc["stages"]) == ["fetch", "identify", "score-lots", "stats"]
    assert deps(doc, "identify") == ["data/lots/cases", "${item}", "data/lots/recordings/${key}.jsonl",
                                     "data/lots/vocabulary"]
    assert deps(doc, "score-lots") == ["data/lots/cases", "data/lots/vocabulary", "build/answers"]
    assert deps(doc, "stats") == ["metrics/outcomes", "metrics/identification.json", "metrics/fields"]
    assert "valuation" not in doc["stages"]["stats"]["cmd"]
    assert "comps:" not in params_yaml("lots", "cases") and "comps:" in params_yaml("lots")


def test_a_lots_bench_adds_the_lots_and_photos_and_the_valuation_bench_the_comps():
    lots, valued = yaml.safe_load(dvc_yaml("lots", "lots")), yaml.safe_load(dvc_yaml("lots", "valuation"))
    assert deps(lots, "identify")[:3] == ["data/lots/lots.csv", "data/lots/photos", "data/lots/cases"]
    assert "value" not in lots["stages"] and "comps:" not in params_yaml("lots", "lots")
    assert deps(valued, "identify") == deps(lots, "identify") and "data/comps" in deps(valued, "score-valuation")
    assert "metrics/valuation.json" in deps(valued, "stats")


def test_an_unrecorded_bench_is_the_full_shape_and_the_header_names_a_given_one():
    """candor's own repository (track both) and every lots project from before the shapes keep their file."""
    assert dvc_yaml("both") == dvc_yaml("both", "valuation").replace("(track: both, bench: valuation)",
                                                                      "(track: both)")
    assert "(track: lots, bench: cases)" in dvc_yaml("lots", "cases")


@pytest.mark.parametrize("track, bench", SHAPES)
def test_an_interpolated_name_stays_one_word_of_the_shell_command(track, bench):
    """DVC substitutes ``${key}`` / ``${item}`` before the shell reads ``cmd``: a hostile name (refused later,
    when params are read) must still reach candor as one argument, never as a command of its own."""
    import shlex

    hostile = "x;touch${IFS}PWNED;#$(id)`id` a|b&c"
    for stage in yaml.safe_load(dvc_yaml(track, bench))["stages"].values():
        cmd = stage.get("do", stage)["cmd"]
        if "${" not in cmd:
            continue
        lexer = shlex.shlex(cmd.replace("${key}", hostile).replace("${item}", hostile), posix=True,
                            punctuation_chars=True)     # ; | & ( ) split words outside quotes, as the shell does
        lexer.whitespace_split = True
        words = list(lexer)
        assert "touch" not in " ".join(w for w in words if hostile not in w)
        assert sum(hostile in w for w in words) == cmd.count("${key}") + cmd.count("${item}")


def test_a_grown_bench_keeps_every_byte_of_the_params_and_adds_the_missing_sections():
    cases, valuation = params_yaml("lots", "cases"), params_yaml("lots", "valuation")
    assert list(sections(cases)) == ["identify", "lots", "stats"]
    comps = sections(valuation)["comps"]
    assert comps.startswith("comps:   ") and comps.endswith("all_items: every item\n")
    edited = cases.replace("  runs: 3 ", "  runs: 5 ") + "report:\n  top: 3"        # the team's, no last newline
    grown = params_with_missing(edited, valuation)
    assert grown == edited + "\n" + sections(valuation)["comps"]
    assert yaml.safe_load(grown)["identify"]["runs"] == 5 and yaml.safe_load(grown)["report"] == {"top": 3}
    assert params_with_missing(grown, valuation) == grown                    # nothing lacking: unchanged
    assert params_with_missing("a: [", valuation) is None and params_with_missing("- 1\n", valuation) is None
