from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from candor_eval.common.errors import InputError
from candor_eval.common.names import NAME, RULE, Name, check_name, name_problem
from candor_eval.detection.config import NAME as DETECTOR_NAME
from candor_eval.detection.config import DetectorParams

GOOD = ["prompt-a", "ocr-baseline", "demo-v1", "detector", "p", "7", "yolov8n-2024.1", "a_b", "x..y", "A9"]
BAD = ["", ".", "..", "../../escape", "gpt-x/newprompt", "a\\b", "x;touch${IFS}PWNED;#", "$(touch PWNED)",
       "`id`", "my model", " a", "a ", "-rf", "_a", ".hidden", "a|b", "a&b", "a*", "a'b", 'a"b', "a\nb", "café",
       "a\x00b", "a>b", "ａ"]


@pytest.mark.parametrize("name", GOOD)
def test_these_are_names(name):
    assert name_problem(name) is None
    assert check_name(name, what="candidate", where="--candidate") == name


@pytest.mark.parametrize("name", BAD)
def test_these_are_not_names_and_the_error_names_the_key_and_the_rule(name):
    assert name_problem(name) == f"{name!r} is not a name: {RULE}"
    with pytest.raises(InputError) as err:
        check_name(name, what="candidate", where="params.yaml:identify.candidates")
    assert err.value.message.startswith("params.yaml:identify.candidates: not a valid candidate name")
    assert RULE in err.value.message


def test_a_non_string_is_not_a_name():
    assert name_problem(3) is not None and name_problem(None) is not None


def test_the_pydantic_type_applies_the_same_rule():
    class M(BaseModel):
        names: list[Name]

    assert M(names=GOOD).names == GOOD
    with pytest.raises(ValidationError, match="is not a name: one path segment"):
        M(names=["ok", "a/b"])


def test_detection_sets_and_candor_add_follow_the_same_rule():
    """detector.sets (detection/config.py) and `candor add` (stages/add.py, check_name) check names with the
    same pattern: a name valid for one is valid for all."""
    assert DETECTOR_NAME.pattern == NAME.pattern
    for name in GOOD:
        DetectorParams(sets={name: [name]})
        check_name(name, what="set", where="NAME")
    for name in BAD:
        with pytest.raises(ValidationError):
            DetectorParams(sets={"s": [name]})
        with pytest.raises(ValidationError):
            DetectorParams(sets={name: ["m"]})
        with pytest.raises(InputError):
            check_name(name, what="set", where="NAME")
