"""Reading ``params.yaml``: one section per stage, validated by the stage's own model.

YAML is only ever ``safe_load``ed. A section is validated with a pydantic model
(``extra='forbid'``, so a misspelled key is an error, not a silent default); the
error names the file and the dotted key path.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from candor.common.errors import InputError, Problem, fail

M = TypeVar("M", bound=BaseModel)

DEFAULT_PARAMS = Path("params.yaml")


def load_yaml(path: str | Path) -> Any:
    """``yaml.safe_load`` a file; a missing file or a YAML syntax error is an InputError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail(str(p), "file not found") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise fail(str(p), f"not valid YAML: {err}") from None


def validation_problems(err: ValidationError, where: str) -> list[Problem]:
    """Turn a pydantic error into Problems naming ``where`` and the field path."""
    out = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"])
        field = f"{where}.{loc}" if loc else where
        got = e.get("input")
        out.append(Problem(field, e["msg"], got=None if isinstance(got, dict) else repr(got)))
    return out


def validate(model: type[M], data: Any, *, where: str) -> M:
    """Validate ``data`` against ``model``; errors become one InputError naming ``where``."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise InputError(validation_problems(err, where)) from None


def section(model: type[M], name: str, *, path: str | Path = DEFAULT_PARAMS) -> M:
    """Load and validate section ``name`` of the params file (missing section: model defaults)."""
    doc = load_yaml(path) or {}
    if not isinstance(doc, dict):
        raise fail(str(path), "top level must be a mapping", got=type(doc).__name__)
    return validate(model, doc.get(name, {}), where=f"{path}:{name}")
