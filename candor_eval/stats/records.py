"""What every stored statistics record shares: rounding, and one error for a malformed record.

Stored numbers are rounded once, on writing: rates and interval bounds to 6 decimals
(:func:`candor_eval.common.rounding.rounded`), p-values to 6 significant digits (:func:`p6`: a small
p keeps its magnitude).
Each record type (:class:`candor_eval.stats.rates.Rate`, :class:`candor_eval.stats.paired.Paired`,
:class:`candor_eval.review.gate.GateResult`, :class:`candor_eval.review.stats_file.StatsFile`) has one
``as_json`` and one ``from_json``; a ``from_json`` that meets a document of another shape
raises the :func:`decoded` error, naming the file and what was expected.

>>> p6(0.000123456789), p6(0.5)
(0.000123457, 0.5)
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from candor_eval.common.errors import fail

T = TypeVar("T")


def p6(p: float) -> float:
    """A p-value to 6 significant digits."""
    return float(f"{p:.6g}")


def decoded(where: str, what: str, build: Callable[[], T]) -> T:
    """``build()``, or an InputError naming ``where`` when the document is not ``what``."""
    try:
        return build()
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise fail(where, f"not {what}", got=f"{type(err).__name__}: {err}",
                   hint="regenerate it with its stage (dvc repro)") from None
