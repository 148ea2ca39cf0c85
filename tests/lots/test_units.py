"""Which answer items are the lot's units (:mod:`candor_eval.lots.units`): the lot's item and its
same-model items, accessories out, under ``lot_item``; every item under ``all_items``. Counts by hand."""
from __future__ import annotations

from typing import Any

from candor_eval.lots.answers import Answer
from candor_eval.lots.units import UnitRule, is_accessory, lot_units, same_item
from tests.conftest import committed_token_rules

TOKENS = committed_token_rules()
WORDS = ("battery", "charger only", "power supply")


def item(model: str | None, qty: Any, kind: str = "Drill", name: str | None = None) -> dict[str, Any]:
    return {"itemName": name or f"DeWalt {model}", "itemManufacturer": "DeWalt", "itemModel": model,
            "itemType": kind, "quantity": qty}


def container(*items: dict[str, Any], count: int | None = None) -> Answer:
    fields = {"type": "container", "container": {"containerItems": list(items)}}
    return Answer(case="L011", run=1, status="ok", make="DeWalt", model="DCD791", count=count, category="Drill",
                  fields=fields, error=None)


KIT = container(item("DeWalt DCD791", 2), item("DCB203", 2, "Battery"), item("DCB112", 1, "Charger"), count=5)


def units(a: Answer, rule: UnitRule = "lot_item") -> int | None:
    return lot_units(a, rule=rule, tokens=TOKENS, accessory_words=WORDS)


def test_the_demo_kit_counts_two_drills_not_five_items():
    """L011's answer: 2 drills + 2 batteries + 1 charger. lot_item: 2 (the charger's model DCB112 shares no key
    with DCD791; the battery is an accessory and another model); all_items: 5, the normalised count."""
    assert units(KIT) == 2
    assert units(KIT, "all_items") == 5


def test_same_model_items_add_up_and_a_same_model_accessory_does_not():
    """DCD791 x 2 (the lot's item, first naming a model) + "DCD791" x 1 (same key) = 3; a "DCD791 battery" x 4
    shares the key but is an accessory: out."""
    a = container(item(None, 7, "Box"), item("DeWalt DCD791", 2), item("DCD791", 1),
                  item("DCD791", 4, "Battery", name="DCD791 battery"))
    assert units(a) == 3
    assert units(a, "all_items") == a.count  # all_items is the normalised count, whatever it is


def test_models_without_keys_match_by_text_ignoring_case():
    lot = item("Research plus", 1)
    assert same_item(item("research PLUS", 1), lot, tokens=TOKENS)
    assert not same_item(item("Reference", 1), lot, tokens=TOKENS)
    assert not same_item(item(None, 1), lot, tokens=TOKENS)


def test_quantities_that_are_not_whole_numbers_are_skipped_and_none_without_any():
    assert units(container(item("DCD791", "2"), item("DCD791", "several"))) == 2
    assert units(container(item("DCD791", "several"))) is None
    assert units(container()) is None


def test_item_answers_and_failed_answers_keep_their_count():
    single = Answer(case="x", run=1, status="ok", make="Dell", model="P2419H", count=8, category=None,
                    fields={"type": "item", "item": {"itemModel": "P2419H", "quantity": 8}}, error=None)
    failed = Answer(case="x", run=1, status="error", make=None, model=None, count=None, category=None,
                    fields=None, error="boom")
    assert units(single) == 8 and units(failed) is None


def test_accessory_words_are_looked_up_in_name_type_and_model():
    assert is_accessory({"itemType": "Battery"}, WORDS)
    assert is_accessory({"itemName": "Dell 240W power supply"}, WORDS)
    assert not is_accessory({"itemName": "DeWalt Charger", "itemType": "Charger"}, WORDS)  # "charger only" only
