"""Comparable sales (comps): which sold listings price a lot, and the unit and lot value.

Pure rules, no I/O. A *listing* is one sold marketplace listing (title, price, quantity
when the listing is a multi-unit lot). A *query* is what the identify stage said about a
lot: make, model, whether the model number was hedged, and the predicted count.

Tokens
    Tokenising, spec words and distinctive tokens are those of :mod:`candor_eval.lots.tokens` (one
    tokeniser for identification and comps, the same :class:`~candor_eval.lots.tokens.TokenRules`,
    params section ``lots``):
    a *distinctive model token* contains a digit and is not a spec token ("7090", "tds2024c";
    never "8-channel", "16gb", "24"). Tokens are compared by their *key* and matched where the
    key *occurs* in the title (:func:`candor_eval.lots.tokens.spans`), exactly as identification
    does: "2960-X" in an answer meets "2960X" or "WS-C2960X" in a title, "3080" meets
    "RTX3080" but never "13080", and a title code "UAP-AC-PRO-US" offers "uapac" and
    "uapacpro". Comps add one thing: a hyphenated product code of 3+ parts with no spec part
    ("UAP-AC-PRO") is a model token even without a digit.
    A model with no distinctive token ("Research plus", or "87V", which reads as 87 volts)
    is keyed by its *phrase*: its tokens without the make, hedge words, form factors and category
    words (and without spec tokens, unless nothing else is left), whose key must occur in the
    title ("87 V" and "87-V" meet "87V"). *Family tokens* name the product line, not the model: the
    model's letter-only words of 3+ letters that are not hedge, category or generic words
    ("optiplex", "heratherm") plus the letter prefix (2+ letters) of each distinctive token ("tds"
    from "tds2024c"). The hedge, category and generic words are data (:class:`KeyWords`,
    ``<lots>/vocabulary/comps-words.yaml``).

Matching rules (each a switch in :class:`Rules`, params section ``comps``)
    ``require_brand``: the title must contain the make (its key, or its first word
        of 4+ letters: "Thermo Fisher Scientific" matches "Thermo Scientific ...").
        Off: the make is ignored (the pre-fix behaviour: a "7090" trading card matches).
    ``require_model_token``: the title must share at least one distinctive model token (or
        contain the model's phrase). Off: the pre-fix rule, every token of the model text that
        contains a digit is a model token, spec words included ("16gb", "8-channel"), and a
        title matches when it shares one (a model without digits: any word of 2+ characters).
    ``hedged_fallback``: when the answer hedged its model number ("e.g. 34401A"), the number
        is not a hard gate: match on the family tokens instead, and the estimate is marked
        hedged. When the model has no family token, the hedged number is used as is. Off: the
        hedged number is a hard gate like any other.
    ``exclude_accessories``: a title containing any of ``accessory_words`` (whole words or
        phrases: "power supply", "for parts", "trading card") is excluded.
    ``per_unit_price``: a listing's price is divided by its quantity. Off: a 10-unit lot's
        price counts as the price of one unit.

Value
    unit value = median of the matched listings' (per-unit) prices when at least
    ``min_comps`` match (the mean of the two middle prices for an even number), else no
    estimate (an abstention, never a guess). lot value = unit value x predicted count, both
    rounded half-up to the cent. A missing count means one unit; a count below one, a failed
    or unparseable answer, no model, or (with ``require_brand``) no make give no estimate.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from candor_eval.lots.tokens import TokenRules, candidate_tokens, distinctive_tokens, key, spans, tokenise

CENT = Decimal("0.01")



@dataclass(frozen=True)
class KeyWords:
    """The words a model's phrase and family keys leave out (module docstring, "Tokens"); data,
    ``<lots>/vocabulary/comps-words.yaml`` (:class:`candor_eval.lots.vocabulary.CompsWords`).

    ``category``: words that say what a thing is, not which model it is ("drill", "monitor"):
    never part of a phrase or family key. ``generic``: words that, besides the category words,
    never name a product line on their own ("pro", "series"): family keys skip them.
    ``hedge``: the single words of a hedge ("e.g.", "or", "possibly"): never keys. Whether an
    answer hedges at all is another list, :meth:`candor_eval.lots.tokens.TokenRules.is_hedged`'s markers.
    """

    category: frozenset[str]
    generic: frozenset[str]
    hedge: frozenset[str]


Reason = Literal["ok", "failed_answer", "no_model", "no_brand", "no_count", "too_few_comps"]
Exclusion = Literal["brand", "model", "accessory"]



def is_code(token: str, *, tokens: TokenRules) -> bool:
    """A hyphenated product code of 3+ parts without spec parts ("uap-ac-pro"): a model token."""
    parts = [p for p in token.split("-") if p]
    return len(parts) >= 3 and not any(tokens.is_spec(p) for p in parts)


def model_keys(model: str, *, tokens: TokenRules) -> tuple[str, ...]:
    """Keys of the distinctive tokens and product codes of ``model``, sorted (empty when it has none)."""
    keys = {key(t) for t in distinctive_tokens(model, rules=tokens)}
    keys.update(key(t) for t in tokenise(model) if is_code(t, tokens=tokens))
    return tuple(sorted(keys))


def model_phrase(model: str, *, make: str | None = None, tokens: TokenRules, words: KeyWords) -> tuple[str, ...]:
    """The phrase key of a model without distinctive tokens (module docstring), in order.

    "Research plus 8-channel" -> ("research", "plus"); "87V" (make Fluke) -> ("87v",).
    """
    skip = words.hedge | frozenset(tokenise(make)) | frozenset(tokens.form_factors)
    kept = [t for t in tokenise(model) if t not in skip and t.strip("?")]
    plain = [t for t in kept if not tokens.is_spec(t) and t not in words.category]
    return tuple(plain or [t for t in kept if t not in words.category])


def family_tokens(model: str, *, make: str | None = None, tokens: TokenRules,
                  words: KeyWords) -> tuple[str, ...]:
    """Product-line tokens: letter-only phrase words of 3+ letters, letter prefixes (2+) of model tokens."""
    skip = words.hedge | frozenset(tokenise(make)) | words.category | words.generic | frozenset(tokens.form_factors)
    out: list[str] = []
    for t in tokenise(model):
        c = key(t)
        if c.isalpha() and len(c) >= 3 and t not in skip and not tokens.is_spec(t) and c not in out:
            out.append(c)
    for tok in model_keys(model, tokens=tokens):
        prefix = re.match(r"^[^\W\d_]+", tok)
        if prefix and len(prefix.group()) >= 2 and prefix.group() not in skip and prefix.group() not in out:
            out.append(prefix.group())
    return tuple(out)


def _family_match(family: Sequence[str], keys: frozenset[str]) -> bool:
    for fam in family:
        if fam in keys:
            return True
        if any(k.startswith(fam) and k[len(fam):len(fam) + 1].isdigit() for k in keys):
            return True
    return False


def _phrase_in(phrase: Sequence[str], title: str) -> bool:
    want = key(" ".join(phrase))
    return bool(want) and want in spans(title)


def brand_matches(make: str, title: str) -> bool:
    """True when ``title`` names ``make``: its key occurs in the title, or its first word's key
    when that has 4+ characters ("Thermo Fisher Scientific" ~ "Thermo Scientific")."""
    make_toks = tokenise(make)
    if not make_toks:
        return False
    found = spans(title)
    first = key(make_toks[0])
    return key(make) in found or (len(first) >= 4 and first in found)


def accessory_hit(title: str, accessory_words: Iterable[str]) -> str | None:
    """The first of ``accessory_words`` (a word or phrase) found in ``title``, or None."""
    for phrase in accessory_words:
        if _phrase_in(tuple(tokenise(phrase)), title):
            return phrase
    return None


@dataclass(frozen=True)
class Listing:
    """One sold listing. ``price``: USD for the whole listing; ``quantity``: units in it (>= 1)."""

    id: str
    title: str
    price: Decimal
    quantity: int = 1
    sold_date: str = ""
    category: str = ""


@dataclass(frozen=True)
class Query:
    """What identification said about a lot: ``make``/``model`` (None when not named), ``hedged``."""

    make: str | None
    model: str | None
    hedged: bool = False


@dataclass(frozen=True)
class Rules:
    """The ``comps`` matching switches (module docstring) and the abstention threshold; built by
    :meth:`candor_eval.lots.params.CompsParams.rules` (the one home of the defaults)."""

    require_brand: bool
    require_model_token: bool
    hedged_fallback: bool
    exclude_accessories: bool
    per_unit_price: bool
    min_comps: int
    accessory_words: tuple[str, ...]
    tokens: TokenRules
    words: KeyWords


@dataclass(frozen=True)
class Match:
    """The decision for one listing: ``excluded_by`` is None when it is a comp."""

    listing_id: str
    excluded_by: Exclusion | None
    unit_price: Decimal


@dataclass(frozen=True)
class Estimate:
    """The value of one lot from one answer. ``unit_value``/``lot_value`` None = no estimate.

    ``comps``: ids of the matched listings (sorted), also when fewer than ``min_comps``.
    ``hedged``: the identification hedged its model number. ``reason``: why there is no
    estimate, or "ok".
    """

    unit_value: Decimal | None
    lot_value: Decimal | None
    count: int | None
    comps: tuple[str, ...]
    hedged: bool
    reason: Reason


def unit_price(listing: Listing, *, per_unit: bool) -> Decimal:
    """The listing's price per unit (exact ``Decimal``), or its whole price when not ``per_unit``."""
    return listing.price / listing.quantity if per_unit else listing.price


def match_listing(listing: Listing, query: Query, *, rules: Rules) -> Match:
    """Decide whether ``listing`` is a comp for ``query`` (first failing rule wins).

    The query must name a model (callers check). Rules are applied in the order brand,
    model, accessory, so a test can see which rule excluded a listing.
    """
    assert query.model is not None
    price = unit_price(listing, per_unit=rules.per_unit_price)
    if rules.require_brand and query.make is not None and not brand_matches(query.make, listing.title):
        return Match(listing.id, "brand", price)
    tw = spans(listing.title)
    if rules.require_model_token:
        keys = model_keys(query.model, tokens=rules.tokens)
        family = family_tokens(query.model, make=query.make, tokens=rules.tokens, words=rules.words)
        if query.hedged and rules.hedged_fallback and family:
            ok = _family_match(family, tw)
        elif keys:
            ok = any(k in tw for k in keys)
        else:
            ok = _phrase_in(model_phrase(query.model, make=query.make, tokens=rules.tokens, words=rules.words),
                            listing.title)
    else:
        toks = [t for t in candidate_tokens(query.model) if len(t) >= 2]
        digits = [t for t in toks if any(c.isdigit() for c in t)]
        ok = any(key(t) in tw for t in (digits or toks))
    if not ok:
        return Match(listing.id, "model", price)
    if rules.exclude_accessories and accessory_hit(listing.title, rules.accessory_words) is not None:
        return Match(listing.id, "accessory", price)
    return Match(listing.id, None, price)


def median_price(prices: Sequence[Decimal]) -> Decimal:
    """Exact median of ``prices`` (mean of the two middle values for an even count)."""
    ordered = sorted(prices)
    n = len(ordered)
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def to_cents(amount: Decimal) -> Decimal:
    """``amount`` rounded half-up to the cent."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def value_lot(listings: Sequence[Listing], query: Query, *, count: int | None, rules: Rules,
              ok: bool = True) -> Estimate:
    """Value one lot from one identification answer (module docstring for the definition).

    ``ok`` False means the answer failed or was unparseable: no estimate.
    """
    def none(reason: Reason, comps: tuple[str, ...] = ()) -> Estimate:
        return Estimate(None, None, count, comps, query.hedged, reason)

    if not ok:
        return none("failed_answer")
    if not query.model or not query.model.strip():
        return none("no_model")
    if rules.require_brand and not (query.make and query.make.strip()):
        return none("no_brand")
    units = 1 if count is None else count
    if units < 1:
        return none("no_count")
    matched = [m for m in (match_listing(x, query, rules=rules) for x in listings) if m.excluded_by is None]
    ids = tuple(sorted(m.listing_id for m in matched))
    if len(matched) < rules.min_comps:
        return none("too_few_comps", ids)
    unit = to_cents(median_price([m.unit_price for m in matched]))
    return Estimate(unit, to_cents(unit * units), units, ids, query.hedged, "ok")


def representative_run(estimates: Mapping[int, Estimate]) -> int:
    """The run whose valuation stands for the lot: the median run by lot value.

    Among runs with an estimate, sorted by (lot value, run), the one at index (n-1)//2 (the
    middle of three, the lower of two). When no run has an estimate, the lowest run number.
    Always an actual run, so its comps, ceiling and verdict belong together.
    """
    if not estimates:
        raise ValueError("no runs")
    valued = sorted((e.lot_value, run) for run, e in estimates.items() if e.lot_value is not None)
    if not valued:
        return min(estimates)
    return valued[(len(valued) - 1) // 2][1]


@dataclass(frozen=True)
class RunSet:
    """All runs' estimates of one lot and the representative run chosen from them."""

    estimates: dict[int, Estimate] = field(default_factory=dict)

    @property
    def run(self) -> int:
        return representative_run(self.estimates)

    @property
    def chosen(self) -> Estimate:
        return self.estimates[self.run]

    @property
    def runs_estimated(self) -> int:
        return sum(e.lot_value is not None for e in self.estimates.values())
