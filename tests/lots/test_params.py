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


def test_a_source_may_be_a_list_of_distinct_paths():
    from pydantic import ValidationError
    p = IdentifyParams(candidates=["c", "d"], sources={"c": ["../webapp/src/prompts.ts", "../webapp/src/services"],
                                                       "d": "p.txt"})
    assert p.source_paths("c") == ["../webapp/src/prompts.ts", "../webapp/src/services"]
    assert p.source_paths("d") == ["p.txt"] and p.source_paths("e") is None
    for bad, needle in [([], "an empty list"), (["a.ts", "a.ts"], r"path\(s\) listed more than once: a.ts"),
                        (["a.ts", "/srv/b.ts"], "absolute path")]:
        with pytest.raises(ValidationError, match=f"sources.c: {needle}"):
            IdentifyParams(candidates=["c"], sources={"c": bad})


def test_gallery_is_one_setting_or_one_per_candidate():
    from pydantic import ValidationError
    assert IdentifyParams(candidates=["a", "b"], gallery="first").gallery_of("b") == "first"
    per = IdentifyParams(candidates=["a", "b"], gallery={"a": "first"})
    assert (per.gallery_of("a"), per.gallery_of("b")) == ("first", "all")   # unlisted: all
    with pytest.raises(ValidationError, match="gallery: 'c' is not a candidate"):
        IdentifyParams(candidates=["a"], gallery={"c": "first"})
    with pytest.raises(ValidationError, match="gallery"):
        IdentifyParams(candidates=["a"], gallery={"a": "some"})


def test_record_env_names_candidates_and_never_a_secret():
    from pydantic import ValidationError
    route = {"http": "http://127.0.0.1:9/a", "headers": {"Authorization": "APP_TOKEN"}}
    child = {"exec": ["node", "a.mjs"], "env": ["ANALYSIS_MODE"], "secrets": ["APP_KEY"]}
    ok = IdentifyParams(candidates=["a", "b"], providers={"b": child}, sources={"a": "a", "b": "b"},
                        record_env={"a": ["ANALYSIS_MODE"], "b": ["ANALYSIS_MODE"]})
    assert ok.record_env["b"] == ["ANALYSIS_MODE"]
    for over, needle in [({"record_env": {"z": ["X"]}}, "record_env.z: not a candidate"),
                         ({"record_env": {"a": ["OPENAI_API_KEY"]}}, "OPENAI_API_KEY is a declared secret"),
                         ({"providers": {"a": route}, "record_env": {"a": ["APP_TOKEN"]}}, "APP_TOKEN is a declared"),
                         ({"providers": {"b": child}, "record_env": {"b": ["APP_KEY"]}}, "APP_KEY is a declared"),
                         ({"providers": {"b": child}, "record_env": {"b": ["OTHER"]}}, "OTHER not in providers.b.env"),
                         ({"record_env": {"a": ["X", "X"]}}, "listed more than once: X"),
                         ({"record_env": {"a": ["not-a-name"]}}, "record_env.a.0")]:
        with pytest.raises(ValidationError, match=needle):
            IdentifyParams(**{"candidates": ["a", "b"], "sources": {"a": "a", "b": "b"}, **over})
