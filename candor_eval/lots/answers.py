"""The normalised answer record: one line of ``build/answers/<candidate>.jsonl``.

The identify stage writes it (:func:`normalise_line`, :func:`write_answers`); score-lots and
value read it (:func:`read_answers`). One JSON object per (lot or case, run), sorted by
(case, run), every key always present, in this order::

    {"case", "run", "status": "ok" | "unparseable" | "error", "make", "model",
     "count", "category", "fields", "error"[, "environment"]}

``environment`` (the recording line's: the mode switches params ``identify.record_env`` names, null when
unset) is the one optional key, present only when the recording carries it, so answers of candidates
without it keep their bytes; :func:`environment_of` sums it up per candidate.

Normalising one recording line (:class:`candor_eval.lots.recording.RecordLine`):

* item answers: make/model/category from ``itemManufacturer``/``itemModel``/
  ``itemType`` (falling back to ``categorySpecific``), count from ``quantity``;
* container answers: make/model/category from the first container item naming a
  model (else the first item); count is the **sum** of the items' quantities,
  which counts accessories as units (the valuation's count follows a rule instead:
  :mod:`candor_eval.lots.units`);
* ``count`` is an integer or None (``"4"`` and ``4.0`` become 4; ``"several"`` None);
* the model text is kept as given (trimmed): whether it hedges is a scoring rule
  (:meth:`candor_eval.lots.tokens.TokenRules.is_hedged`, params ``lots``), decided downstream;
* ``fields`` is the parsed object (for field scoring), None unless ok;
* ``error`` is the provider error (status error) or the parse error (unparseable).

Reading validates every line (pydantic, unknown keys are errors); problems name the
file, the line (1-based) and the field; a (case, run) pair appears once.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from candor_eval.common.atomic import write_lines
from candor_eval.common.errors import InputError
from candor_eval.common.tables import ascii_int, read_text
from candor_eval.lots.fields import RunAnswer
from candor_eval.lots.recording import RecordLine, parse_case_runs

Status = Literal["ok", "unparseable", "error"]


class Answer(BaseModel):
    """One normalised answer (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str = Field(min_length=1)
    run: int = Field(ge=1)
    status: Status
    make: str | None
    model: str | None
    count: int | None
    category: str | None
    fields: dict[str, Any] | None
    error: str | None
    environment: dict[str, str | None] | None = None

    def run_answer(self) -> RunAnswer:
        """This answer as one run of field scoring (:mod:`candor_eval.lots.fields`)."""
        return RunAnswer(run=self.run, status=self.status, data=self.fields, error=self.error)

    def to_json(self) -> str:
        doc = self.model_dump()
        if doc["environment"] is None:
            del doc["environment"]
        return json.dumps(doc, ensure_ascii=False)


def text(value: Any) -> str | None:
    """A stripped string, None when empty or absent."""
    if value is None:
        return None
    s = str(value).strip()
    return s or None


def quantity(value: Any) -> int | None:
    """A whole-number quantity (``"4"`` and ``4.0`` are 4), None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return ascii_int(value.strip())
    return None


def container_items(parsed: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The items of a container answer (objects only, in order), None for an item answer."""
    container = parsed.get("container")
    if parsed.get("type") == "container" or (isinstance(container, dict) and not isinstance(parsed.get("item"), dict)):
        return [i for i in (container if isinstance(container, dict) else {}).get("containerItems") or []
                if isinstance(i, dict)]
    return None


def primary_of(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The container item that names the lot: the first naming a model, else the first (``items`` not empty)."""
    return next((i for i in items if text(i.get("itemModel"))), items[0])


def _primary(parsed: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """The item that names the lot, and the answer's unit count."""
    items = container_items(parsed)
    if items is not None:
        if not items:
            return {}, None
        counts = [c for c in (quantity(i.get("quantity")) for i in items) if c is not None]
        return primary_of(items), (sum(counts) if counts else None)
    item = parsed.get("item")
    if not isinstance(item, dict):
        return {}, None
    return item, quantity(item.get("quantity"))


def normalise_line(line: RecordLine) -> Answer:
    """The normalised answer of one recording line (see the module docstring)."""
    empty = dict(make=None, model=None, count=None, category=None, fields=None)
    env = line.environment
    if line.error is not None:
        return Answer(case=line.case, run=line.run, status="error", error=line.error, environment=env, **empty)
    if line.parsed is None:
        return Answer(case=line.case, run=line.run, status="unparseable", error=line.parse_error, environment=env,
                      **empty)
    item, count = _primary(line.parsed)
    model = text(item.get("itemModel"))
    return Answer(case=line.case, run=line.run, status="ok", make=text(item.get("itemManufacturer")), model=model,
                  count=count,
                  category=text(item.get("itemType")) or text(item.get("categorySpecific")),
                  fields=line.parsed, error=None, environment=line.environment)


def environment_of(answers: Iterable[Answer]) -> dict[str, list[str | None]]:
    """Each recorded variable -> the distinct values its answers recorded (None, unset, first; then sorted);
    a variable some answers do not record gets None too. Empty when no answer records an environment."""
    answers = list(answers)
    names = sorted({n for a in answers if a.environment for n in a.environment})
    seen: dict[str, set[str | None]] = {n: {(a.environment or {}).get(n) for a in answers} for n in names}
    return {n: sorted(v, key=lambda x: (x is not None, x or "")) for n, v in seen.items()}


def write_answers(path: str | os.PathLike[str], answers: Iterable[Answer]) -> None:
    """Write ``answers`` sorted by (case, run), one JSON line each, atomically."""
    write_lines(path, (a.to_json() for a in sorted(answers, key=lambda a: (a.case, a.run))))


def rebuild_hint(rebuild: str | None) -> str:
    """The fix for a missing or bad answers file: ``rebuild``, the command that writes it again (a stage knows
    its flags), else the stage's name."""
    return f"rebuild the answers: `{rebuild}`" if rebuild else "rebuild the answers with the identify stage"


def parse_answers(text: str, *, file: str, rebuild: str | None = None) -> list[Answer]:
    """Validate answers JSONL ``text`` (module docstring); every problem at once, with :func:`rebuild_hint`."""
    try:
        return parse_case_runs(text.splitlines(), Answer, file=file)
    except InputError as err:
        raise InputError(err.problems, hint=rebuild_hint(rebuild)) from None


def read_answers(path: str | os.PathLike[str], *, rebuild: str | None = None) -> list[Answer]:
    """Read and validate an answers file; a missing or unreadable one too is an InputError with
    :func:`rebuild_hint` (``rebuild``: the command that writes it)."""
    try:
        body = read_text(path, expected="the identify stage's answers")
    except InputError as err:
        raise InputError(err.problems, hint=rebuild_hint(rebuild)) from None
    return parse_answers(body, file=Path(path).as_posix(), rebuild=rebuild)
