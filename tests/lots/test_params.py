"""The lots track's params models (the agreement of every model with params.yaml: tests/test_params.py)."""
from __future__ import annotations

import pytest

from candor_eval.lots.params import IdentifyParams


def test_counts_is_not_a_candidate_name():
    with pytest.raises(ValueError, match="reserved"):
        IdentifyParams(candidates=["prompt-a", "counts"])


def test_a_source_may_leave_the_project_by_leading_dotdots_only():
    from pydantic import ValidationError
    assert IdentifyParams(candidates=["c"], sources={"c": "../shopapp"}).sources == {"c": "../shopapp"}
    for bad, needle in [("a/../b", "'..' after a folder name"), ("..", "only '..' components"),
                        ("/srv/app", "absolute path")]:
        with pytest.raises(ValidationError, match=f"sources.c: {needle}"):
            IdentifyParams(candidates=["c"], sources={"c": bad})


@pytest.mark.parametrize("bad", ["x;touch${IFS}PWNED;#", "$(touch PWNED)", "gpt-x/newprompt", "../../escape", "a b"])
def test_a_candidate_is_a_name_wherever_it_is_listed(bad):
    """candidates, and the keys of providers and sources, become file names and words of dvc.yaml's commands."""
    from pydantic import ValidationError
    with pytest.raises(ValidationError, match=r"candidates\.1\n.*is not a name: one path segment"):
        IdentifyParams(candidates=["prompt-a", bad])
    with pytest.raises(ValidationError, match=r"providers\n.*key .* is not a name"):
        IdentifyParams(candidates=["prompt-a"], providers={bad: "local-ocr"})
    with pytest.raises(ValidationError, match=r"sources\n.*key .* is not a name"):
        IdentifyParams(candidates=["prompt-a"], sources={bad: "data/p.txt"})


def test_the_demo_candidates_are_names():
    p = IdentifyParams(candidates=["prompt-a", "prompt-b", "ocr-baseline"], providers={"ocr-baseline": "local-ocr"},
                       sources={"prompt-a": "a.txt", "prompt-b": "b.txt", "ocr-baseline": "o.txt"})
    assert p.candidates == ["prompt-a", "prompt-b", "ocr-baseline"]


def test_gallery_is_one_setting_or_one_per_candidate():
    from pydantic import ValidationError
    assert IdentifyParams(candidates=["a", "b"], gallery="first").gallery_of("b") == "first"
    per = IdentifyParams(candidates=["a", "b"], gallery={"a": "first"})
    assert (per.gallery_of("a"), per.gallery_of("b")) == ("first", "all")   # unlisted: all
    with pytest.raises(ValidationError, match="gallery: 'c' is not a candidate"):
        IdentifyParams(candidates=["a"], gallery={"c": "first"})
    with pytest.raises(ValidationError, match="gallery"):
        IdentifyParams(candidates=["a"], gallery={"a": "some"})
