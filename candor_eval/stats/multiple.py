"""Multiple comparisons: Holm's step-down adjustment within a family of paired tests.

A *family* is a set of tests read together as one table, where one "B better" in twenty is
expected by chance at alpha 0.05 (docs/stats.md, "Multiple comparisons"): the per-class
detection tests of one set, split and candidate (``detection.<set>.<split>.class.*.label_found``),
the per-frame error kinds of one set, split and candidate (``detection.<set>.<split>.error.*``)
and the per-tier identification tests of one candidate (``identification.*.hit``). :func:`family`
names a metric's family (``None``: a headline test, reported unadjusted and said so).

Holm (1979) controls the family-wise error rate at alpha for any dependence between the tests:
with the family's ``m`` p-values sorted ascending ``p(1) <= ... <= p(m)``, the adjusted value of
the ``j``-th is ``max over i <= j of min(1, (m - i + 1) * p(i))``; a test is significant when its
adjusted value is ``<= alpha``. It is uniformly more powerful than Bonferroni and needs no
independence, which per-class tests on shared frames do not have.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

FAMILIES = (
    (re.compile(r"(detection\.[^.]+\.[^.]+\.class\.)[^.]+(\.label_found)"), r"\1*\2"),
    (re.compile(r"(detection\.[^.]+\.[^.]+\.error\.)[^.]+"), r"\1*"),
    (re.compile(r"(identification\.)(?!hit$|not_wrong$|count_exact$)[^.]+(\.hit)"), r"\1*\2"),
)


def family(metric: str) -> str | None:
    """The family a paired metric belongs to, or ``None`` for a headline test.

    >>> family("detection.demo.test.class.deer.label_found"), family("identification.held.hit")
    ('detection.demo.test.class.*.label_found', 'identification.*.hit')
    >>> family("detection.demo.test.label_found") is None and family("identification.hit") is None
    True
    """
    for pattern, name in FAMILIES:
        if pattern.fullmatch(metric):
            return pattern.sub(name, metric)
    return None


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values of one family, by the same keys (module docstring).

    >>> holm({"a": 0.01, "b": 0.04, "c": 0.03})
    {'a': 0.03, 'b': 0.06, 'c': 0.06}
    """
    order = sorted(pvalues, key=lambda k: (pvalues[k], k))
    m, running, out = len(order), 0.0, {}
    for i, key in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[key]))
        out[key] = running
    return {k: out[k] for k in pvalues}


def holm_by_family(pvalues: Mapping[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """Holm-adjusted p of every ``(metric, candidate)`` whose metric belongs to a family, adjusted
    within its family and candidate (a headline metric has no entry).

    >>> holm_by_family({("detection.s.test.class.a.label_found", "m"): 0.01,
    ...                 ("detection.s.test.class.b.label_found", "m"): 0.04,
    ...                 ("detection.s.test.label_found", "m"): 0.01})
    {('detection.s.test.class.a.label_found', 'm'): 0.02, ('detection.s.test.class.b.label_found', 'm'): 0.04}
    """
    groups: dict[tuple[str, str], dict[str, float]] = {}
    for (metric, cand), p in pvalues.items():
        if (fam := family(metric)) is not None:
            groups.setdefault((fam, cand), {})[metric] = p
    return {(metric, cand): p for (_, cand), ps in groups.items() for metric, p in holm(ps).items()}
