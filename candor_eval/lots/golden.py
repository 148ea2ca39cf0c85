"""The lots golden set: ``lots.csv`` and the field-expectation cases, validated once.

Layout of a golden-set folder (``data/lots``)::

    lots.csv            one row per lot (columns below); optional: a folder of cases alone is a bench
    photos/...          lot photos (paths in lots.csv are relative to the folder)
    cases/*.json        field-expectation cases (shape below)
    cases/images/...    their images (a case's ``image`` is relative to the folder)
    prompts/<c>.txt     the prompt of candidate <c>
    recordings/<c>.jsonl recorded answers of candidate <c> (candor_eval.lots.recording)

``lots.csv`` columns: ``id,make,model,model_tokens,count,category,tier,photos,
valuation,verified_value,current_price``:

* ``id``: unique, ``[A-Za-z0-9._-]+``; ``make``, ``model``, ``category``: non-empty.
* ``model_tokens``: optional ``;``-separated phrases that identify the model,
  pinned by the user (they replace the token rule, see :mod:`candor_eval.lots.tokens`).
* ``count``: units in the lot, an integer >= 1, or empty when not labelled.
* ``tier``: ``held`` (physically verified) or ``photo`` (judged from photos).
* ``photos``: optional ``;``-separated paths relative to the folder; each must exist.
* ``valuation``: ``1`` or ``0``. For ``1``, ``verified_value`` (human-verified lot
  value, USD) and ``current_price`` (current bid, USD) are required, positive,
  written with cents (``1850.00``); for ``0`` both are empty.

A case (``cases/*.json``): ``name`` (unique across cases and lot ids),
``description``, ``image`` (relative to the bench folder, never to the case file: a missing image that
exists relative to the case file is an error saying so; must exist; JPEG/PNG/WebP/GIF under 5 MB),
optional ``categoryLibrary`` ``{functional, specific, itemType}`` (lists of
strings, each optional), and ``expectations``: at least one ``{field,
expected: [...]}`` where ``field`` is a dot path (``item.itemType``,
``container.containerItems[0].itemType``) and ``expected`` may be empty (it then
never matches; the report notes it). A path may repeat (the expectations are named by
position). An expected value that normalises to nothing (``"--"``, ``"  "``:
:func:`candor_eval.lots.fields.normalise`) could never be compared and is an error naming the
case file and the field. Unknown keys are errors.

Every problem names the file, the row (the header is row 1) or JSON key, what
was expected and what was got; all problems are reported at once.
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from candor_eval.common.errors import InputError, Problem
from candor_eval.common.images import MAX_BYTES, sniff_mime
from candor_eval.common.manifest import path_problem
from candor_eval.common.params import validation_problems
from candor_eval.common.tables import parse_rows, read_json, read_text
from candor_eval.common.unique import repeat_of
from candor_eval.lots.fields import Expectation, normalise, parse_path

LOTS_FILE = "lots.csv"
CASES_DIR = "cases"
LOT_COLUMNS = ("id", "make", "model", "model_tokens", "count", "category", "tier", "photos",
               "valuation", "verified_value", "current_price")
ID_PATTERN = r"^[A-Za-z0-9._-]+$"
MONEY = re.compile(r"^\d+\.\d{2}$")


def _split(value: object) -> object:
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(";") if p.strip())
    return value


def _empty_to_none(value: object) -> object:
    return None if isinstance(value, str) and not value.strip() else value


class Lot(BaseModel):
    """One validated row of ``lots.csv``."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    id: str = Field(pattern=ID_PATTERN)
    make: str = Field(min_length=1)
    model: str = Field(min_length=1)
    model_tokens: tuple[str, ...] = ()
    count: int | None = Field(default=None, ge=1)
    category: str = Field(min_length=1)
    tier: Literal["held", "photo"]
    photos: tuple[str, ...] = ()
    valuation: bool
    verified_value: Decimal | None = None
    current_price: Decimal | None = None

    @field_validator("model_tokens", "photos", mode="before")
    @classmethod
    def _semicolon_list(cls, v: object) -> object:
        return _split(v)

    @field_validator("count", mode="before")
    @classmethod
    def _count(cls, v: object) -> object:
        return _empty_to_none(v)

    @field_validator("valuation", mode="before")
    @classmethod
    def _flag(cls, v: object) -> object:
        if v not in ("0", "1", 0, 1, True, False):
            raise ValueError("must be 1 or 0")
        return v in ("1", 1, True)

    @field_validator("verified_value", "current_price", mode="before")
    @classmethod
    def _money(cls, v: object) -> object:
        v = _empty_to_none(v)
        if isinstance(v, str) and not MONEY.match(v.strip()):
            raise ValueError("must be a positive USD amount with cents, e.g. 1850.00")
        return v

    @field_validator("photos")
    @classmethod
    def _safe_paths(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for p in v:
            if (why := path_problem(p)) is not None:
                raise ValueError(f"photo path {p!r}: {why}")
        return v


class CategoryLibrary(BaseModel):
    """Categories already in the inventory (the reuse-first ladder of docs/lots.md); each tier optional."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    functional: tuple[str, ...] | None = None
    specific: tuple[str, ...] | None = None
    itemType: tuple[str, ...] | None = None  # camelCase: the prompt's JSON key


class ExpectationSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str = Field(min_length=1)
    expected: tuple[str, ...]

    @field_validator("field")
    @classmethod
    def _path(cls, v: str) -> str:
        parse_path(v)
        return v

    @model_validator(mode="after")
    def _comparable(self) -> ExpectationSpec:
        empty = [v for v in self.expected if not normalise(v)]
        if empty:
            raise ValueError(f"field {self.field}: expected value(s) {empty} normalise to nothing "
                             "(no letter or digit), so they could never be compared")
        return self


class Case(BaseModel):
    """One field-expectation case (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=ID_PATTERN)
    description: str = ""
    image: str
    categoryLibrary: CategoryLibrary | None = None  # camelCase: the prompt's JSON key
    expectations: tuple[ExpectationSpec, ...] = Field(min_length=1)

    @field_validator("image")
    @classmethod
    def _safe_image(cls, v: str) -> str:
        if (why := path_problem(v)) is not None:
            raise ValueError(why)
        return v

    def expectation_list(self) -> list[Expectation]:
        return [Expectation(e.field, e.expected) for e in self.expectations]


@dataclass(frozen=True)
class Golden:
    """The validated golden set rooted at ``root``."""

    root: Path
    lots: tuple[Lot, ...]
    cases: tuple[Case, ...]

    def ids(self) -> list[str]:
        """Lot ids then case names, each sorted."""
        return sorted(lot.id for lot in self.lots) + sorted(c.name for c in self.cases)


def parse_lots(text: str, *, file: str) -> tuple[list[Lot], list[Problem]]:
    """Validate ``lots.csv`` text; return the lots and every problem (file, row, field)."""
    try:
        table = parse_rows(text, where=file, columns=LOT_COLUMNS, exact=True)
    except InputError as err:
        return [], err.problems
    lots: list[Lot] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for rowno, row in table.rows:
        where = f"{file}:row {rowno}"
        try:
            lot = Lot.model_validate(row)
        except ValidationError as err:
            problems.extend(validation_problems(err, where))
            continue
        if (repeat := repeat_of(seen, lot.id, where=f"{where}.id", noun="id")) is not None:
            problems.append(repeat)
            continue
        seen[lot.id] = rowno
        if lot.valuation:
            for name in ("verified_value", "current_price"):
                value = getattr(lot, name)
                if value is None or value <= 0:
                    problems.append(Problem(f"{where}.{name}", "required for a valuation lot",
                                            expected="a positive USD amount with cents", got=repr(row[name])))
        else:
            for name in ("verified_value", "current_price"):
                if getattr(lot, name) is not None:
                    problems.append(Problem(f"{where}.{name}", "only valuation lots carry values",
                                            expected="empty (valuation is 0)", got=repr(row[name])))
        lots.append(lot)
    return lots, problems


def read_lots(path: str | Path) -> list[Lot]:
    """Read and validate a ``lots.csv`` file on its own (no photo checks); InputError listing every problem."""
    lots, problems = parse_lots(read_text(path, expected="the golden set's lots.csv"), file=str(path))
    if problems:
        raise InputError(problems)
    return lots


def _image_problem(root: Path, rel: str, where: str) -> Problem | None:
    p = root / rel
    if not p.is_file():
        return Problem(where, "file not found", expected=f"an image at {p.as_posix()}")
    size = p.stat().st_size
    if size > MAX_BYTES:
        return Problem(where, f"image too large ({rel})", expected=f"at most {MAX_BYTES} bytes", got=f"{size} bytes")
    with open(p, "rb") as fh:
        if sniff_mime(fh.read(16)) is None:
            return Problem(where, "not a supported image", expected="JPEG, PNG, WebP or GIF", got=rel)
    return None


def _case_image_problem(root: Path, case_file: Path, rel: str, where: str) -> Problem | None:
    """:func:`_image_problem` of a case's ``image`` (relative to the bench folder ``root``); when it is missing there
    but a file exists at ``rel`` relative to the case file's folder, the problem says so and gives the path to
    write."""
    problem = _image_problem(root, rel, where)
    beside = case_file.parent / rel
    if problem is None or (root / rel).is_file() or not beside.is_file():
        return problem
    return Problem(where, f"file not found: a case's image is relative to the bench folder ({root.as_posix()}), "
                          f"not to the case file; {beside.as_posix()} exists: write \"image\": "
                          f"\"{_posix_relpath(beside, root)}\" to name it",
                   expected=f"an image at {(root / rel).as_posix()}", got=repr(rel))


def _posix_relpath(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()


def load_golden(root: str | Path) -> Golden:
    """Load and validate ``root/lots.csv`` and ``root/cases/*.json``; raise one InputError listing all problems.
    ``lots.csv`` is optional: a folder of cases alone is a bench without lots (a bench of neither is an
    InputError naming both)."""
    root = Path(root)
    problems: list[Problem] = []
    lots_file = root / LOTS_FILE
    case_files = sorted((root / CASES_DIR).glob("*.json"))
    if not lots_file.exists() and not case_files:
        raise InputError(Problem(root.as_posix(), "holds neither lots.csv nor cases", expected=(
            f"{lots_file.as_posix()}, or case files {(root / CASES_DIR).as_posix()}/*.json")))
    lots, lot_problems = ([], []) if not lots_file.exists() else parse_lots(
        read_text(lots_file, expected="the golden set's lots.csv"), file=lots_file.as_posix())
    problems.extend(lot_problems)
    rows = {lot.id: i for i, lot in enumerate(lots, start=2)}
    for lot in lots:
        for j, rel in enumerate(lot.photos):
            if (pr := _image_problem(root, rel, f"{lots_file.as_posix()}:row {rows[lot.id]}.photos[{j}]")):
                problems.append(pr)
    cases: list[Case] = []
    seen: dict[str, str] = {lot.id: f"{lots_file.as_posix()} row {rows[lot.id]}" for lot in lots}
    for file in case_files:
        where = file.as_posix()
        try:
            data = read_json(file, expected="a case JSON object")
        except InputError as err:
            problems.extend(err.problems)
            continue
        try:
            case = Case.model_validate(data)
        except ValidationError as err:
            problems.extend(validation_problems(err, where))
            continue
        if case.name in seen:
            problems.append(Problem(f"{where}.name", f"duplicate id (already used by {seen[case.name]})",
                                    got=repr(case.name)))
            continue
        seen[case.name] = where
        if (pr := _case_image_problem(root, file, case.image, f"{where}.image")):
            problems.append(pr)
        cases.append(case)
    if problems:
        raise InputError(problems, hint="fix the golden set, then rewrite its manifest: "
                                        f"`candor fetch manifest {shlex.quote(root.as_posix())}`")
    return Golden(root=root, lots=tuple(sorted(lots, key=lambda x: x.id)),
                  cases=tuple(sorted(cases, key=lambda c: c.name)))


PLACEHOLDER = "{{category_library}}"


def render_library(library: CategoryLibrary | None, *, default: CategoryLibrary) -> str:
    """The category block of the prompt (the reuse-first ladder of docs/lots.md).

    With a case's ``categoryLibrary``: the tiers it gives, to be reused before inventing new names.
    A tier it omits (absent or null) is what a fresh install sees for that tier: the suggestions of
    ``default`` (data: ``<lots>/vocabulary/category-library.yaml``,
    :func:`candor_eval.lots.vocabulary.read_category_library`), under the suggestions' heading after
    the given tiers. A tier given as an empty list is empty: nothing is shown for it. Without a
    library (a fresh install, and every lot): every tier's suggestions. A tier empty on both sides is
    left out.
    """
    tiers = (("categoryFunctional", "functional"), ("categorySpecific", "specific"), ("itemType", "itemType"))
    suggest = "No inventory yet. Suggested categories (reuse them when they fit):"
    if library is None:
        return "\n".join([suggest, *(f"- {label}: " + ", ".join(values) for label, attr in tiers
                                     if (values := getattr(default, attr)))])
    given = [(label, getattr(library, attr)) for label, attr in tiers if getattr(library, attr) is not None]
    omitted = [(label, values) for label, attr in tiers
               if getattr(library, attr) is None and (values := getattr(default, attr))]
    lines = ["Categories already in this inventory. Reuse one of these, in this order of preference, "
             "before inventing a new one (power-tools, Power tools and Power Tools are the same value):"]
    lines += [f"- {label}: " + ", ".join(values) for label, values in given if values]
    if omitted:
        lines.append("Not in this inventory yet. Suggested categories (reuse them when they fit):")
        lines += [f"- {label}: " + ", ".join(values) for label, values in omitted]
    return "\n".join(lines)


def render_prompt(template: str, library: CategoryLibrary | None, *, default: CategoryLibrary) -> str:
    """``template`` with ``{{category_library}}`` replaced (appended when the placeholder is absent);
    ``default``: the suggestions when ``library`` is None."""
    block = render_library(library, default=default)
    if PLACEHOLDER in template:
        return template.replace(PLACEHOLDER, block)
    return template.rstrip("\n") + "\n\n" + block + "\n"
