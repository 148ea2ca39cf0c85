"""The lots track's params models: the committed params.yaml agrees with their defaults, field by field."""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from candor.common.params import load_yaml, validate
from candor.lots.params import CompsParams, IdentifyParams, LotsParams
from tests.conftest import ROOT

SECTIONS = {"identify": IdentifyParams, "lots": LotsParams, "comps": CompsParams}


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_committed_params_equal_the_model_defaults(name):
    model: type[BaseModel] = SECTIONS[name]
    committed = validate(model, load_yaml(ROOT / "params.yaml")[name], where=f"params.yaml:{name}")
    default = model()
    assert set(committed.model_fields_set) == set(model.model_fields)   # params.yaml spells out every key
    for field in model.model_fields:
        assert getattr(committed, field) == getattr(default, field), f"{name}.{field}"


def test_counts_is_not_a_candidate_name():
    with pytest.raises(ValueError, match="reserved"):
        IdentifyParams(candidates=["prompt-a", "counts"])
