"""Lot values per candidate: comps -> unit value -> lot value -> bid ceiling -> verdict,
and the file that carries them (``build/values/<candidate>.csv``), written and read here.

Every run of a lot is valued on its own (:func:`candor_eval.lots.comps.value_lot`), its unit count being that
of the lot's item (:mod:`candor_eval.lots.units`: accessories in a container are not units by default); the lot's
valuation is the *representative run*: the median run by lot value
(:func:`candor_eval.lots.comps.representative_run`: the middle of three estimates, the lower of
two, the only one; the first run when none has an estimate). One valuation per lot, always
an actual run, so candidates pair lot for lot. Only valuation lots (``valuation=1``) are
valued, against their ``current_price``. Whether an answer hedges its model is
:meth:`candor_eval.lots.tokens.TokenRules.is_hedged` (the rule identification scoring uses).

The file (one row per valuation lot, sorted by lot; header exactly :data:`VALUE_COLUMNS`):
``lot, run, runs_estimated, make, model, hedged, count, unit_value, value, ceiling,
current_price, verdict, reason, comps`` (``;``-joined listing ids matched by the
representative run). No estimate: empty ``unit_value``/``value``/``ceiling`` and verdict
``pass``.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import csv_text, read_rows
from candor_eval.common.unique import repeat_of
from candor_eval.lots.amounts import parse_amount
from candor_eval.lots.answers import Answer
from candor_eval.lots.ceiling import CeilingRules, bid_ceiling, verdict
from candor_eval.lots.comps import Estimate, Listing, Query, Rules, RunSet, value_lot
from candor_eval.lots.golden import Lot
from candor_eval.lots.units import UnitRule, lot_units

VALUE_COLUMNS = ("lot", "run", "runs_estimated", "make", "model", "hedged", "count", "unit_value", "value",
                 "ceiling", "current_price", "verdict", "reason", "comps")


@dataclass(frozen=True)
class LotValue:
    """The valuation of one lot by one candidate (the representative run)."""

    lot: str
    run: int
    runs_estimated: int
    answer: Answer
    estimate: Estimate
    ceiling: Decimal | None
    current_price: Decimal
    verdict: str


@dataclass(frozen=True)
class ValueRow:
    """What scoring reads back from one row of the values file."""

    lot: str
    estimate: Decimal | None
    hedged: bool
    comps: frozenset[str]


def value_lots(lots: Sequence[Lot], answers: Iterable[Answer], listings: Sequence[Listing], *,
               rules: Rules, ceiling: CeilingRules, units: UnitRule, answers_file: str = "answers",
               rebuild: str | None = None) -> list[LotValue]:
    """Value every valuation lot from its answers (module docstring); sorted by lot id. ``units``: which
    answer items count as the lot's units (:mod:`candor_eval.lots.units`, params ``comps.units``).
    A valuation lot without any answer is an InputError naming ``answers_file``, with ``rebuild`` (the
    command that writes the answers again) as the fix."""
    by_lot: dict[str, dict[int, Answer]] = {}
    for a in answers:
        by_lot.setdefault(a.case, {})[a.run] = a
    missing = [lot.id for lot in lots if lot.valuation and lot.id not in by_lot]
    if missing:
        how = f": `{rebuild}`" if rebuild else " with the identify stage"
        raise fail(answers_file, f"no answer for valuation lot(s) {', '.join(missing)}",
                   hint=f"the answers must come from the same golden set; rebuild them{how}")
    out = []
    for lot in sorted((x for x in lots if x.valuation), key=lambda x: x.id):
        runs = by_lot[lot.id]
        rs = RunSet({run: value_lot(listings, Query(make=a.make, model=a.model, hedged=rules.tokens.is_hedged(a.model)),
                                    count=lot_units(a, rule=units, tokens=rules.tokens,
                                                    accessory_words=rules.accessory_words),
                                    rules=rules, ok=a.status == "ok")
                     for run, a in sorted(runs.items())})
        est = rs.chosen
        limit = bid_ceiling(est.lot_value, rules=ceiling) if est.lot_value is not None else None
        assert lot.current_price is not None
        out.append(LotValue(lot=lot.id, run=rs.run, runs_estimated=rs.runs_estimated, answer=runs[rs.run],
                            estimate=est, ceiling=limit, current_price=lot.current_price,
                            verdict=verdict(limit, lot.current_price, hedged=est.hedged, rules=ceiling)))
    return out


def _cell(x: object | None) -> object:
    return "" if x is None else x


def values_text(values: Sequence[LotValue]) -> str:
    """The values file's text (module docstring), rows in the order given."""
    return csv_text(VALUE_COLUMNS, [
        (v.lot, v.run, v.runs_estimated, v.answer.make or "", v.answer.model or "", int(v.estimate.hedged),
         _cell(v.estimate.count), _cell(v.estimate.unit_value), _cell(v.estimate.lot_value), _cell(v.ceiling),
         v.current_price, v.verdict, v.estimate.reason, ";".join(v.estimate.comps)) for v in values])


def read_values(path: str | os.PathLike[str], *, lots: set[str], rebuild: str | None = None) -> dict[str, ValueRow]:
    """lot -> its row, from one candidate's values file; every lot of ``lots`` exactly once. Any problem
    (a missing file too) is an InputError with ``rebuild``, the command that writes the file again, as the fix."""
    hint = f"rebuild it: `{rebuild}`" if rebuild else "rebuild it with the value stage"
    problems: list[Problem] = []
    out: dict[str, ValueRow] = {}
    seen: dict[str, int] = {}
    try:
        table = read_rows(path, columns=VALUE_COLUMNS, exact=True)
    except InputError as err:
        raise InputError(err.problems, hint=hint) from None
    for rowno, row in table.rows:
        where = f"{path}:row {rowno}"
        lot = row["lot"].strip()
        if lot not in lots:
            problems.append(Problem(f"{where}.lot", "not a valuation lot of lots.csv", got=repr(lot)))
            continue
        if (repeat := repeat_of(seen, lot, where=f"{where}.lot", noun="lot")) is not None:
            problems.append(repeat)
            continue
        seen[lot] = rowno
        est = None
        if row["value"].strip():
            got = parse_amount(row["value"], where=f"{where}.value")
            problems.extend([got] if isinstance(got, Problem) else [])
            est = got if isinstance(got, Decimal) else None
        if row["hedged"] not in ("0", "1"):
            problems.append(Problem(f"{where}.hedged", "not a flag", expected="1 or 0", got=repr(row["hedged"])))
        out[lot] = ValueRow(lot=lot, estimate=est, hedged=row["hedged"] == "1",
                            comps=frozenset(c for c in row["comps"].split(";") if c))
    missing = sorted(lots - set(out))
    if missing:
        problems.append(Problem(str(path), f"no row for valuation lot(s) {', '.join(missing)}"))
    if problems:
        raise InputError(problems, hint=hint)
    return out
