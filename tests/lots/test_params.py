"""The lots track's params models (the agreement of every model with params.yaml: tests/test_params.py)."""
from __future__ import annotations

import pytest

from candor_eval.lots.params import IdentifyParams


def test_counts_is_not_a_candidate_name():
    with pytest.raises(ValueError, match="reserved"):
        IdentifyParams(candidates=["prompt-a", "counts"])
