"""Recorded model answers: one JSONL file per candidate, and their normalised form.

A **recording line** (one finished run of one lot or case)::

    {"case": "L001", "run": 1, "raw": "<the model's text>", "parsed": {...} | null,
     "parse_error": null | "<why raw is not a JSON object>", "error": null | "<provider error>",
     "provider": "api.example.com", "model": "<model name>", "prompt_sha256": "<hex>",
     "gallery": "first" | "all", "endpoint": "<url, redacted>", "version": "<served version>",
     "environment": {"ANALYSIS_MODE": "fast" | null}}

``prompt_sha256`` is the SHA-256 of what produced the answer: the prompt file, or the
production code of a ``python`` or ``http`` provider (:mod:`candor_eval.lots.source_identity`).
``endpoint`` (live remote providers: the URL called, its secrets replaced by ``***``) and
``version`` (an ``http`` provider: its declared version header) are optional and left out
of the line when absent, so recordings made before they existed keep their bytes; so is
``sources`` (production code of several paths: each listed path -> its own SHA-256, so a stale
recording names the paths that changed), and so is ``environment``, the values of the variables
params ``identify.record_env`` names for the candidate (null: unset), the production code's mode
switches at the time of the call.
``run`` is a JSON integer (``true`` is not run 1).

Exactly one of two shapes: a provider **error** (``error`` set; ``raw``,
``parsed`` and ``parse_error`` null) or an **answer** (``raw`` set and exactly one
of ``parsed``/``parse_error``, which must agree with :func:`parse_answer` of
``raw``). ``(case, run)`` pairs are unique. Lines are validated with pydantic;
errors name the file, the line number and the field.

The **answer object** is the analysis ``data`` of the prompt (docs/lots.md): ``{"type": "item", "item":
{itemManufacturer, itemModel, itemType, categoryFunctional, categorySpecific,
quantity, itemAttributes: [{name, value}]}, "imageLabel", "imageNotes"}`` or
``{"type": "container", "container": {containerType, containerItems: [item...]}}``.

The identify stage turns each line into a normalised answer (:mod:`candor_eval.lots.answers`).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from candor_eval.common.errors import InputError, Problem
from candor_eval.common.params import validation_problems
from candor_eval.common.tables import SURROGATE_ESCAPE, parse_json, read_text, surrogate_free
from candor_eval.common.unique import repeat_of

Gallery = Literal["first", "all"]     # every photo of a lot, or its first only


class CaseRun(Protocol):
    """A validated line keyed by ``(case, run)``: :class:`RecordLine`, :class:`candor_eval.lots.answers.Answer`."""

    @property
    def case(self) -> str: ...
    @property
    def run(self) -> int: ...
    @classmethod
    def model_validate(cls, obj: Any) -> Self: ...


R = TypeVar("R", bound=CaseRun)

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def parse_answer(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """``(object, None)`` when ``raw`` is a JSON object (optionally in a Markdown code
    fence), else ``(None, reason)``.

    >>> parse_answer('```json\\n{"a": 1}\\n```')
    ({'a': 1}, None)
    """
    text = raw.strip()
    if (m := _FENCE.match(text)) is not None:
        text = m.group(1).strip()
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"not JSON: {err.msg} at line {err.lineno} column {err.colno}"
    except RecursionError:
        return None, "not JSON: nested too deeply"
    if SURROGATE_ESCAPE.search(text) and not surrogate_free(obj):   # it could not be written back as UTF-8
        return None, "not JSON: a lone surrogate escape (\\ud800-\\udfff)"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (got {type(obj).__name__})"
    return obj, None


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (which UTF-8 cannot encode) replaced by U+FFFD.

    A live answer can hold one (a JSON ``"\\ud800"`` escape in a provider's body, a string
    returned by a production callable); it is kept, visibly replaced, rather than failing the write.

    >>> without_surrogates("a" + chr(0xD800) + "b") == "a\\ufffdb"
    True
    """
    return _SURROGATE.sub("\ufffd", text)


class RecordLine(BaseModel):
    """One validated recording line (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str = Field(pattern=r"^[A-Za-z0-9._-]+$")
    run: int = Field(ge=1, strict=True)
    raw: str | None = None
    parsed: dict[str, Any] | None = None
    parse_error: str | None = None
    error: str | None = None
    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    prompt_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    gallery: Gallery
    endpoint: str | None = None
    version: str | None = None
    sources: dict[str, Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]] | None = None
    environment: dict[str, str | None] | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> RecordLine:
        if self.error is not None:
            if self.raw is not None or self.parsed is not None or self.parse_error is not None:
                raise ValueError("an error line has raw, parsed and parse_error null")
            return self
        if self.raw is None:
            raise ValueError("a line has either an error or the raw text")
        parsed, why = parse_answer(self.raw)
        if parsed != self.parsed or why != self.parse_error:
            raise ValueError("parsed/parse_error do not agree with the raw text "
                             f"(parsing raw gives parse_error={why!r})")
        return self

    def to_json(self) -> str:
        doc = self.model_dump()
        for optional in ("endpoint", "version", "sources", "environment"):
            if doc[optional] is None:
                del doc[optional]
        return json.dumps(doc, ensure_ascii=False, sort_keys=False)


def parse_case_runs(lines: list[str], model: type[R], *, file: str) -> list[R]:
    """Validate JSON lines, one ``model`` (with ``case`` and ``run``) per line; a (case, run) once.

    Blank lines are skipped. Every problem is collected and raised as one InputError
    naming the file, the line (1-based) and the field.
    """
    out: list[R] = []
    problems: list[Problem] = []
    seen: dict[tuple[str, int], int] = {}
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file}:line {lineno}"
        try:
            rec = model.model_validate(parse_json(line, where=where, expected="one JSON object per line"))
        except InputError as err:
            problems.extend(err.problems)
            continue
        except ValidationError as err:
            problems.extend(validation_problems(err, where))
            continue
        key = (rec.case, rec.run)
        if (repeat := repeat_of(seen, key, where=f"{where}.run", noun="(case, run)", unit="line")) is not None:
            problems.append(repeat)
            continue
        seen[key] = lineno
        out.append(rec)
    if problems:
        raise InputError(problems)
    return out


def parse_recording(text: str, *, file: str, allow_partial_tail: bool = False) -> list[RecordLine]:
    """Validate recording JSONL ``text`` (see :func:`parse_case_runs`).

    With ``allow_partial_tail`` a last line without its newline (a write cut off
    by an interruption) is dropped instead of being an error.
    """
    lines = text.split("\n")
    if allow_partial_tail and lines and lines[-1].strip():
        lines = lines[:-1]
    return parse_case_runs(lines, RecordLine, file=file)


def load_recording(path: str | Path, *, allow_partial_tail: bool = False,
                   rerecord: str | None = None) -> list[RecordLine]:
    """Read and validate a recording file; a missing one is an InputError whose hint gives ``rerecord``, the
    command that records it (else ``identify.mode: live``)."""
    p = Path(path)
    if not p.exists():
        how = f"with `{rerecord}`" if rerecord else "(identify.mode: live)"
        raise InputError(Problem(p.as_posix(), "recording not found"),
                         hint=f"record it live {how}, or pick a candidate that has one")
    text = read_text(p, expected="a JSONL recording")
    return parse_recording(text, file=p.as_posix(), allow_partial_tail=allow_partial_tail)


def append_line(path: str | Path, line: RecordLine) -> None:
    """Append one line to a recording and flush it to disk (one write, then fsync)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(line.to_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())
