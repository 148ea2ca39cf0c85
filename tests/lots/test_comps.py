"""Comps matching rules one by one on tiny hand-made listings, and the unit/lot value."""
from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from candor_eval.lots.comps import (
    Estimate,
    Listing,
    Query,
    brand_matches,
    family_tokens,
    match_listing,
    median_price,
    model_keys,
    model_phrase,
    representative_run,
    value_lot,
)
from candor_eval.lots.params import CompsParams
from candor_eval.lots.vocabulary import read_key_words
from tests.conftest import VOCABULARY, committed_token_rules

TOKENS = committed_token_rules()
WORDS = read_key_words(VOCABULARY / "comps-words.yaml")
ACC = ("power supply", "for parts", "trading card", "case", "probe", "parts only", "not working")
ON = CompsParams().rules(tokens=TOKENS, accessory_words=ACC, words=WORDS)
OFF = replace(ON, require_brand=False, require_model_token=False, hedged_fallback=False,
            exclude_accessories=False, per_unit_price=False)


def L(id: str, title: str, price: str, quantity: int = 1) -> Listing:
    return Listing(id=id, title=title, price=Decimal(price), quantity=quantity)


OPTI = Query(make="Dell", model="OptiPlex 7090 SFF")


@pytest.mark.parametrize(("listing", "query", "rules", "excluded_by"), [
    # brand required: a trading card and another brand's "7090" are out
    (L("a", "Dell OptiPlex 7090 SFF i5-10500 16GB", "190"), OPTI, ON, None),
    (L("b", "Pokemon 7090 holo trading card", "400"), OPTI, ON, "brand"),
    (L("b", "Pokemon 7090 holo trading card", "400"), OPTI, replace(ON, require_brand=False), "accessory"),
    (L("c", "HP 7090 ink cartridge", "30"), OPTI, ON, "brand"),
    (L("c", "HP 7090 ink cartridge", "30"), OPTI, replace(ON, require_brand=False), None),
    # a distinctive model token must be shared; "OptiPlex" alone (a family word) is not enough
    (L("d", "Dell OptiPlex 3080 Micro", "120"), OPTI, ON, "model"),
    # the pre-fix rule: "16GB" in the answer's model field is used as a model token
    (L("d", "Dell OptiPlex 3080 Micro 16GB", "120"), Query(make="Dell", model="OptiPlex 7090 16GB"), ON, "model"),
    (L("d", "Dell OptiPlex 3080 Micro 16GB", "120"), Query(make="Dell", model="OptiPlex 7090 16GB"),
     replace(ON, require_model_token=False), None),
    (L("d", "Dell OptiPlex 3080 Micro", "120"), OPTI, replace(ON, require_model_token=False), "model"),
    # spec words are never model tokens: "8-channel" on a DVR does not match an 8-channel pipette
    (L("e", "8-Channel DVR security recorder", "60"),
     Query(make="Eppendorf", model="Research plus 8-channel"), replace(ON, require_brand=False), "model"),
    (L("e", "8-Channel DVR security recorder", "60"),
     Query(make="Eppendorf", model="Research plus 8-channel"), OFF, None),
    (L("f", "Eppendorf Research plus 8-channel pipette 30-300 uL", "260"),
     Query(make="Eppendorf", model="Research plus 8-channel"), ON, None),
    # hyphen-insensitive tokens
    (L("g", "Cisco WS-C2960X-48FPD-L 2960X 48 port PoE", "150"),
     Query(make="Cisco", model="Catalyst 2960-X"), ON, None),
    # accessories and parts-only listings are excluded
    (L("h", "Dell OptiPlex 7090 SFF power supply 200W", "35"), OPTI, ON, "accessory"),
    (L("i", "Dell OptiPlex 7090 SFF for parts no RAM", "40"), OPTI, ON, "accessory"),
    (L("h", "Dell OptiPlex 7090 SFF power supply 200W", "35"), OPTI, replace(ON, exclude_accessories=False), None),
])
def test_match_rules_one_by_one(listing, query, rules, excluded_by):
    assert match_listing(listing, query, rules=rules).excluded_by == excluded_by


def test_hedged_model_number_is_not_a_hard_gate():
    """A hedged "e.g. TDS2022B" falls back to the TDS family; without the fallback it gates."""
    q = Query(make="Tektronix", model="e.g. TDS2022B", hedged=True)
    real = L("r", "Tektronix TDS2024C 4 channel 200 MHz oscilloscope", "900")
    assert match_listing(real, q, rules=ON).excluded_by is None
    assert match_listing(real, q, rules=replace(ON, hedged_fallback=False)).excluded_by == "model"
    other = L("o", "Tektronix MSO44 mixed signal oscilloscope", "9000")
    assert match_listing(other, q, rules=ON).excluded_by == "model"


def test_hedged_estimate_is_marked_hedged():
    q = Query(make="Tektronix", model="possibly TDS2022B", hedged=True)
    listings = [L(str(i), f"Tektronix TDS20{i}4C oscilloscope", str(800 + 100 * i)) for i in range(1, 4)]
    est = value_lot(listings, q, count=1, rules=ON)
    assert est.hedged and est.reason == "ok" and est.unit_value == Decimal("1000.00")


def test_per_unit_price_divides_multi_unit_listings():
    lot10 = L("m", "Lot of 10 Dell OptiPlex 7090 SFF", "1850", quantity=10)
    assert match_listing(lot10, OPTI, rules=ON).unit_price == Decimal("185")
    assert match_listing(lot10, OPTI, rules=replace(ON, per_unit_price=False)).unit_price == Decimal("1850")


@pytest.mark.parametrize(("make", "title", "expected"), [
    ("Dell", "DELL OptiPlex 7090", True),
    ("Thermo Fisher Scientific", "Thermo Scientific Heratherm IGS60", True),
    ("Mettler Toledo", "Mettler-Toledo XS205 balance", True),
    ("Bio-Rad", "BioRad T100 thermal cycler", True),
    ("HP", "Hewlett Packard 34401A", False),
    ("Dell", "Dellwood 7090 cabinet", False),
    ("", "Dell OptiPlex", False),
])
def test_brand_matches(make, title, expected):
    assert brand_matches(make, title) is expected


def test_model_keys_phrase_and_family():
    assert model_keys("OptiPlex 7090 SFF 16GB", tokens=TOKENS) == ("7090",)
    assert model_keys("Research plus 8-channel", tokens=TOKENS) == ()
    assert model_phrase("Research plus 8-channel", make="Eppendorf", tokens=TOKENS, words=WORDS) == ("research", "plus")
    # only a spec-looking token: it is the key
    assert model_phrase("Fluke 87V", make="Fluke", tokens=TOKENS, words=WORDS) == ("87v",)
    assert family_tokens("TDS2024C", make="Tektronix", tokens=TOKENS, words=WORDS) == ("tds",)
    assert family_tokens("OptiPlex 7090 SFF", make="Dell", tokens=TOKENS, words=WORDS) == ("optiplex",)


def test_model_without_distinctive_token_matches_by_phrase():
    q = Query(make="Fluke", model="87V")
    assert match_listing(L("a", "Fluke 87V True RMS multimeter", "180"), q, rules=ON).excluded_by is None
    assert match_listing(L("b", "Fluke 87 III multimeter", "90"), q, rules=ON).excluded_by == "model"


def test_median_price_exact():
    assert median_price([Decimal(3), Decimal(1), Decimal(2)]) == Decimal(2)
    assert median_price([Decimal("1.00"), Decimal("2.01")]) == Decimal("1.505")


def test_value_is_median_times_count_and_rounds_half_up():
    listings = [L("1", "Dell OptiPlex 7090", "100.00"), L("2", "Dell OptiPlex 7090", "200.01"),
                L("3", "Dell OptiPlex 7090", "150.005", 1), L("4", "Dell OptiPlex 7090", "3"),
                L("5", "Pokemon 7090 card", "999")]
    est = value_lot(listings, OPTI, count=3, rules=ON)
    assert est.comps == ("1", "2", "3", "4")
    # median of 3, 100.00, 150.005, 200.01 = (100.00 + 150.005) / 2 = 125.0025 -> 125.00
    assert est.unit_value == Decimal("125.00")
    assert est.lot_value == Decimal("375.00")


@pytest.mark.parametrize(("query", "count", "ok", "reason"), [
    (OPTI, 1, False, "failed_answer"),
    (Query(make="Dell", model=None), 1, True, "no_model"),
    (Query(make="Dell", model="  "), 1, True, "no_model"),
    (Query(make=None, model="OptiPlex 7090"), 1, True, "no_brand"),
    (OPTI, 0, True, "no_count"),
    (Query(make="Dell", model="OptiPlex 9999"), 1, True, "too_few_comps"),
])
def test_no_estimate_is_an_abstention(query, count, ok, reason):
    listings = [L(str(i), "Dell OptiPlex 7090", "100") for i in range(5)]
    est = value_lot(listings, query, count=count, rules=ON, ok=ok)
    assert (est.unit_value, est.lot_value, est.reason) == (None, None, reason)


def test_below_min_comps_keeps_matched_ids_but_no_value():
    listings = [L("1", "Dell OptiPlex 7090", "100"), L("2", "Dell OptiPlex 7090", "120")]
    est = value_lot(listings, OPTI, count=1, rules=ON)
    assert est.lot_value is None and est.comps == ("1", "2") and est.reason == "too_few_comps"
    assert value_lot(listings, OPTI, count=1, rules=replace(ON, min_comps=2)).unit_value == Decimal("110.00")


def test_missing_count_means_one_unit():
    listings = [L(str(i), "Dell OptiPlex 7090", "100") for i in range(3)]
    assert value_lot(listings, OPTI, count=None, rules=ON).lot_value == Decimal("100.00")


def test_brand_not_required_without_make_when_rule_off():
    listings = [L(str(i), "Dell OptiPlex 7090", "100") for i in range(3)]
    est = value_lot(listings, Query(make=None, model="OptiPlex 7090"), count=1,
                    rules=replace(ON, require_brand=False))
    assert est.reason == "ok"


def _est(value: str | None) -> Estimate:
    v = None if value is None else Decimal(value)
    return Estimate(v, v, 1, (), False, "ok" if v is not None else "too_few_comps")


@pytest.mark.parametrize(("values", "run"), [
    ({1: "300", 2: "100", 3: "200"}, 3),   # middle of three
    ({1: "100", 2: None, 3: "200"}, 1),    # lower of two
    ({1: None, 2: None, 3: "50"}, 3),      # the only estimate
    ({2: None, 3: None}, 2),               # none: lowest run
    ({1: "100", 2: "100", 3: "100"}, 2),   # ties broken by run number
])
def test_representative_run(values, run):
    assert representative_run({r: _est(v) for r, v in values.items()}) == run
