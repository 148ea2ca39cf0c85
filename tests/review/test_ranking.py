"""candor_eval/review/ranking.py and stages/sweep_table.py: a sweep ranked in 120 columns, from DVC's own
JSON (tests/data/sweep/exps.json: ``dvc exp show --json`` after a two-value sweep of thresholds.deer,
trimmed to the params and headline metrics)."""
from __future__ import annotations

import json

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.ranking import ranking, render
from candor_eval.stages.sweep_table import main
from tests.conftest import TESTS

EXPS = TESTS / "data" / "sweep" / "exps.json"
KEY = "detection.detector.demo-v2.f1"


def test_ranked_best_first_with_the_swept_param():
    entries = ranking(json.loads(EXPS.read_text()), param="thresholds.deer", sort_key=KEY)
    assert [(e.name, e.param) for e in entries] == [("hazel-dunk", 0.3), ("workspace", 0.2), ("main", 0.2),
                                                     ("swell-ices", 0.15)]
    assert [e.key for e in entries] == sorted((e.key for e in entries), reverse=True)
    low = ranking(json.loads(EXPS.read_text()), param="thresholds.deer",
                  sort_key="detection.detector.demo-v2.fp_per_frame", ascending=True)
    assert low[0].name == "hazel-dunk" and low[-1].name == "swell-ices"


def test_the_table_fits_120_columns_and_shows_param_and_key(capsys):
    assert main(["--param", "thresholds.deer", "--sort", f"metrics/headline.json:{KEY}", "--from", str(EXPS)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= 120
    assert lines[0].split()[:3] == ["experiment", "thresholds.deer", "f1"]
    assert lines[2].split()[:3] == ["hazel-dunk", "0.3", "0.526"]
    assert "candor compare" in lines[-1]
    narrow = render(ranking(json.loads(EXPS.read_text()), param="thresholds.deer", sort_key=KEY),
                    param="thresholds.deer", sort_key=KEY, width=60)
    assert max(map(len, narrow.splitlines())) <= 60 and "thresholds.deer" in narrow


def test_absent_values_and_unknown_keys(tmp_path):
    assert ranking([{"rev": "workspace", "data": {}}], param="x", sort_key=KEY) == []
    bad = tmp_path / "exps.json"
    bad.write_text("[")
    with pytest.raises(InputError, match="not JSON"):
        main(["--param", "thresholds.deer", "--sort", KEY, "--from", str(bad)])
    with pytest.raises(InputError, match="no revision or experiment has detection.x"):
        main(["--param", "thresholds.deer", "--sort", "detection.x", "--from", str(EXPS)])


def test_the_swept_param_is_read_from_the_params_file_dvc_names(tmp_path, capsys):
    """A project whose params file is ``eval/params.yaml``: ``--params`` names DVC's key for it; the
    default key finds no value there (``-``)."""
    doc = json.loads(EXPS.read_text().replace('"params.yaml"', '"eval/params.yaml"'))
    other = ranking(doc, param="thresholds.deer", sort_key=KEY, params_file="eval/params.yaml")
    assert [(e.name, e.param) for e in other][0] == ("hazel-dunk", 0.3)
    assert {e.param for e in ranking(doc, param="thresholds.deer", sort_key=KEY)} == {None}
    moved = tmp_path / "exps.json"
    moved.write_text(json.dumps(doc))
    argv = ["--param", "thresholds.deer", "--sort", KEY, "--from", str(moved), "--params", "eval/params.yaml"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[2].split()[:2] == ["hazel-dunk", "0.3"]
