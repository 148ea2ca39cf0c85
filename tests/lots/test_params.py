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
