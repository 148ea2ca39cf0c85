"""Tests for candor_eval/detection/scoring/class_names.py: data class names that can name plot files and
appear in the plots page and the report as they are."""
from __future__ import annotations

import pytest

from candor_eval.detection.scoring.class_names import class_name_problems, safe_name


@pytest.mark.parametrize("classes, what", [
    (["deer", "red deer", "berry_bush", "t-shirt", "élan"], None),
    (["deer", "all"], "reserved class name"),
    (["ALL"], "reserved class name"),
    (["background", "deer"], "reserved class name"),
    (["a b", "a_b"], "two class names give one plot file name 'a_b'"),
    (["Deer", "deer"], "two class names give one plot file name 'deer'"),
    (["x/y", "x?y"], "two class names give one plot file name 'x_y'"),
    (["</script><script>alert(1)</script>"], "a character that is markup, a quote or a control character"),
    (["<img src=x onerror=alert(1)>"], "a character that is markup, a quote or a control character"),
    (["deer\tbuck"], "a character that is markup, a quote or a control character"),
    (["o'hare"], "a character that is markup, a quote or a control character"),
])
def test_class_names_that_cannot_name_a_file_or_be_shown_are_named(classes, what):
    problems = class_name_problems(classes, where="data/d/classes.txt")
    assert [p.what for p in problems][:1] == ([] if what is None else [what])
    assert all(p.where == "data/d/classes.txt" for p in problems)


def test_accepted_names_never_share_a_file():
    """Property over a grid: whenever no problem is reported, the file names are distinct."""
    names = ["a", "A", "a b", "a_b", "a.b", "a-b", "ab", "a  b", "a__b"]
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            if not class_name_problems([x, y], where="c"):
                assert safe_name(x).lower() != safe_name(y).lower(), (x, y)
