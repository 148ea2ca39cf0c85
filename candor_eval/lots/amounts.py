"""USD amounts as written in the lots track's CSV files: digits with optional decimals.

``185``, ``185.5`` and ``185.00`` are amounts; ``-1``, ``1e3``, ``$185``, ``call`` and digits
of other scripts (``١٢``, which ``Decimal`` would read as 12) are not. Parsed exactly as
``Decimal``. Zero is refused unless ``allow_zero`` (a bid ceiling of 0.00 is a real value; a
price or a value of 0 is not).

>>> parse_amount("185.00", where="f.csv:row 2.price")
Decimal('185.00')
>>> parse_amount("call", where="f.csv:row 2.price").what
'not an amount'
"""
from __future__ import annotations

import re
from decimal import Decimal

from candor_eval.common.errors import Problem

AMOUNT = re.compile(r"^[0-9]+(\.[0-9]+)?$")     # ASCII digits only: \d matches every script's


def parse_amount(text: str, *, where: str, noun: str = "amount", allow_zero: bool = False) -> Decimal | Problem:
    """The amount in ``text`` (surrounding blanks ignored), or the Problem with it naming ``where``;
    ``noun`` names the value in the message (``not a price``)."""
    s = (text or "").strip()
    expected = f"a {'non-negative' if allow_zero else 'positive'} USD amount such as 185.00"
    if not AMOUNT.match(s):
        article = "an" if noun[0] in "aeiou" else "a"
        return Problem(where, f"not {article} {noun}", expected=expected, got=repr(text))
    value = Decimal(s)
    if value == 0 and not allow_zero:
        return Problem(where, f"{noun} must be positive", expected=expected, got=repr(text))
    return value
