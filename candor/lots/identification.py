"""Identification in three states (docs/lots.md, "Scoring"), and the exact-count check.

Definitions (truth first, prediction second):

* **hit**: the predicted model shares a distinctive token with the label. The
  label's tokens are its pinned ``model_tokens`` phrases when given, otherwise
  the distinctive tokens of its ``model`` (:mod:`candor.lots.tokens`).
  ``"Dell OptiPlex 7090 SFF"`` vs label ``"OptiPlex 7090"`` is a hit (``7090``).
* **abstain**: the prediction names no model: empty/None, only a category, only
  spec words or a series name (``"8-channel pipette"``, ``"SFF 16GB"``,
  ``"OptiPlex"``): nothing distinctive and no pinned phrase of the label.
* **wrong**: the prediction names a model (it has a distinctive token) and
  shares none with the label. A confident wrong answer is the costly one: it
  becomes a comp search and a bid ceiling, so it is reported on its own line.

Only the predicted *model* text is compared (makes like ``3M`` would otherwise
look like model numbers). A hedged prediction is scored on its tokens like any
other; the hedge is reported separately by the identify stage.

Degenerate case: a label with no distinctive token and no pinned tokens cannot
be scored; :func:`label_tokens` returns an empty set and golden-set validation
rejects such a row before anything runs.

Counting is separate from identification: :func:`count_exact` is True when the
predicted unit count equals the label's, None when the label has no count.
Higher hit rate, lower wrong rate and higher exact-count rate are better.
"""
from __future__ import annotations

from typing import Literal

from candor.lots.tokens import TokenRules, candidate_tokens, contains_phrase, distinctive_tokens

Outcome = Literal["hit", "abstain", "wrong"]
OUTCOMES: tuple[Outcome, ...] = ("hit", "abstain", "wrong")


def label_tokens(model: str, pinned: tuple[str, ...] = (), *, rules: TokenRules) -> frozenset[str]:
    """The label's identifying phrases: the pinned ones, else the distinctive tokens of ``model``."""
    if pinned:
        return frozenset(p.strip().lower() for p in pinned if p.strip())
    return distinctive_tokens(model, rules=rules)


def identification_outcome(label_model: str, predicted_model: str | None, *,
                           pinned: tuple[str, ...] = (), rules: TokenRules) -> Outcome:
    """Score one prediction against one label: ``hit``, ``abstain`` or ``wrong``.

    >>> rules = TokenRules(spec_words=("gb",), form_factors=("sff",), generation_prefixes=(), min_number_digits=3)
    >>> identification_outcome("OptiPlex 7090", "Dell OptiPlex 7090 SFF", rules=rules)
    'hit'
    >>> identification_outcome("OptiPlex 7090", "Desktop Computer", rules=rules)
    'abstain'
    >>> identification_outcome("OptiPlex 7090", "OptiPlex 3080", rules=rules)
    'wrong'
    """
    if not predicted_model or not predicted_model.strip():
        return "abstain"
    wanted = label_tokens(label_model, pinned, rules=rules)
    if pinned:
        if any(contains_phrase(predicted_model, p) for p in wanted):
            return "hit"
    elif wanted & set(candidate_tokens(predicted_model)):
        return "hit"
    if distinctive_tokens(predicted_model, rules=rules):
        return "wrong"
    return "abstain"


def count_exact(label_count: int | None, predicted_count: int | None) -> bool | None:
    """True when the counts are equal, False otherwise (a missing prediction is False);
    None when there is no count label."""
    if label_count is None:
        return None
    return predicted_count is not None and predicted_count == label_count
