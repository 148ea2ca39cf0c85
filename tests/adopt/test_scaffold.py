"""The dvc.yaml ``candor init`` writes (candor_eval/adopt/scaffold.py), per track."""
from __future__ import annotations

import pytest
import yaml

from candor_eval.adopt.lockfile import stages_of
from candor_eval.adopt.scaffold import dvc_yaml


@pytest.mark.parametrize("track", ["detector", "lots", "both"])
def test_each_track_gets_its_stages_each_with_its_code_fingerprint(track):
    doc = yaml.safe_load(dvc_yaml(track))
    assert list(doc["stages"]) == [s for s in stages_of(track) if s != "latency"]
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


@pytest.mark.parametrize("track", ["detector", "lots", "both"])
def test_an_interpolated_name_stays_one_word_of_the_shell_command(track):
    """DVC substitutes ``${key}`` / ``${item}`` before the shell reads ``cmd``: a hostile name (refused later,
    when params are read) must still reach candor as one argument, never as a command of its own."""
    import shlex

    hostile = "x;touch${IFS}PWNED;#$(id)`id` a|b&c"
    for stage in yaml.safe_load(dvc_yaml(track))["stages"].values():
        cmd = stage.get("do", stage)["cmd"]
        if "${" not in cmd:
            continue
        lexer = shlex.shlex(cmd.replace("${key}", hostile).replace("${item}", hostile), posix=True,
                            punctuation_chars=True)     # ; | & ( ) split words outside quotes, as the shell does
        lexer.whitespace_split = True
        words = list(lexer)
        assert "touch" not in " ".join(w for w in words if hostile not in w)
        assert sum(hostile in w for w in words) == cmd.count("${key}") + cmd.count("${item}")
