"""Reading YAML (``params.yaml``, model cards): one checked loader, then one section per stage,
validated by the stage's own model.

:func:`load_yaml` reads the file as checked text (:func:`candor_eval.common.tables.read_text`: UTF-8,
a BOM dropped) and ``safe_load``s it with three refusals, each an InputError naming the file
and line: a key repeated in one mapping (DVC's own parser refuses it too; PyYAML would keep the
last value), an anchor or alias (``&a`` / ``*a``: nothing here needs them, and nested aliases
can expand to gigabytes), and a non-finite number anywhere (``.nan``, ``.inf``; named by its
dotted key path: ``not (x < lo)`` is true for NaN, so it would pass range checks). Every number a
section holds is strict (:data:`Number`, :data:`Integer`, :data:`Decimal_`; :func:`is_number`): YAML's
``true`` is not 1 and the string ``"0.5"`` is not 0.5 (``nms_iou: true`` would otherwise turn NMS off
without a word). A section is
validated with a pydantic model
(``extra='forbid'``, so a misspelled key is an error, not a silent default; the error suggests
the nearest valid key; ``defer_build=True``, so a process builds the validators of the sections
and cards it reads, on first use, not of every model it imports: the same messages, less start-up);
the error names the file and the dotted key path. candor reads only the
sections of :data:`SECTIONS`: a params file is the user's too (their ``train:`` or ``export:``
sections stay theirs and are ignored), except a top-level key that is a near-miss of one of
candor's sections (``threshold:`` for ``thresholds:``), which is an error:
ignoring it would silently serve the defaults (:func:`misspelled_section`).

The text is scanned and parsed by libyaml (``yaml.CSafeLoader``'s parser, ~10x faster than PyYAML's own:
``params.yaml`` is read by every stage) when PyYAML has it; its events are composed by the same Python
composer and constructor as the pure-Python loader's, so an anchor or an alias is refused wherever it
stands (before any alias is followed) and keys are checked alike. On any error it parses again with the
pure-Python loader, whose refusals and messages (line numbers, wording) are the ones named above: a file
either loads to the same content on both, or fails with the same message as without libyaml.
"""
from __future__ import annotations

import copy
import difflib
import functools
import math
import re
from collections.abc import Hashable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import yaml
from pydantic import BaseModel, BeforeValidator, Field, StrictFloat, StrictInt, ValidationError

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import read_text
from candor_eval.common.urls import redact_urls

M = TypeVar("M", bound=BaseModel)
LIBYAML: bool = bool(getattr(yaml, "__with_libyaml__", False))



def is_number(value: object) -> bool:
    """Whether ``value`` is a number as YAML writes one: an int, a float or a Decimal, never a bool
    (``True`` is an int in Python) nor a string (``"0.5"``).

    >>> [is_number(v) for v in (1, 0.5, Decimal("2"), True, "0.5", None)]
    [True, True, True, False, False, False]
    """
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _a_number(value: object) -> object:
    if not is_number(value):
        raise ValueError(f"must be a number, not {type(value).__name__} (true/false and quoted text are not numbers)")
    return value


# The numeric field types of every params model (a section, a model card): strict, so a bool or a
# string is an error naming the key. ``Number`` takes ints too (``1`` is 1.0); ``Integer`` takes no
# float (``3.0`` is refused); ``ExactDecimal`` is a Decimal from an int, a float or a Decimal.
Number = Annotated[StrictFloat, BeforeValidator(_a_number)]
Integer = Annotated[StrictInt, BeforeValidator(_a_number)]
ExactDecimal = Annotated[Decimal, BeforeValidator(_a_number)]

# A probability strictly between 0 and 1 (a confidence level, an alpha, a power, a discordance):
# the one check, for params (a pydantic field type) and for argv (:func:`check_probability`).
Probability = Annotated[Number, Field(gt=0.0, lt=1.0, allow_inf_nan=False)]

DEFAULT_PARAMS = Path("params.yaml")

# Every top-level section of params.yaml (tests/test_params.py: each has its model or reader).
SECTIONS = ("identify", "lots", "comps", "stats", "gate", "detector", "reinference", "thresholds",
            "thresholds_by_model", "match", "latency")


class _Refused(yaml.YAMLError):
    """A YAML construct the checked loader refuses (see the module docstring)."""

    def __init__(self, what: str, mark: yaml.Mark | None):
        super().__init__(what)
        self.what, self.line = what, None if mark is None else mark.line + 1


class _UniqueKeys(yaml.constructor.SafeConstructor):
    """The safe constructor refusing a repeated key or a non-scalar key in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):
                raise _Refused("a mapping key must be a scalar", key_node.start_mark)
            if key in seen:
                raise _Refused(f"key {key!r} repeated in one mapping", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _NoAnchors(yaml.composer.Composer):
    """The composer refusing an anchor or an alias event (whichever parser made it) before composing it."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = cast(yaml.parser.Parser, self).peek_event()  # the parser's: a sibling base of each loader
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _Refused("anchors and aliases (&name, *name) are not allowed", event.start_mark)
        return super().compose_node(parent, index)


class _CheckedLoader(_UniqueKeys, _NoAnchors, yaml.SafeLoader):
    """``SafeLoader`` refusing repeated keys, anchors and aliases (non-finite numbers: :func:`non_finite`)."""


if LIBYAML:
    class _CheckedCLoader(_UniqueKeys, _NoAnchors, yaml.CSafeLoader):
        """libyaml's scanner and parser under :class:`_CheckedLoader`'s composer and constructor (the Python
        composer comes first in the MRO, so libyaml never composes, nor follows an alias, itself)."""

        def __init__(self, stream: str):
            yaml.CSafeLoader.__init__(self, stream)
            yaml.composer.Composer.__init__(self)


# YAML 1.2 floats PyYAML's 1.1 resolver reads as text (``1e3``, ``2E-4``: an exponent without a dot);
# DVC reads params as YAML 1.2, so they are numbers here too (a strict number field would refuse text).
_YAML12_FLOAT = re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")
_CheckedLoader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_FLOAT, list("-+0123456789"))
if LIBYAML:
    _CheckedCLoader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_FLOAT, list("-+0123456789"))



def non_finite(doc: Any) -> tuple[str, float] | None:
    """The dotted key path and value of the first non-finite number in ``doc`` (walked without
    recursion, list items by index), or None."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        path, x = stack.pop()
        if isinstance(x, float) and not math.isfinite(x):
            return path, x
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(items)))
    return None


@functools.lru_cache(maxsize=8)
def _parsed(text: str) -> Any:
    """``text`` parsed by the checked loader (on libyaml where it can: the module docstring); the same
    text (``params.yaml``, read by each section of a stage) is parsed once per process."""
    if LIBYAML:
        try:
            return yaml.load(text, Loader=_CheckedCLoader)  # SafeConstructor: as safe as yaml.safe_load
        except Exception:  # noqa: BLE001 - any failure: the pure loader below raises its own, named error
            pass
    return yaml.load(text, Loader=_CheckedLoader)  # a SafeLoader subclass: as safe as yaml.safe_load


def load_yaml(path: str | Path) -> Any:
    """The YAML file's content (see the module docstring); any problem is an InputError naming the file.
    Each call returns its own copy (callers may change it)."""
    p = Path(path)
    text = read_text(p, expected="a UTF-8 YAML file")
    try:
        doc = copy.deepcopy(_parsed(text))
    except _Refused as err:
        raise fail(f"{p}:line {err.line}", err.what) from None
    except yaml.YAMLError as err:
        raise fail(str(p), f"not valid YAML: {err}") from None
    except RecursionError:
        raise fail(str(p), "not valid YAML: nested too deeply") from None
    if (bad := non_finite(doc)) is not None:
        raise fail(f"{p}:{bad[0]}", "non-finite number", expected="a finite number", got=bad[1])
    return doc


def nearest(name: object, valid: Iterable[object]) -> str | None:
    """The hint for a misspelled ``name``: the closest of ``valid``, if any is close."""
    close = difflib.get_close_matches(str(name), [str(v) for v in valid], n=1)
    return f"did you mean {close[0]!r}?" if close else None


def _fields_at(model: type[BaseModel] | None, loc: tuple) -> list[str]:
    """The field names of the (nested) model at ``loc`` (empty when not a model)."""
    for part in loc:
        field = model.model_fields.get(part) if model is not None else None
        ann = field.annotation if field is not None else None
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    return list(model.model_fields) if model is not None else []


def validation_problems(err: ValidationError, where: str, model: type[BaseModel] | None = None) -> list[Problem]:
    """Turn a pydantic error into Problems naming ``where`` and the field path (an unknown key of
    ``model`` suggests the nearest valid one)."""
    out = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"])
        field = f"{where}.{loc}" if loc else where
        got = e.get("input")
        what = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden" and e["loc"]:
            hint = nearest(e["loc"][-1], _fields_at(model, e["loc"][:-1]))
            what += f" ({hint})" if hint else ""
        # a value quoted back may be a URL the user wrote with credentials (a card's misspelled source)
        shown = None if isinstance(got, dict) else redact_urls(repr(got))[:200]
        out.append(Problem(field, redact_urls(what), got=shown))
    return out


def validate(model: type[M], data: Any, *, where: str) -> M:
    """Validate ``data`` against ``model``; errors become one InputError naming ``where``."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise InputError(validation_problems(err, where, model)) from None


def misspelled_section(key: object) -> str | None:
    """The candor section a top-level ``key`` misspells, or None when it is one of candor's or the user's own.

    A misspelling is a key of at least 3 characters with a similarity of at least 0.8
    (:class:`difflib.SequenceMatcher` ratio) to a section of :data:`SECTIONS` that ``key`` does not
    end with after a prefix (``plots`` is the user's word, not ``lots``; ``gates`` is ``gate``).

    >>> misspelled_section("threshold"), misspelled_section("train"), misspelled_section("stats")
    ('thresholds', None, None)
    >>> [misspelled_section(k) for k in ("plots", "export", "stat", "gates")]
    [None, None, 'stats', 'gate']
    """
    if key in SECTIONS or len(str(key)) < 3:
        return None
    others = [s for s in SECTIONS if not (str(key).endswith(s) and not str(key).startswith(s))]
    close = difflib.get_close_matches(str(key), others, n=1, cutoff=0.8)
    return close[0] if close else None


def read_params(path: str | Path = DEFAULT_PARAMS) -> dict[str, Any]:
    """candor's sections of the params file (other top-level sections are the user's: dropped; a
    near-miss of a candor section is an InputError)."""
    doc = load_yaml(path)
    doc = {} if doc is None else doc
    if not isinstance(doc, dict):
        raise fail(str(path), "top level must be a mapping", got=type(doc).__name__)
    problems = [Problem(f"{path}:{key}", f"unknown section (did you mean {near!r}?)",
                        expected=", ".join(SECTIONS) + " (other sections are yours: ignored)")
                for key in doc if (near := misspelled_section(key))]
    if problems:
        raise InputError(problems)
    return {k: v for k, v in doc.items() if k in SECTIONS}


def section(model: type[M], name: str, *, path: str | Path = DEFAULT_PARAMS) -> M:
    """Load and validate section ``name`` of the params file (missing section: model defaults)."""
    return validate(model, read_params(path).get(name, {}), where=f"{path}:{name}")


def check_probability(value: float, *, where: str) -> float:
    """``value`` when it is a :data:`Probability`, else an InputError naming ``where``.

    >>> check_probability(0.05, where="--alpha")
    0.05
    >>> check_probability(1.0, where="--alpha")
    Traceback (most recent call last):
    ...
    candor_eval.common.errors.InputError: --alpha: must be strictly between 0 and 1 (got 1.0)
    """
    if not 0.0 < value < 1.0:
        raise fail(where, "must be strictly between 0 and 1", got=value)
    return value
