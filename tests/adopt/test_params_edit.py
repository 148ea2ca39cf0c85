"""Adding a set or a model to detector.sets by inserting text (candor_eval/adopt/params_edit.py): every other
byte stays, and the result parses to the old document plus the addition."""
from __future__ import annotations

import pytest
import yaml

from candor_eval.adopt.params_edit import add_model, add_set, choose_set, detector_sets
from candor_eval.common.errors import InputError
from candor_eval.common.names import check_name
from tests.conftest import ROOT
from tests.support_adopt import PARAMS


def test_a_set_goes_into_init_s_empty_mapping_which_becomes_a_block_keeping_its_comment_column():
    new = add_set(PARAMS, "pets", where="params.yaml")
    assert new == PARAMS.replace(
        "  sets: {}                     # set",
        "  sets:                        # set").replace("`candor add model`\n", "`candor add model`\n    pets: []\n")
    assert add_model(new, "yolo-v1", set_name="pets", where="p") == new.replace("pets: []", "pets: [yolo-v1]")


def added_line(old: str, new: str) -> str:
    """The one line ``new`` has that ``old`` has not (every other line the same, in order)."""
    a, b = old.splitlines(), new.splitlines()
    i = next(k for k in range(len(b)) if k == len(a) or a[k] != b[k])
    assert b[:i] + b[i + 1:] == a
    return b[i]


def test_a_set_and_a_model_in_the_repositorys_own_params_add_one_line_each():
    old = (ROOT / "params.yaml").read_text()
    sets = yaml.safe_load(old)["detector"]["sets"]
    first = next(iter(sets))
    new = add_set(old, "pets", where="params.yaml")
    assert added_line(old, new) == "    pets: []"
    assert yaml.safe_load(new)["detector"]["sets"] == {**sets, "pets": []}
    new = add_model(old, "demo-v9", set_name=first, where="params.yaml")
    assert added_line(old, new).strip() == "- demo-v9"
    assert yaml.safe_load(new)["detector"]["sets"] == {**sets, first: [*sets[first], "demo-v9"]}


@pytest.mark.parametrize("old, set_name, new", [
    # a block list: a new line with the list's own dash and indent, after its last item (and its comment)
    ("detector:\n  sets:\n    a:\n    -   m1   # x\n", "a",
     "detector:\n  sets:\n    a:\n    -   m1   # x\n    -   m\n"),
    ("detector:\n  sets:\n    a:\n      - m1\n", "a", "detector:\n  sets:\n    a:\n      - m1\n      - m\n"),
    # a flow list: before its ]
    ("detector:\n  sets:\n    a: [m1]    # c\n", "a", "detector:\n  sets:\n    a: [m1, m]    # c\n"),
    ("detector:\n  sets:\n    a: []\n", "a", "detector:\n  sets:\n    a: [m]\n"),
    # an empty or written null: a flow list
    ("detector:\n  sets:\n    a:\n  floor: 0.1\n", "a", "detector:\n  sets:\n    a: [m]\n  floor: 0.1\n"),
    ("detector:\n  sets:\n    a: ~   # c\n", "a", "detector:\n  sets:\n    a: [m]   # c\n"),
])
def test_a_model_is_appended_to_its_sets_list(old, set_name, new):
    assert add_model(old, "m", set_name=set_name, where="p") == new


@pytest.mark.parametrize("old, new", [
    # the comment lines after the last set stay below the new one (a YAML round trip moves them above)
    ("detector:\n  sets:\n    a: [m]\n\n# next section\nmatch:\n  iou: 0.5\n",
     "detector:\n  sets:\n    a: [m]\n    pets: []\n\n# next section\nmatch:\n  iou: 0.5\n"),
    ("detector:\n  sets:\n    a:\n    - m\n", "detector:\n  sets:\n    a:\n    - m\n    pets: []\n"),
    # no sets, no detector, nothing: created, one indent step deeper (the file's own step)
    ("detector:\n    floor: 0.1\n", "detector:\n    floor: 0.1\n    sets:\n        pets: []\n"),
    ("stats:\n    alpha: 0.05\n", "stats:\n    alpha: 0.05\ndetector:\n    sets:\n        pets: []\n"),
    ("", "detector:\n  sets:\n    pets: []\n"),
    ("# mine", "# mine\ndetector:\n  sets:\n    pets: []\n"),
    # an empty value, a written null, flow mappings
    ("detector:\n  sets:   # c\n  floor: 0.1\n", "detector:\n  sets:   # c\n    pets: []\n  floor: 0.1\n"),
    ("detector:\n  sets: null\n", "detector:\n  sets:\n    pets: []\n"),
    ("detector: {sets: {a: [m]}, floor: 0.1}\n", "detector: {sets: {a: [m], pets: []}, floor: 0.1}\n"),
    ("detector: {floor: 0.1}\n", "detector: {floor: 0.1, sets: {pets: []}}\n"),
    # Windows line ends stay Windows line ends
    ("detector:\r\n  sets:\r\n    a: [m]\r\n", "detector:\r\n  sets:\r\n    a: [m]\r\n    pets: []\r\n"),
])
def test_a_set_is_added_without_touching_another_line(old, new):
    assert add_set(old, "pets", where="p") == new


def test_rerunning_changes_nothing():
    once = add_model(add_set(PARAMS, "pets", where="p"), "m", set_name="pets", where="p")
    assert add_set(once, "pets", where="p") == once
    assert add_model(once, "m", set_name="pets", where="p") == once


def test_a_name_that_would_read_as_another_type_is_quoted():
    new = add_model(add_set(PARAMS, "true", where="p"), "1.5", set_name="true", where="p")
    assert "    'true': ['1.5']\n" in new
    assert yaml.safe_load(new)["detector"]["sets"] == {"true": ["1.5"]}


def test_a_layout_it_cannot_place_text_in_is_refused_with_the_line_to_add():
    with pytest.raises(InputError, match="add it by hand: detector.sets: pets: \\[\\]"):
        add_set("detector: {sets: {}}\n", "pets", where="params.yaml")


@pytest.mark.parametrize("text, where", [
    ("- a\n", "params.yaml: the top level is not a mapping"),
    ("detector: [a]\n", "params.yaml:detector: not a mapping"),
    ("detector:\n  sets: [a]\n", "params.yaml:detector.sets: not a mapping"),
    ("detector:\n  sets:\n    a: m\n", "params.yaml:detector.sets.a: not a set name with a list"),
    ("detector: [\n", "params.yaml: not valid YAML"),
])
def test_detector_sets_refuses_what_is_not_a_mapping_of_lists(text, where):
    with pytest.raises(InputError, match=where.replace("[", "\\[")):
        detector_sets(text, where="params.yaml")


def test_detector_sets_reads_empty_and_missing_as_no_set():
    assert detector_sets("", where="p") == {} and detector_sets("detector:\n", where="p") == {}
    assert detector_sets("detector:\n  sets:\n    a:\n    b: [m]\n", where="p") == {"a": [], "b": ["m"]}


def test_choose_set():
    assert choose_set({"pets": []}, None, where="p") == "pets"
    assert choose_set({"a": [], "b": []}, "b", where="p") == "b"
    with pytest.raises(InputError, match="(?s)several detection sets.*--set.*a, b"):
        choose_set({"a": [], "b": []}, None, where="p")
    with pytest.raises(InputError, match="(?s)no detection set to add the model to.*candor add set"):
        choose_set({}, None, where="p")
    with pytest.raises(InputError, match="(?s)no detection set .c.*one of: a, b.*candor add set c"):
        choose_set({"a": [], "b": []}, "c", where="p")


@pytest.mark.parametrize("name", ["..", ".hidden", "a/b", "a b", "-x", ""])
def test_a_name_is_one_path_segment(name):
    with pytest.raises(InputError, match="not a valid set name"):
        check_name(name, what="set", where="NAME")
