"""value stage (per candidate): comps -> unit value -> lot value -> bid ceiling -> verdict.

    python -m stages.value --candidate prompt-a --answers build/answers/prompt-a.jsonl \\
        --lots data/lots/lots.csv --comps data/comps --out build/values/prompt-a.csv

Inputs
    ``--answers``  the identify stage's normalised answers (JSONL, one line per (case, run):
                   ``case, run, status, make, model, hedged, count, ...``). Replayed answers
                   are frozen, so this stage is deterministic end to end.
    ``--lots``     the golden set's ``lots.csv`` (validated by :mod:`candor.lots.golden`); only
                   valuation lots (``valuation=1``) are valued, against their ``current_price``.
    ``--comps``    a folder with ``listings.csv``: ``id,title,price,sold_date,quantity,category``
                   (price: positive USD for the whole listing; quantity: units, integer >= 1;
                   sold_date: YYYY-MM-DD).
    params         section ``comps`` (:class:`CompsParams`): the matching switches, ``min_comps``,
                   ``accessory_words`` and the ceiling arithmetic (``band`` is read by scoring);
                   section ``lots``: the token rules (spec words, form factors...) shared with
                   identification scoring, so "distinctive" means the same thing in both.

Every run of a lot is valued on its own (:func:`candor.lots.comps.value_lot`); the lot's valuation
is the *representative run*: the median run by lot value (:func:`candor.lots.comps.representative_run`:
the middle of three estimates, the lower of two, the only one; the first run when none has an
estimate). One valuation per lot, always an actual run, so candidates pair lot for lot.

Output ``--out`` (CSV, one row per valuation lot, sorted by lot): ``lot, run, runs_estimated,
make, model, hedged, count, unit_value, value, ceiling, current_price, verdict, reason,
comps`` (``;``-joined listing ids matched by the representative run). No estimate: empty
``unit_value``/``value``/``ceiling`` and verdict ``pass``. Bad input exits 2 and writes nothing.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from candor.common.atomic import write_text
from candor.lots.ceiling import CeilingRules, bid_ceiling, verdict
from candor.lots.comps import DEFAULT_TOKENS, Estimate, Listing, Query, Rules, RunSet, value_lot
from candor.common.errors import InputError, Problem, fail, run_main
from candor.lots.golden import Lot, parse_lots
from candor.common.params import DEFAULT_PARAMS, section, validation_problems
from candor.lots.tokens import LotsParams, TokenRules

log = logging.getLogger("candor.value")

LISTING_COLUMNS = ("id", "title", "price", "sold_date", "quantity", "category")
OUTPUT_COLUMNS = ("lot", "run", "runs_estimated", "make", "model", "hedged", "count", "unit_value", "value",
                  "ceiling", "current_price", "verdict", "reason", "comps")
AMOUNT = re.compile(r"^\d+(\.\d+)?$")
DEFAULT_ACCESSORY_WORDS = (
    "for parts", "parts only", "not working", "as-is", "power supply", "ac adapter", "adapter", "charger only",
    "battery", "replacement", "holster", "test leads", "probe", "case only", "stand base only", "mount",
    "bracket", "rack mount kit", "module", "injector", "shelf", "chuck", "side handle",
    "tips", "capillary kit", "draft shield", "motherboard", "trading card", "card", "ink cartridge",
)


class CompsParams(BaseModel):
    """params.yaml section ``comps`` (docs/valuation.md). Amounts in USD, percentages in %."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    require_brand: bool = True
    require_model_token: bool = True
    hedged_fallback: bool = True
    exclude_accessories: bool = True
    per_unit_price: bool = True
    min_comps: int = Field(default=3, ge=1)
    band: tuple[float, float] = (0.5, 1.5)
    accessory_words: tuple[str, ...] = DEFAULT_ACCESSORY_WORDS
    buyer_premium_pct: Decimal = Field(default=Decimal("15"), ge=0)
    sell_fee_pct: Decimal = Field(default=Decimal("13"), ge=0)
    margin_pct: Decimal = Field(default=Decimal("25"), ge=0)
    shipping: Decimal = Field(default=Decimal("25.00"), ge=0)
    buy_headroom_pct: Decimal = Field(default=Decimal("20"), ge=0, le=100)

    @field_validator("buyer_premium_pct", "sell_fee_pct", "margin_pct", "shipping", "buy_headroom_pct",
                     mode="before")
    @classmethod
    def _exact(cls, v: object) -> object:
        return Decimal(repr(v)) if isinstance(v, float) else v  # 0.1 stays 0.1, not 0.1000000000000000055

    @model_validator(mode="after")
    def _check(self) -> CompsParams:
        lo, hi = self.band
        if not 0 < lo <= 1 <= hi:
            raise ValueError(f"band must satisfy 0 < low <= 1 <= high, got {list(self.band)}")
        if self.sell_fee_pct + self.margin_pct >= 100:
            raise ValueError("sell_fee_pct + margin_pct must be below 100")
        return self

    def rules(self, *, tokens: TokenRules = DEFAULT_TOKENS) -> Rules:
        return Rules(require_brand=self.require_brand, require_model_token=self.require_model_token,
                     hedged_fallback=self.hedged_fallback, exclude_accessories=self.exclude_accessories,
                     per_unit_price=self.per_unit_price, min_comps=self.min_comps,
                     accessory_words=self.accessory_words, tokens=tokens)

    def ceiling_rules(self) -> CeilingRules:
        return CeilingRules(buyer_premium_pct=self.buyer_premium_pct, sell_fee_pct=self.sell_fee_pct,
                            margin_pct=self.margin_pct, shipping=self.shipping,
                            buy_headroom_pct=self.buy_headroom_pct)


class Answer(BaseModel):
    """One normalised identify answer (only the fields valuation reads; others are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    case: str = Field(min_length=1)
    run: int = Field(ge=1)
    status: Literal["ok", "error", "unparseable"]
    make: str | None = None
    model: str | None = None
    hedged: bool = False
    count: int | None = None


@dataclass(frozen=True)
class LotValue:
    """The valuation of one lot by one candidate (the representative run)."""

    lot: str
    run: int
    runs_estimated: int
    answer: Answer
    estimate: Estimate
    ceiling: Decimal | None
    current_price: Decimal
    verdict: str


# ---------------------------------------------------------------- boundary: read and validate


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail(str(path), "file not found") from None
    except UnicodeDecodeError as err:
        raise fail(str(path), f"not UTF-8 text ({err.reason})") from None


def parse_amount(text: str, *, where: str) -> Decimal | Problem:
    """A positive USD amount (digits, optional decimals), or the Problem with it."""
    s = (text or "").strip()
    if not AMOUNT.match(s):
        return Problem(where, "not a price", expected="a positive USD amount such as 185.00", got=repr(text))
    value = Decimal(s)
    if value <= 0:
        return Problem(where, "price must be positive", expected="a positive USD amount", got=repr(text))
    return value


def parse_listings(text: str, *, file: str) -> list[Listing]:
    """Validate ``listings.csv`` text; every problem at once, each naming file, row and field."""
    reader = csv.DictReader(io.StringIO(text))
    cols = tuple(reader.fieldnames or ())
    if cols != LISTING_COLUMNS:
        raise InputError(Problem(f"{file}:row 1", "wrong header", expected=",".join(LISTING_COLUMNS),
                                 got=",".join(cols) or "an empty file"))
    out: list[Listing] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for rowno, row in enumerate(reader, start=2):
        where = f"{file}:row {rowno}"
        if None in row or any(v is None for v in row.values()):
            problems.append(Problem(where, "wrong number of fields", expected=f"{len(cols)} fields"))
            continue
        lid, title = row["id"].strip(), row["title"].strip()
        bad = len(problems)
        if not lid:
            problems.append(Problem(f"{where}.id", "empty id"))
        elif lid in seen:
            problems.append(Problem(f"{where}.id", f"duplicate id (first on row {seen[lid]})", got=repr(lid)))
        if not title:
            problems.append(Problem(f"{where}.title", "empty title"))
        price = parse_amount(row["price"], where=f"{where}.price")
        if isinstance(price, Problem):
            problems.append(price)
        qty = row["quantity"].strip()
        if not qty.isdigit() or int(qty) < 1:
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
        raise InputError(problems, hint="fix the rows, then rewrite the manifest: "
                                        "python -m stages.fetch manifest data/comps")
    return out


def parse_answers(text: str, *, file: str) -> dict[str, dict[int, Answer]]:
    """Validate the answers JSONL; case -> run -> answer. Duplicate (case, run) is an error."""
    out: dict[str, dict[int, Answer]] = {}
    problems: list[Problem] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        where = f"{file}:line {lineno}"
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as err:
            problems.append(Problem(where, f"not JSON ({err.msg})"))
            continue
        try:
            ans = Answer.model_validate(obj)
        except ValidationError as err:
            problems.extend(validation_problems(err, where))
            continue
        if ans.run in out.setdefault(ans.case, {}):
            problems.append(Problem(where, f"duplicate answer for case {ans.case!r} run {ans.run}"))
            continue
        out[ans.case][ans.run] = ans
    if problems:
        raise InputError(problems, hint="rebuild the answers: dvc repro identify")
    return out


def load_lots(path: Path) -> list[Lot]:
    lots, problems = parse_lots(read_text(path), file=str(path))
    if problems:
        raise InputError(problems)
    return lots


# ---------------------------------------------------------------- pure: value every lot


def value_lots(lots: Sequence[Lot], answers: dict[str, dict[int, Answer]], listings: Sequence[Listing], *,
               params: CompsParams, tokens: TokenRules = DEFAULT_TOKENS,
               answers_file: str = "answers") -> list[LotValue]:
    """Value every valuation lot from its answers (module docstring); sorted by lot id."""
    rules, crules = params.rules(tokens=tokens), params.ceiling_rules()
    missing = [lot.id for lot in lots if lot.valuation and lot.id not in answers]
    if missing:
        raise fail(answers_file, f"no answer for valuation lot(s) {', '.join(missing)}",
                   hint="the answers must come from the same golden set: dvc repro identify")
    out = []
    for lot in sorted((x for x in lots if x.valuation), key=lambda x: x.id):
        runs = answers[lot.id]
        estimates = {
            run: value_lot(listings, Query(make=a.make, model=a.model, hedged=a.hedged), count=a.count,
                           rules=rules, ok=a.status == "ok")
            for run, a in sorted(runs.items())
        }
        rs = RunSet(estimates)
        est = rs.chosen
        ceiling = bid_ceiling(est.lot_value, rules=crules) if est.lot_value is not None else None
        assert lot.current_price is not None
        out.append(LotValue(lot=lot.id, run=rs.run, runs_estimated=rs.runs_estimated, answer=runs[rs.run],
                            estimate=est, ceiling=ceiling, current_price=lot.current_price,
                            verdict=verdict(ceiling, lot.current_price, hedged=est.hedged, rules=crules)))
    return out


def format_values(values: Sequence[LotValue]) -> str:
    """The output CSV text (``\\n`` line endings, fixed columns, rows sorted by lot)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(OUTPUT_COLUMNS)
    for v in values:
        e = v.estimate
        w.writerow([v.lot, v.run, v.runs_estimated, v.answer.make or "", v.answer.model or "", int(e.hedged),
                    "" if e.count is None else e.count, "" if e.unit_value is None else e.unit_value,
                    "" if e.lot_value is None else e.lot_value, "" if v.ceiling is None else v.ceiling,
                    v.current_price, v.verdict, e.reason, ";".join(e.comps)])
    return buf.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stages.value", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidate", required=True, help="candidate name (for the log)")
    ap.add_argument("--answers", required=True, help="normalised answers JSONL of the candidate")
    ap.add_argument("--lots", required=True, help="the golden set's lots.csv")
    ap.add_argument("--comps", required=True, help="folder with listings.csv")
    ap.add_argument("--out", required=True, help="output CSV (one row per valuation lot)")
    ap.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (section comps)")
    args = ap.parse_args(argv)
    params = section(CompsParams, "comps", path=args.params)
    tokens = section(LotsParams, "lots", path=args.params).rules()
    listings_file = Path(args.comps) / "listings.csv"
    listings = parse_listings(read_text(listings_file), file=str(listings_file))
    answers = parse_answers(read_text(Path(args.answers)), file=args.answers)
    values = value_lots(load_lots(Path(args.lots)), answers, listings, params=params, tokens=tokens,
                        answers_file=args.answers)
    write_text(args.out, format_values(values))
    n_est = sum(v.estimate.lot_value is not None for v in values)
    log.info("%s: %d valuation lots, %d with an estimate, %d no estimate", args.candidate, len(values), n_est,
             len(values) - n_est)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
