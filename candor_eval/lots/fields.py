"""Field expectations (docs/lots.md, "Scoring"). Higher scores are better.

A *case* lists expectations ``{field, expected: [...]}``; ``field`` is a dot path
into the answer object (``item.itemType``, ``container.containerItems[0].itemType``,
``imageLabel``). Definitions:

* **Normalising** (:func:`normalise`): Unicode NFKC and case-fold
  (:func:`candor_eval.lots.tokens.fold`), every run of characters other than letters, digits
  and marks of any script (hyphens and spaces included) becomes one space, trimmed. So
  ``power-tools``, ``Power tools`` and ``Power Tools`` are the same value, as the
  analysis prompt tells the model, and ``Дрель``, ``ΔΡΑΠΑΝΟ`` or ``電動ドリル`` keep their
  letters (an expected value that normalises to nothing is a case-file error:
  :mod:`candor_eval.lots.golden`).
* **Matching** (:func:`field_matches`): one-way substring tolerance: the actual
  value may be longer than the expected term, never shorter. ``Cordless Drill``
  satisfies ``Drill``; ``Drill`` does not satisfy ``Hammer Drill``. Any expected
  value satisfies the expectation.
* **Values** (:func:`field_values`): arrays are flattened; an attribute object
  ``{name, value}`` is compared as ``"name: value"`` (so ``Voltage`` passes on
  ``{name: Voltage, value: 20 Volts}`` without pinning the value); other scalars
  as their text; ``null`` gives no value (a miss).
* **Resolving** (:func:`get_field`): a path that does not resolve (a missing
  key, an index past the end, a key into a non-object) scores 0 for that run and
  adds a note; that is what happens when the model classified a container image
  as a single item.
* **Position**: an expectation is named by its position in the case's list (0-based), so
  a case may repeat a path (two attributes of ``item.itemAttributes``).
* **Scores** (:func:`score_case`): per field ``hits/total`` over the runs, where
  ``total`` counts the runs that returned an answer; runs whose provider call
  failed are dropped from ``total`` (their errors are kept). An unparseable
  answer counts in ``total`` as a miss. Per case: the mean of its field scores.
  Overall (:func:`overall_score`): the mean of the case scores.
* **Degenerate cases:** an empty ``expected`` list can never be satisfied: the
  field scores 0 and a note says so. A field with ``total == 0`` (every run
  failed) has score None and is left out of the case mean; a case with no
  scored field has score None and is left out of the overall mean; no scored
  case gives an overall None.

Pure functions, no I/O.
"""
from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from candor_eval.lots.tokens import fold, is_word_char

_PATH_PART = re.compile(r"^([^\[\]]+)((?:\[\d+\])*)$")


def normalise(text: str) -> str:
    """Folded (NFKC, case-fold), runs of anything but letters, digits and marks to one space, trimmed.

    >>> normalise("  Power-Tools "), normalise("Дрель-Шуруповёрт")
    ('power tools', 'дрель шуруповёрт')
    """
    return " ".join("".join(ch if is_word_char(ch) else " " for ch in fold(text)).split())


def parse_path(path: str) -> list[str | int]:
    """Split ``a.b[0].c`` into ``['a', 'b', 0, 'c']``; raise ValueError when malformed."""
    out: list[str | int] = []
    for part in path.split("."):
        m = _PATH_PART.match(part)
        if not m:
            raise ValueError(f"malformed field path {path!r} at {part!r}")
        out.append(m.group(1))
        out.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return out


def get_field(data: Any, path: str) -> tuple[bool, Any]:
    """``(resolved, value)`` of dot path ``path`` in ``data``; ``(False, None)`` when it does not resolve."""
    cur = data
    for key in parse_path(path):
        if isinstance(key, int):
            if not isinstance(cur, list) or key >= len(cur):
                return False, None
            cur = cur[key]
        else:
            if not isinstance(cur, dict) or key not in cur:
                return False, None
            cur = cur[key]
    return True, cur


def field_values(value: Any) -> list[str]:
    """Flatten ``value`` into comparable strings (arrays flattened, attributes as ``name: value``)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [s for v in value for s in field_values(v)]
    if isinstance(value, dict):
        if "name" in value:
            v = value.get("value")
            return [f"{value['name']}: {v}" if v is not None else str(value["name"])]
        return [s for v in value.values() for s in field_values(v)]
    if isinstance(value, bool):
        return [str(value).lower()]
    return [str(value)]


def field_matches(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """True when any actual value contains (after :func:`normalise`) any expected value.

    One-way: ``field_matches(["Drill"], ["Cordless Drill"])`` is True,
    ``field_matches(["Hammer Drill"], ["Drill"])`` is False. An empty
    ``expected`` never matches.
    """
    wants = [normalise(e) for e in expected]
    haves = [normalise(a) for a in actual]
    return any(w and w in h for w in wants for h in haves)


@dataclass(frozen=True)
class Expectation:
    """One expectation of a case: a field path and the acceptable values."""

    field: str
    expected: tuple[str, ...]


@dataclass(frozen=True)
class FieldScore:
    """The expectation at ``position`` (0-based) of its case: ``hits`` of ``total`` answered runs;
    ``score = hits / total`` (None when total is 0)."""

    position: int
    field: str
    expected: tuple[str, ...]
    hits: int
    total: int
    unresolved: int

    @property
    def score(self) -> float | None:
        return self.hits / self.total if self.total else None


@dataclass(frozen=True)
class CaseScore:
    """The field scores of one case over its runs, its mean, notes and provider errors."""

    case: str
    fields: tuple[FieldScore, ...]
    notes: tuple[str, ...]
    errors: tuple[str, ...]
    runs: int

    @property
    def score(self) -> float | None:
        scored = [f.score for f in self.fields if f.score is not None]
        return sum(scored) / len(scored) if scored else None


@dataclass(frozen=True)
class RunAnswer:
    """One run of one case: ``status`` ok/unparseable/error, the parsed object, the error text."""

    run: int
    status: str
    data: Any = None
    error: str | None = None


def score_case(case: str, expectations: Sequence[Expectation], runs: Sequence[RunAnswer]) -> CaseScore:
    """Score every expectation of ``case`` over ``runs`` (see the module docstring)."""
    answered = [r for r in runs if r.status != "error"]
    errors = tuple(f"run {r.run}: {r.error}" for r in sorted(runs, key=lambda r: r.run) if r.status == "error")
    notes: list[str] = []
    fields = []
    for position, exp in enumerate(expectations):
        hits = unresolved = 0
        for r in answered:
            if r.status != "ok":
                continue
            resolved, value = get_field(r.data, exp.field)
            if not resolved:
                unresolved += 1
                continue
            hits += field_matches(exp.expected, field_values(value))
        fields.append(FieldScore(position, exp.field, exp.expected, hits, len(answered), unresolved))
        if not exp.expected:
            notes.append(f"{exp.field}: expected list is empty, so this field can never be satisfied")
        if unresolved:
            notes.append(f"{exp.field}: path did not resolve in {unresolved}/{len(answered)} run(s) "
                         "(the answer may be the other analysis type, e.g. an item instead of a container)")
    bad = sum(r.status == "unparseable" for r in answered)
    if bad:
        notes.append(f"{bad}/{len(answered)} run(s) unparseable: every field scored as a miss")
    return CaseScore(case, tuple(fields), tuple(notes), errors, len(runs))


def overall_score(cases: Sequence[CaseScore]) -> float | None:
    """Mean of the case scores that are not None; None when there is none."""
    scored = [c.score for c in cases if c.score is not None]
    return sum(scored) / len(scored) if scored else None


def _fmt(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.2f}"


REPLAYED_FAILURE = "recorded failure (in replay mode: replayed from the recording, no call made)"


def format_case_table(case: CaseScore, *, failure: str = REPLAYED_FAILURE) -> str:
    """The console table of one case (field, expected, hits, score), then notes and the failed runs,
    each labelled ``failure``: by default a failure stored in the recording, which replay mode (the
    default) replays as data, the run's status, without a call; a live run records its own."""
    header = ("field", "expected", "hits", "score")
    rows = [(f.field, " | ".join(f.expected) or "(none)", f"{f.hits}/{f.total}", _fmt(f.score)) for f in case.fields]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]

    def line(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    def row(cells: tuple[str, ...]) -> str:
        return "│" + "│".join(f" {c:<{w}} " for c, w in zip(cells, widths)) + "│"

    out = [f"{case.case} — avg {_fmt(case.score)}", line("┌", "┬", "┐"), row(header), line("├", "┼", "┤")]
    out.extend(row(r) for r in rows)
    out.append(line("└", "┴", "┘"))
    out.extend(_wrapped(f"note: {n}") for n in case.notes)
    out.extend(_wrapped(f"{failure}: {e}") for e in case.errors)
    return "\n".join(out)


def _wrapped(text: str, width: int = 100) -> str:
    """``text`` indented two spaces, wrapped to ``width`` columns (its continuation lines four)."""
    return textwrap.fill(text, width=width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False,
                         break_long_words=False)
