"""The comps set (:mod:`candor_eval.lots.listings`): ``listings.csv`` validated once (unique id, a title, a positive
price, a unit count >= 1, a date), every problem of a file at once; ``relevance.csv`` keyed by valuation lot,
naming only known listings."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.comps import Listing
from candor_eval.lots.listings import parse_listings, read_listings, read_relevance
from tests.conftest import TESTS

HEADER = "id,title,price,sold_date,quantity,category\n"


def test_a_good_file_gives_listings_with_exact_prices():
    got = parse_listings(HEADER + " X1 , Dell OptiPlex 7090 ,210.50,2025-07-01,2,Computers\n", file="f.csv")
    assert got == [Listing(id="X1", title="Dell OptiPlex 7090", price=Decimal("210.50"), quantity=2,
                           sold_date="2025-07-01", category="Computers")]


def test_the_committed_fixture_reads():
    assert [x.id for x in read_listings(TESTS / "data" / "comps" / "listings.csv")][:2] == ["X1", "X2"]


def test_duplicate_listing_id_and_wrong_header():
    with pytest.raises(InputError, match=r"f.csv:row 3.id: duplicate id \(first on row 2\)"):
        parse_listings(HEADER + "X1,a,1.00,2025-01-01,1,c\nX1,b,1.00,2025-01-01,1,c\n", file="f.csv")
    with pytest.raises(InputError, match="wrong header"):
        parse_listings("id,title,price\n", file="f.csv")


def test_all_listing_problems_reported_at_once():
    with pytest.raises(InputError) as info:
        parse_listings(HEADER + "X1,a,-1,2025-01-01,1,c\nX2,b,1.00,2025-01-01,0,c\n"
                       ",,1.00,2025-13-01,1,c\n", file="f.csv")
    assert [p.where for p in info.value.problems] == ["f.csv:row 2.price", "f.csv:row 3.quantity", "f.csv:row 4.id",
                                                      "f.csv:row 4.title", "f.csv:row 4.sold_date"]
    assert info.value.hint == "fix the rows, then rewrite the manifest: `candor fetch manifest .`"   # f.csv's folder


def test_the_manifest_hint_names_the_listings_folder_quoted():
    with pytest.raises(InputError) as info:
        parse_listings(HEADER + "X1,a,-1,2025-01-01,1,c\n", file="my comps/listings.csv")
    assert info.value.hint == "fix the rows, then rewrite the manifest: `candor fetch manifest 'my comps'`"


def test_relevance_maps_every_lot_and_refuses_unknown_lots_and_listings(tmp_path: Path):
    listings = parse_listings(HEADER + "X1,a,1.00,2025-01-01,1,c\nX2,b,1.00,2025-01-01,1,c\n", file="f.csv")
    f = tmp_path / "relevance.csv"
    f.write_text("lot,listing\nL1,X1\nL1,X2\nL1,X1\n")
    assert read_relevance(f, lots=["L1", "L2"], listings=listings) == {"L1": {"X1", "X2"}, "L2": set()}
    f.write_text("lot,listing\nL9,X1\nL1,X9\n")
    with pytest.raises(InputError) as info:
        read_relevance(f, lots=["L1"], listings=listings)
    assert [(p.where, p.what) for p in info.value.problems] == [
        (f"{f}:row 2.lot", "not a valuation lot"), (f"{f}:row 3.listing", "no such listing in listings.csv")]
