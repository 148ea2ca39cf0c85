"""params.yaml and the pydantic models: one home for every default.

Every section of the committed ``params.yaml`` belongs to exactly one model (``thresholds`` and
``thresholds_by_model`` map class names, checked by
:meth:`candor_eval.detection.config.ThresholdParams.class_thresholds`);
it validates, spells out every key, and agrees with the model's default wherever the model
has one. The read-only views other stages take of a section default to the owner's values.
"""
from __future__ import annotations

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from candor_eval.common.errors import InputError
from candor_eval.common.params import SECTIONS as KNOWN_SECTIONS
from candor_eval.common.params import load_yaml, validate
from candor_eval.detection.config import DetectorParams, MatchParams, ReinferenceParams, ThresholdsByModel
from candor_eval.detection.latency import LatencyParams
from candor_eval.lots.params import CompsParams, IdentifyParams, LotsParams
from candor_eval.review.gate_views import MatchView, StatsView
from candor_eval.review.params import GateParams, StatsParams
from tests.conftest import ROOT

SECTIONS: dict[str, type[BaseModel]] = {
    "identify": IdentifyParams, "lots": LotsParams, "comps": CompsParams, "stats": StatsParams, "gate": GateParams,
    "detector": DetectorParams, "reinference": ReinferenceParams, "match": MatchParams, "latency": LatencyParams,
}
PARAMS = load_yaml(ROOT / "params.yaml")


def test_every_section_has_its_model():
    assert set(PARAMS) == set(SECTIONS) | {"thresholds", "thresholds_by_model"}


# Keys that name the project's own things (candidates, sets, models, classes): their default names
# nothing (empty, or None: the one choice the project leaves, resolved by the stages), so the demo's
# committed names differ from it by design.
NAMES = {("identify", "candidates"), ("identify", "providers"), ("identify", "sources"), ("detector", "sets"),
         ("match", "critical"), ("gate", "set"), ("gate", "reference"), ("gate", "candidate"),
         ("stats", "reference")}


def names_nothing(default: object) -> bool:
    """An empty collection, ``None``, or a model all of whose values name nothing."""
    if isinstance(default, BaseModel):
        return all(names_nothing(v) for v in default.model_dump().values())
    return default in ([], {}, None)


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_committed_section_validates_and_agrees_with_the_defaults(name):
    model = SECTIONS[name]
    committed = validate(model, PARAMS[name], where=f"params.yaml:{name}")
    assert set(PARAMS[name]) == set(model.model_fields), f"params.yaml:{name} must spell out every key"
    for field, info in model.model_fields.items():
        if info.default is PydanticUndefined and info.default_factory is None:
            continue                                   # required: params.yaml is its only home
        default = info.get_default(call_default_factory=True)
        if (name, field) in NAMES:
            assert names_nothing(default), f"{name}.{field}: a default never names the demo's things"
            continue
        assert getattr(committed, field) == default, f"params.yaml:{name}.{field} disagrees with the code default"


def test_the_committed_demo_names_what_the_defaults_leave_open():
    """The demo's params name its reference, gate set and models explicitly, so its outputs do not
    depend on how the stages resolve an unnamed one."""
    assert PARAMS["stats"]["reference"]["lots"] and PARAMS["identify"]["candidates"]
    assert all(PARAMS["gate"][k] for k in ("set", "reference", "candidate"))


@pytest.mark.parametrize("view, owner", [(StatsView, StatsParams), (MatchView, MatchParams)])
def test_views_default_to_their_owners(view, owner):
    for field in view.model_fields:
        assert getattr(view(), field) == getattr(owner(), field), f"{view.__name__}.{field}"


def test_thresholds_by_model_validates_and_agrees_with_the_default():
    committed = validate(ThresholdsByModel, PARAMS["thresholds_by_model"], where="params.yaml:thresholds_by_model")
    assert committed == ThresholdsByModel()


@pytest.mark.parametrize("override, changed", [
    ("thresholds.deer=0.25", "  deer: 0.25"),
    ("match.iou=0.45", "  iou: 0.45 "),
    ("detector.floor=0.1", "  floor: 0.1 "),
    ("lots.min_number_digits=4", "  min_number_digits: 4"),
])
def test_params_yaml_is_in_the_form_dvc_exp_run_writes(tmp_path, override, changed):
    """`dvc exp run -S` rewrites params.yaml through DVC's YAML round trip (every list re-emitted in
    block style, a comment after a section's last list dropped); the committed file is already in
    the form that round trip keeps, so a one-value change is a one-line diff."""
    import difflib

    from dvc.utils.hydra import apply_overrides

    copy = tmp_path / "params.yaml"
    copy.write_text((ROOT / "params.yaml").read_text())
    apply_overrides(copy, [override])
    diff = [line for line in difflib.unified_diff((ROOT / "params.yaml").read_text().splitlines(),
                                                  copy.read_text().splitlines(), n=0, lineterm="")
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert len(diff) == 2 and diff[0][0] == "-" and diff[1].startswith("+" + changed), diff


def test_every_known_section_is_in_params_yaml():
    assert set(KNOWN_SECTIONS) == set(PARAMS)


def numeric_leaves(doc: object, path: tuple = ()) -> list[tuple]:
    """The key path (list items by index) of every number in ``doc``, bools excluded."""
    if isinstance(doc, dict):
        return [leaf for k, v in doc.items() for leaf in numeric_leaves(v, (*path, k))]
    if isinstance(doc, list):
        return [leaf for i, v in enumerate(doc) for leaf in numeric_leaves(v, (*path, i))]
    return [path] if isinstance(doc, (int, float)) and not isinstance(doc, bool) else []


NUMBERS = [(name, path) for name in sorted(SECTIONS) for path in numeric_leaves(PARAMS[name])]


def test_the_committed_sections_hold_numbers_to_check():
    assert {("detector", ("nms_iou",)), ("match", ("min_support",)), ("comps", ("shipping",)),
            ("match", ("bands", 0)), ("identify", ("runs",))} <= set(NUMBERS)


@pytest.mark.parametrize("name, path", NUMBERS, ids=lambda x: ".".join(map(str, x)) if isinstance(x, tuple) else x)
@pytest.mark.parametrize("bad", [True, False, "text"])
def test_every_number_of_every_section_is_strict(name, path, bad):
    """``true`` is not 1 and a quoted number is not a number: each is an error naming the key."""
    import copy

    doc = copy.deepcopy(PARAMS[name])
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = str(node[path[-1]]) if bad == "text" else bad
    with pytest.raises(InputError) as err:
        validate(SECTIONS[name], doc, where=f"params.yaml:{name}")
    assert err.value.problems[0].where.startswith(f"params.yaml:{name}.{path[0]}")
