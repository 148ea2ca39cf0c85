"""Which items of an answer are the lot's units: the count the valuation multiplies the unit value by.

An *item* answer names one item and its ``quantity``: that quantity is the lot's unit count under
every rule. A *container* answer lists items (a box: two drills, two batteries, a charger); the
identify stage's normalised ``count`` is the **sum** of every item's quantity
(:mod:`candor_eval.lots.answers`), which counts accessories as units of the lot's item. The
valuation prices the lot's item (the container item that names the lot: the first naming a model,
else the first) and multiplies its unit value by a count, so that count follows a rule (params
``comps.units``):

``lot_item`` (the default)
    the quantities of the container items that *are the lot's item*, summed: the naming item itself,
    and every other item whose model matches it (their model keys, the distinctive tokens and product
    codes of :func:`candor_eval.lots.comps.model_keys`, share a key; without keys on either side, the
    same model text ignoring case), unless that item's name, type or model contains one of the
    accessory words (``accessory-words.yaml``, the list that keeps accessory listings out of the
    comps). "DeWalt DCD791" x 2, "DCB203" battery x 2, "DCB112" charger x 1: 2 units.
``all_items``
    every item's quantity summed (the normalised ``count``): the behaviour before this rule, kept to
    show the difference in review.

Quantities that are not whole numbers are skipped (:func:`candor_eval.lots.answers.quantity`);
no counted item with a quantity gives None (the valuation then assumes one unit, as for an item
answer without a quantity). Pure, no I/O.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from candor_eval.lots.answers import Answer, container_items, primary_of, quantity, text
from candor_eval.lots.comps import accessory_hit, model_keys
from candor_eval.lots.tokens import TokenRules

UnitRule = Literal["lot_item", "all_items"]


def is_accessory(item: dict[str, Any], accessory_words: Iterable[str]) -> bool:
    """True when the item's name, type or model contains one of ``accessory_words``."""
    label = " ".join(t for t in (text(item.get(k)) for k in ("itemName", "itemType", "itemModel")) if t)
    return accessory_hit(label, accessory_words) is not None


def same_item(item: dict[str, Any], lot_item: dict[str, Any], *, tokens: TokenRules) -> bool:
    """True when ``item`` is the lot's item by model (module docstring): shared model keys, or, when
    neither model has keys, the same model text ignoring case."""
    mine, theirs = text(item.get("itemModel")), text(lot_item.get("itemModel"))
    if mine is None or theirs is None:
        return False
    k1, k2 = set(model_keys(mine, tokens=tokens)), set(model_keys(theirs, tokens=tokens))
    if k1 or k2:
        return bool(k1 & k2)
    return mine.casefold() == theirs.casefold()


def lot_units(answer: Answer, *, rule: UnitRule, tokens: TokenRules, accessory_words: Iterable[str]) -> int | None:
    """The lot's unit count in ``answer`` under ``rule`` (module docstring)."""
    items = container_items(answer.fields) if answer.fields is not None else None
    if rule == "all_items" or items is None:
        return answer.count
    if not items:
        return None
    words = tuple(accessory_words)
    lot_item = primary_of(items)
    counted = [i for i in items
               if i is lot_item or (same_item(i, lot_item, tokens=tokens) and not is_accessory(i, words))]
    known = [q for q in (quantity(i.get("quantity")) for i in counted) if q is not None]
    return sum(known) if known else None
