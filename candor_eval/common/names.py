"""Names: what a candidate, a detection set, a model or a report label may be called.

A name becomes a path (``build/answers/<candidate>.jsonl``, ``data/<set>/``, ``models/<model>.yaml``,
``build/live/<label>.jsonl``) and a word of the shell commands DVC runs (``dvc.yaml``:
``candor identify --candidate ${key}``), so it must be one harmless path segment.

**The rule** (:data:`NAME`, :data:`RULE`): a letter or a digit, then letters, digits, ``_``, ``-`` and ``.``
(ASCII only). So a name is never empty, never ``.`` or ``..`` (it starts with a letter or a digit), never
holds ``/`` or ``\\`` (it stays in its folder), and never holds a character the shell reads (no space,
``;``, ``$``, quote, backtick, ``*``, ``|``, ``&``, ``(``, ``<``): ``prompt-a``, ``ocr-baseline``,
``demo-v1``, ``yolov8n-2024.1`` are names; ``x;touch${IFS}PWNED;#``, ``gpt-x/newprompt``, ``../escape``,
``my model`` are not.

It is checked where params and arguments are read, and a name that breaks it is an input error naming the
key or flag and this rule (:func:`check_name`; :data:`Name`, the same check in a pydantic model).

    >>> name_problem("prompt-a") is None, name_problem("../escape")
    (True, "'../escape' is not a name: one path segment of ASCII letters, digits, '_', '-' and '.', starting with \
a letter or a digit")
"""
from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from candor_eval.common.errors import fail

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*", re.ASCII)
RULE = "one path segment of ASCII letters, digits, '_', '-' and '.', starting with a letter or a digit"


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a name (module docstring), or None."""
    if isinstance(name, str) and NAME.fullmatch(name):
        return None
    return f"{name!r} is not a name: {RULE}"


def check_name(name: str, *, what: str, where: str) -> str:
    """``name`` when it follows the rule (module docstring), else an InputError naming ``where`` (the key or
    flag that gave it) and the rule; ``what`` says what it names (``candidate``, ``model``, ``label``).

    >>> check_name("demo-v1", what="model", where="NAME")
    'demo-v1'
    """
    if name_problem(name) is not None:
        raise fail(where, f"not a valid {what} name", expected=RULE, got=name)
    return name


def _checked(name: str) -> str:
    if (why := name_problem(name)) is not None:
        raise ValueError(why)
    return name


Name = Annotated[str, AfterValidator(_checked)]
"""A ``str`` field (or dict key) of a pydantic model that must follow the rule; the error quotes the rule."""
