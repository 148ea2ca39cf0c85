"""value stage (per candidate): comps -> unit value -> lot value -> bid ceiling -> verdict.

    candor value --candidate prompt-a --answers build/answers/prompt-a.jsonl \\
        --lots data/lots/lots.csv --comps data/comps --out build/values/prompt-a.csv \\
        [--tokens TOKENS.yaml] [--accessory-words ACCESSORY-WORDS.yaml] [--comps-words COMPS-WORDS.yaml]

Inputs
    ``--answers``  the identify stage's normalised answers (:mod:`candor_eval.lots.answers`).
                   Replayed answers are frozen, so this stage is deterministic end to end. A
                   missing or bad file exits 2 with the ``candor identify`` command that writes
                   it, with this run's flags.
    ``--lots``     the golden set's ``lots.csv`` (:mod:`candor_eval.lots.golden`); only valuation
                   lots (``valuation=1``) are valued, against their ``current_price``.
    ``--comps``    a folder with ``listings.csv`` (:mod:`candor_eval.lots.listings`).
    ``--tokens``, ``--accessory-words``, ``--comps-words``  word lists (:mod:`candor_eval.lots.vocabulary`):
                   the token rules' words, shared with identification scoring so "distinctive" means
                   the same thing in both; the titles that are not comps; the category, generic
                   and hedge words a model's phrase and family keys leave out. Each not given is
                   ``vocabulary/<file>`` in the folder of ``--lots`` when that file exists, else
                   candor's packaged default list.
    params         section ``comps`` (:class:`candor_eval.lots.params.CompsParams`): the matching
                   switches, ``min_comps``, ``units`` (which answer items are the lot's
                   units: :mod:`candor_eval.lots.units`) and the ceiling arithmetic (``band`` is read by
                   scoring); section ``lots``: ``min_number_digits`` of the token rules.

Output ``--out``: the values file, one row per valuation lot (:mod:`candor_eval.lots.values`:
the representative run of each lot, its estimate, ceiling and verdict). Bad input exits 2
and writes nothing.
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.atomic import write_text
from candor_eval.common.errors import EXIT_OK, run_main
from candor_eval.common.names import check_name
from candor_eval.common.params import section
from candor_eval.lots.answers import read_answers
from candor_eval.lots.golden import read_lots
from candor_eval.lots.listings import read_listings
from candor_eval.lots.params import CompsParams
from candor_eval.lots.values import value_lots, values_text
from candor_eval.lots.vocabulary import AccessoryWords, read_key_words, read_vocabulary
from candor_eval.stages.cli_lots import (
    LOTS_CSV_FOLDER,
    add_tokens,
    add_vocabulary,
    command,
    given,
    stage_parser,
    token_rules,
    vocabulary,
)

log = logging.getLogger("candor.value")


def build_parser() -> argparse.ArgumentParser:
    ap = stage_parser("candor value", __doc__)
    ap.add_argument("--candidate", required=True, help="candidate name (for the log)")
    ap.add_argument("--answers", required=True, help="normalised answers JSONL of the candidate")
    ap.add_argument("--lots", required=True, help="the golden set's lots.csv")
    ap.add_argument("--comps", required=True, help="folder with listings.csv")
    add_tokens(ap, lots=LOTS_CSV_FOLDER)
    add_vocabulary(ap, "--accessory-words", "accessory-words.yaml", purpose="titles that are not comps",
                   lots=LOTS_CSV_FOLDER)
    add_vocabulary(ap, "--comps-words", "comps-words.yaml", purpose="words comps keys leave out", lots=LOTS_CSV_FOLDER)
    ap.add_argument("--out", required=True, help="output CSV (one row per valuation lot)")
    return ap


def rebuild_command(args: argparse.Namespace) -> str:
    """The command that writes this run's ``--answers`` again: identify on the golden set of ``--lots`` (its
    folder), with the flags of this run that identify shares (``--params``, ``--tokens``) that were given."""
    return command("identify", ("--candidate", args.candidate), ("--lots", Path(args.lots).parent),
                   *given(build_parser(), args, ("--params", "--tokens")), ("--answers", args.answers))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    check_name(args.candidate, what="candidate", where="--candidate")
    bench = Path(args.lots).parent                  # the golden-set folder of lots.csv: its vocabulary/
    params = section(CompsParams, "comps", path=args.params)
    tokens = token_rules(vocabulary(args.tokens, "tokens.yaml", lots=bench), params=args.params)
    accessory_words = read_vocabulary(AccessoryWords, vocabulary(args.accessory_words, "accessory-words.yaml",
                                                                 lots=bench)).accessory_words
    words = read_key_words(vocabulary(args.comps_words, "comps-words.yaml", lots=bench))
    listings = read_listings(Path(args.comps) / "listings.csv")
    rebuild = rebuild_command(args)
    answers = read_answers(args.answers, rebuild=rebuild)
    rules = params.rules(tokens=tokens, accessory_words=accessory_words, words=words)
    values = value_lots(read_lots(args.lots), answers, listings, rules=rules, ceiling=params.ceiling_rules(),
                        units=params.units, answers_file=args.answers, rebuild=rebuild)
    write_text(args.out, values_text(values))
    n_est = sum(v.estimate.lot_value is not None for v in values)
    log.info("%s: %d valuation lots, %d with an estimate, %d no estimate", args.candidate, len(values), n_est,
             len(values) - n_est)
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(run_main(main))
