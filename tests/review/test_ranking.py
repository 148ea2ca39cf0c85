"""candor_eval/review/ranking.py and stages/sweep_table.py: a sweep ranked in 100 columns, from DVC's own
JSON (tests/data/sweep/exps.json: ``dvc exp show --json`` after a two-value sweep of thresholds.deer,
trimmed to the params and headline metrics)."""
from __future__ import annotations

import json

import pytest

from candor_eval.common.errors import InputError, run_main
from candor_eval.review.ranking import ranking, render
from candor_eval.stages.sweep_table import main
from tests.conftest import TESTS

EXPS = TESTS / "data" / "sweep" / "exps.json"
KEY = "detection.detector.demo-v2.dev.f1"
TEST_KEY = "detection.detector.demo-v2.f1"


def test_ranked_best_first_on_the_dev_split_where_the_test_split_ranks_otherwise(capsys):
    """The fixture's dev F1 ranks the deer thresholds 0.15 > 0.2 > 0.3, its test F1 the other way round:
    the sweep ranks on dev (thresholds are tuned on dev), and a test-split key is refused."""
    entries = ranking(json.loads(EXPS.read_text()), param="thresholds.deer", sort_key=KEY)
    assert [(e.name, e.param) for e in entries] == [("swell-ices", 0.15), ("workspace", 0.2), ("main", 0.2),
                                                     ("hazel-dunk", 0.3)]
    assert [e.key for e in entries] == sorted((e.key for e in entries), reverse=True)
    on_test = ranking(json.loads(EXPS.read_text()), param="thresholds.deer", sort_key=TEST_KEY)
    assert [e.name for e in on_test] == ["hazel-dunk", "workspace", "main", "swell-ices"]
    with pytest.raises(InputError, match="--sort: detection.detector.demo-v2.f1 is a test-split figure: rank on "
                                         "detection.detector.demo-v2.dev.f1"):
        main(["--param", "thresholds.deer", "--sort", TEST_KEY, "--from", str(EXPS)])
    assert main(["--param", "thresholds.deer", "--sort", KEY, "--from", str(EXPS)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2].split()[:2] == ["swell-ices", "0.15"] and "(dev split" in out
    low = ranking(json.loads(EXPS.read_text()), param="thresholds.deer",
                  sort_key="detection.detector.demo-v2.dev.fp_per_frame", ascending=True)
    assert low[0].name == "hazel-dunk" and low[-1].name == "swell-ices"


def test_the_table_fits_100_columns_and_shows_param_and_key(capsys):
    assert main(["--param", "thresholds.deer", "--sort", f"metrics/headline.json:{KEY}", "--from", str(EXPS)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[0].split()[:3] == ["experiment", "thresholds.deer", "f1"]
    assert lines[2].split()[:3] == ["swell-ices", "0.15", "0.4698"]
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
    with pytest.raises(InputError, match="no revision or experiment has detection.x.y.dev.z"):
        main(["--param", "thresholds.deer", "--sort", "detection.x.y.dev.z", "--from", str(EXPS)])


def test_the_swept_param_is_read_from_the_params_file_dvc_names(tmp_path, capsys):
    """A project whose params file is ``eval/params.yaml``: ``--params`` names DVC's key for it; the
    default key, a file no revision lists, is an error naming the files listed."""
    doc = json.loads(EXPS.read_text().replace('"params.yaml"', '"eval/params.yaml"'))
    other = ranking(doc, param="thresholds.deer", sort_key=KEY, params_file="eval/params.yaml")
    assert [(e.name, e.param) for e in other][0] == ("swell-ices", 0.15)
    with pytest.raises(InputError, match="no revision lists the params file 'params.yaml'.*eval/params.yaml"):
        ranking(doc, param="thresholds.deer", sort_key=KEY)
    moved = tmp_path / "exps.json"
    moved.write_text(json.dumps(doc))
    argv = ["--param", "thresholds.deer", "--sort", KEY, "--from", str(moved), "--params", "eval/params.yaml"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[2].split()[:2] == ["swell-ices", "0.15"]


def _base(**over):
    node = {"rev": "workspace", "name": None, "experiments": None,
            "data": {"params": {"params.yaml": {"data": {"x": 1}}},
                     "metrics": {"metrics/headline.json": {"data": {"a": {"f1": 0.5}}}}}}
    return node | over


@pytest.mark.parametrize("doc, where", [
    ({"rev": "w"}, r"dvc exp show --json: wrong type \(expected a list of revisions, got 'dict'\)"),
    ([3], r"dvc exp show --json\[0\]: wrong type"),
    ([_base(experiments=3)], r"\[0\].experiments: wrong type \(expected a list or null, got 'int'\)"),
    ([_base(rev=7)], r"\[0\].rev: wrong type \(expected text or null, got 'int'\)"),
    ([_base(name=["n"])], r"\[0\].name: wrong type"),
    ([_base(experiments=[3])], r"\[0\].experiments\[0\]: wrong type"),
    ([_base(experiments=[{"revs": 5}])], r"\[0\].experiments\[0\].revs: wrong type"),
    ([_base(experiments=[{"revs": ["r"]}])], r"\[0\].experiments\[0\].revs\[0\]: wrong type"),
    ([_base(experiments=[{"revs": [{"rev": 12345678, "data": {}}]}])], r"revs\[0\].rev: wrong type"),
    ([_base(data=[])], r"\[0\].data: wrong type"),
    ([_base(data={"metrics": 1})], r"\[0\].data.metrics: wrong type"),
    ([_base(data={"metrics": {"metrics/headline.json": 2}})], r"data.metrics.metrics/headline.json: wrong type"),
    ([_base(data={"params": {"params.yaml": {"data": "x"}}})], r"data.params.params.yaml.data: wrong type"),
])
def test_every_level_of_the_json_is_type_checked(doc, where):
    """``dvc exp show --json`` edited or from another tool: a wrong type is an error naming its path,
    never a TypeError."""
    with pytest.raises(InputError, match=where):
        ranking(doc, param="x", sort_key="a.f1")


def test_nulls_and_a_well_typed_experiment_rank():
    exp = {"revs": [{"rev": "0123456789", "name": None, "data": _base()["data"]}]}
    entries = ranking([_base(experiments=[exp]), _base(rev=None, data=None)], param="x", sort_key="a.f1")
    assert [(e.name, e.param, e.key) for e in entries] == [("workspace", 1, 0.5), ("0123456", 1, 0.5)]


def test_the_command_exits_2_on_a_wrong_type(tmp_path):
    bad = tmp_path / "exps.json"
    bad.write_text(json.dumps([_base(experiments=3)]))
    assert run_main(main, ["--param", "x", "--sort", "a.f1", "--from", str(bad)]) == 2
