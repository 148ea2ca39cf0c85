"""Identification in three states (docs/lots.md, "Scoring"), and the exact-count check.

Definitions (truth first, prediction second; keys, spans and hedges are
:mod:`candor_eval.lots.tokens`):

* **hit**: one of the label's keys (:func:`candor_eval.lots.tokens.label_keys`) occurs in the
  predicted model (``"Dell OptiPlex 7090 SFF"`` vs label ``"OptiPlex 7090"``: ``7090``;
  ``"RTX3080"`` vs ``"RTX 3080"``: ``3080``), and the prediction is not hedged.
* **abstain**: the prediction names no model (empty/None, only a category, only spec words
  or a series name: ``"8-channel pipette"``, ``"SFF 16GB"``, ``"OptiPlex"``), or it is
  **hedged**: it names more than one model or marks its model as an example (``"7090 or
  7080"``, ``"e.g. 7090"``). A hedge needs a human look, which is what an abstention means;
  the caller counts hedged abstentions separately (:meth:`TokenRules.is_hedged`).
* **wrong**: the prediction names a model (it has a distinctive token), none of the label's
  keys occurs in it, and it is not hedged. A confident wrong answer is the costly one: it
  becomes a comp search and a bid ceiling, so it is reported on its own line.

Only the predicted *model* text is compared (makes like ``3M`` would otherwise look like
model numbers).

Degenerate case: a label with no key cannot be scored; golden-set checking rejects such a
row before anything runs (:func:`candor_eval.lots.identification_scoring.check_labels`).

Counting is separate from identification: :func:`count_exact` is True when the predicted
unit count equals the label's, None when the label has no count. Higher hit rate, lower
wrong rate and higher exact-count rate are better.
"""
from __future__ import annotations

from typing import Literal

from candor_eval.lots.tokens import TokenRules, distinctive_tokens, label_keys, spans

Outcome = Literal["hit", "abstain", "wrong"]
OUTCOMES: tuple[Outcome, ...] = ("hit", "abstain", "wrong")


def identification_outcome(label_model: str, predicted_model: str | None, *,
                           pinned: tuple[str, ...] = (), rules: TokenRules) -> Outcome:
    """Score one prediction against one label: ``hit``, ``abstain`` or ``wrong``.

    >>> rules = TokenRules(spec_words=("gb",), form_factors=("sff",), generation_prefixes=(), min_number_digits=3,
    ...                    hedge_markers=("e.g.",))
    >>> identification_outcome("OptiPlex 7090", "Dell OptiPlex 7090 SFF", rules=rules)
    'hit'
    >>> identification_outcome("OptiPlex 7090", "Desktop Computer", rules=rules)
    'abstain'
    >>> identification_outcome("OptiPlex 7090", "e.g. OptiPlex 7090", rules=rules)
    'abstain'
    >>> identification_outcome("OptiPlex 7090", "OptiPlex 3080", rules=rules)
    'wrong'
    """
    if not predicted_model or not predicted_model.strip() or rules.is_hedged(predicted_model):
        return "abstain"
    if label_keys(label_model, pinned, rules=rules) & spans(predicted_model):
        return "hit"
    return "wrong" if distinctive_tokens(predicted_model, rules=rules) else "abstain"


def count_exact(label_count: int | None, predicted_count: int | None) -> bool | None:
    """True when the counts are equal, False otherwise (a missing prediction is False);
    None when there is no count label."""
    if label_count is None:
        return None
    return predicted_count is not None and predicted_count == label_count
