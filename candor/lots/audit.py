"""Audit comparison (seed 000, "the audit that was not a benchmark"): pipeline vs hand audit.

Pure, no I/O. Each audited lot has what the automated pipeline produced (``pipeline_*``)
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
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from candor.lots.ceiling import ACTIONABLE, Verdict


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


def summarize_audit(lots: Sequence[AuditLot]) -> AuditSummary:
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
