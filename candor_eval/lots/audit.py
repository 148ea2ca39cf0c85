"""Audit comparison: the pipeline's verdicts against a hand audit (docs/valuation.md).

Each audited lot has what the automated pipeline produced (``pipeline_*``)
and what a careful human concluded after reviewing the full-resolution photos
(``audited_*``), plus the root cause of any difference.

Definitions
    verdicts_changed        lots whose audited verdict differs from the pipeline's.
    actionable              a verdict of ``buy`` or ``watch``; counted before (pipeline) and
                            after (audit).
    ceiling sum             the sum of bid ceilings over the *actionable* lots only (a pass
                            lot's ceiling commits no money), before and after.
    ceiling_change_pct      (after - before) / before x 100, rounded half-up to 0.01; None
                            when the before sum is zero.
    buys_before             lots the pipeline marked ``buy``; ``buys_stayed_buys`` those the
                            audit also marked ``buy``.
    root_causes             lots per root cause (non-empty causes only), sorted by cause.
    counts                  the figures above that are rates over lots, as ``{k, n, unit: lot}``
                            (each lot is audited once, so lots are independent units):
                            ``verdicts_changed``, ``actionable_before`` and ``actionable_after`` of
                            all lots, ``buys_stayed_buys`` of ``buys_before``; the score-valuation
                            stage writes each with its Wilson interval (``intervals``). The ceiling
                            sums are amounts, not rates: no interval.

Files (``data/audit``; :func:`read_audit`): ``audit.csv`` (header exactly ``lot,
description, pipeline_verdict, pipeline_ceiling, audited_verdict, audited_ceiling,
root_cause``; verdicts ``buy``/``watch``/``pass``, ceilings non-negative USD amounts) and
``root_causes.csv`` (``root_cause, description, guard``: the golden-set lot(s) or test(s)
that keep the cause from returning, ``;``-separated ``lot:<id>`` or
``test:<file>::<name>``); every cause used must be listed. Every problem names the file,
the row and the field.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, TypeGuard

from candor_eval.common.counts import KEY, Count, counts_block
from candor_eval.common.errors import InputError, Problem
from candor_eval.common.tables import read_rows
from candor_eval.common.unique import repeat_of
from candor_eval.lots.amounts import parse_amount
from candor_eval.lots.ceiling import ACTIONABLE, VERDICTS, Verdict

AUDIT_COLUMNS = ("lot", "description", "pipeline_verdict", "pipeline_ceiling", "audited_verdict", "audited_ceiling",
                 "root_cause")
CAUSE_COLUMNS = ("root_cause", "description", "guard")


def _is_verdict(text: str) -> TypeGuard[Verdict]:
    return text in VERDICTS


@dataclass(frozen=True)
class AuditLot:
    """One audited lot: the pipeline's verdict and ceiling, the audit's, and the root cause."""

    lot: str
    pipeline_verdict: Verdict
    pipeline_ceiling: Decimal
    audited_verdict: Verdict
    audited_ceiling: Decimal
    root_cause: str = ""


@dataclass(frozen=True)
class AuditSummary:
    """Population-level comparison of pipeline and audit (module docstring)."""

    lots: int
    verdicts_changed: int
    actionable_before: int
    actionable_after: int
    ceiling_sum_before: Decimal
    ceiling_sum_after: Decimal
    ceiling_change_pct: Decimal | None
    buys_before: int
    buys_stayed_buys: int
    root_causes: dict[str, int]


def percent_change(before: Decimal, after: Decimal) -> Decimal | None:
    """(after - before) / before x 100, half-up to 0.01; None when ``before`` is zero."""
    if before == 0:
        return None
    return ((after - before) * 100 / before).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def summarise_audit(lots: Sequence[AuditLot]) -> AuditSummary:
    """Compare pipeline and audit over ``lots`` (empty input gives zeros and None)."""
    before = [x for x in lots if x.pipeline_verdict in ACTIONABLE]
    after = [x for x in lots if x.audited_verdict in ACTIONABLE]
    sum_before = sum((x.pipeline_ceiling for x in before), Decimal("0.00"))
    sum_after = sum((x.audited_ceiling for x in after), Decimal("0.00"))
    causes = Counter(x.root_cause for x in lots if x.root_cause)
    return AuditSummary(
        lots=len(lots),
        verdicts_changed=sum(x.pipeline_verdict != x.audited_verdict for x in lots),
        actionable_before=len(before), actionable_after=len(after),
        ceiling_sum_before=sum_before, ceiling_sum_after=sum_after,
        ceiling_change_pct=percent_change(sum_before, sum_after),
        buys_before=sum(x.pipeline_verdict == "buy" for x in lots),
        buys_stayed_buys=sum(x.pipeline_verdict == "buy" and x.audited_verdict == "buy" for x in lots),
        root_causes=dict(sorted(causes.items())),
    )


def read_causes(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """cause -> {description, guards} from ``root_causes.csv`` (module docstring)."""
    problems: list[Problem] = []
    causes: dict[str, dict[str, Any]] = {}
    for rowno, row in read_rows(path, columns=CAUSE_COLUMNS, exact=True).rows:
        name = row["root_cause"].strip()
        guards = [g.strip() for g in row["guard"].split(";") if g.strip()]
        if not name or name in causes:
            problems.append(Problem(f"{path}:row {rowno}.root_cause", "empty or duplicate", got=repr(name)))
        elif not guards or any(not g.startswith(("lot:", "test:")) for g in guards):
            problems.append(Problem(f"{path}:row {rowno}.guard", "no guard",
                                    expected="';'-separated lot:<id> or test:<file>::<name>", got=repr(row["guard"])))
        else:
            causes[name] = {"description": row["description"].strip(), "guards": guards}
    if problems:
        raise InputError(problems)
    return causes


def read_audit(folder: str | os.PathLike[str]) -> tuple[list[AuditLot], dict[str, dict[str, Any]]]:
    """The audited lots (sorted by lot) and the root-cause table of ``folder`` (module docstring)."""
    causes_path = Path(folder) / "root_causes.csv"
    causes = read_causes(causes_path)
    path = Path(folder) / "audit.csv"
    problems: list[Problem] = []
    lots: list[AuditLot] = []
    seen: dict[str, int] = {}
    for rowno, row in read_rows(path, columns=AUDIT_COLUMNS, exact=True).rows:
        where = f"{path}:row {rowno}"
        lot = row["lot"].strip()
        if not lot:
            problems.append(Problem(f"{where}.lot", "empty lot id"))
            continue
        if (repeat := repeat_of(seen, lot, where=f"{where}.lot", noun="lot id")) is not None:
            problems.append(repeat)
            continue
        seen[lot] = rowno
        bad = len(problems)
        for col in ("pipeline_verdict", "audited_verdict"):
            if row[col].strip() not in VERDICTS:
                problems.append(Problem(f"{where}.{col}", "not a verdict", expected="buy, watch or pass",
                                        got=repr(row[col])))
        pc = parse_amount(row["pipeline_ceiling"], where=f"{where}.pipeline_ceiling", allow_zero=True)
        ac = parse_amount(row["audited_ceiling"], where=f"{where}.audited_ceiling", allow_zero=True)
        problems.extend(x for x in (pc, ac) if isinstance(x, Problem))
        cause = row["root_cause"].strip()
        if cause and cause not in causes:
            problems.append(Problem(f"{where}.root_cause", f"not in {causes_path}", got=repr(cause)))
        pv, av = row["pipeline_verdict"].strip(), row["audited_verdict"].strip()
        if len(problems) > bad or not isinstance(pc, Decimal) or not isinstance(ac, Decimal) \
                or not _is_verdict(pv) or not _is_verdict(av):     # the verdicts: checked above
            continue
        lots.append(AuditLot(lot, pv, pc, av, ac, cause))
    if problems:
        raise InputError(problems)
    return sorted(lots, key=lambda x: x.lot), causes


def audit_json(a: AuditSummary, causes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``metrics/audit.json``: the summary (amounts as strings, the change in % as a number)
    and the guards of every root cause."""
    return {
        "lots": a.lots, "verdicts_changed": a.verdicts_changed,
        "actionable_before": a.actionable_before, "actionable_after": a.actionable_after,
        "ceiling_sum_before": str(a.ceiling_sum_before), "ceiling_sum_after": str(a.ceiling_sum_after),
        "ceiling_change_pct": None if a.ceiling_change_pct is None else float(a.ceiling_change_pct),
        "buys_before": a.buys_before, "buys_stayed_buys": a.buys_stayed_buys,
        "root_causes": a.root_causes,
        "guards": {name: causes[name]["guards"] for name in sorted(causes)},
        KEY: counts_block(audit_counts(a)),
    }


def audit_counts(a: AuditSummary) -> dict[str, Count]:
    """The summary's rates over lots as counts, the lot as the unit (module docstring, ``rates``).

    >>> c = audit_counts(AuditSummary(17, 3, 5, 4, Decimal(0), Decimal(0), None, 2, 1, {}))
    >>> [(name, x.k, x.n, x.unit) for name, x in c.items()][0], c["buys_stayed_buys"].n
    (('verdicts_changed', 3, 17, 'lot'), 2)
    """
    return {name: Count(k, n, "lot") for name, k, n in (("verdicts_changed", a.verdicts_changed, a.lots),
                                                         ("actionable_before", a.actionable_before, a.lots),
                                                         ("actionable_after", a.actionable_after, a.lots),
                                                         ("buys_stayed_buys", a.buys_stayed_buys, a.buys_before))}
