"""The comps set (``data/comps``): sold listings and the human relevance judgements, validated once.

``listings.csv`` (header exactly ``id,title,price,sold_date,quantity,category``): ``id``
unique and non-empty; ``title`` non-empty; ``price`` a positive USD amount for the whole
listing (:mod:`candor_eval.lots.amounts`); ``quantity`` the units in it, an integer >= 1;
``sold_date`` ``YYYY-MM-DD``; ``category`` free text.

``relevance.csv`` (header exactly ``lot,listing``): the listings a careful human accepts as
comps for a valuation lot; every lot must be a valuation lot and every listing an id of
``listings.csv``. Lots with no row have no relevant listing.

Every problem names the file, the row (the header is row 1) and the field; all of a
file's problems are reported at once.
"""
from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from pathlib import PurePath

from candor_eval.common.errors import InputError, Problem
from candor_eval.common.tables import ascii_int, parse_rows, read_rows, read_text
from candor_eval.common.unique import repeat_of
from candor_eval.lots.amounts import parse_amount
from candor_eval.lots.comps import Listing

LISTING_COLUMNS = ("id", "title", "price", "sold_date", "quantity", "category")
RELEVANCE_COLUMNS = ("lot", "listing")


def parse_listings(text: str, *, file: str) -> list[Listing]:
    """Validate ``listings.csv`` text (module docstring) read from ``file``; the hint of a problem rewrites the
    manifest of ``file``'s folder."""
    out: list[Listing] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for rowno, row in parse_rows(text, where=file, columns=LISTING_COLUMNS, exact=True).rows:
        where = f"{file}:row {rowno}"
        lid, title = row["id"].strip(), row["title"].strip()
        bad = len(problems)
        if not lid:
            problems.append(Problem(f"{where}.id", "empty id"))
        elif (repeat := repeat_of(seen, lid, where=f"{where}.id", noun="id")) is not None:
            problems.append(repeat)
        if not title:
            problems.append(Problem(f"{where}.title", "empty title"))
        price = parse_amount(row["price"], where=f"{where}.price", noun="price")
        if isinstance(price, Problem):
            problems.append(price)
        qty = row["quantity"].strip()
        if (n := ascii_int(qty)) is None or n < 1:
            problems.append(Problem(f"{where}.quantity", "not a unit count", expected="an integer >= 1",
                                    got=repr(row["quantity"])))
        try:
            date.fromisoformat(row["sold_date"].strip())
        except ValueError:
            problems.append(Problem(f"{where}.sold_date", "not a date", expected="YYYY-MM-DD",
                                    got=repr(row["sold_date"])))
        if len(problems) > bad:
            continue
        seen[lid] = rowno
        assert isinstance(price, Decimal)
        out.append(Listing(id=lid, title=title, price=price, quantity=int(qty),
                           sold_date=row["sold_date"].strip(), category=row["category"].strip()))
    if problems:
        folder = shlex.quote(PurePath(file).parent.as_posix())
        raise InputError(problems, hint=f"fix the rows, then rewrite the manifest: `candor fetch manifest {folder}`")
    return out


def read_listings(path: str | os.PathLike[str]) -> list[Listing]:
    """Read and validate a ``listings.csv`` file."""
    return parse_listings(read_text(path, expected="a CSV file"), file=str(path))


def read_relevance(path: str | os.PathLike[str], *, lots: Iterable[str],
                   listings: Iterable[Listing]) -> dict[str, set[str]]:
    """lot -> relevant listing ids, for every lot of ``lots``; unknown lots or listing ids are errors."""
    ids = {x.id for x in listings}
    out: dict[str, set[str]] = {lot: set() for lot in lots}
    problems = []
    for rowno, row in read_rows(path, columns=RELEVANCE_COLUMNS, exact=True).rows:
        lot, lid = row["lot"].strip(), row["listing"].strip()
        if lot not in out:
            problems.append(Problem(f"{path}:row {rowno}.lot", "not a valuation lot", got=repr(lot)))
        elif lid not in ids:
            problems.append(Problem(f"{path}:row {rowno}.listing", "no such listing in listings.csv", got=repr(lid)))
        else:
            out[lot].add(lid)
    if problems:
        raise InputError(problems)
    return out
