"""Command-line glue of the lots stages (identify, score-lots, value, score-valuation): the argument
sets two or more of them take, and the params and word lists those arguments name.

Stages import this module; nothing in ``candor/`` does (the library never reads argv or
``params.yaml``). ``--params`` names the params file (default ``params.yaml``); ``--tokens`` the
token word lists (``data/lots/vocabulary/tokens.yaml``), which with params ``lots.min_number_digits``
make the token rules (:func:`token_rules`).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from candor_eval.common.params import DEFAULT_PARAMS, section
from candor_eval.lots.params import IdentifyParams, LotsParams
from candor_eval.lots.tokens import TokenRules
from candor_eval.lots.vocabulary import FOLDER, read_token_rules


def stage_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """A stage's parser: ``prog`` (``candor <stage>``), the module docstring as description, kept as
    written, and ``--params``."""
    p = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: %(default)s)")
    return p


def add_tokens(p: argparse.ArgumentParser, *, purpose: str = "the token word lists") -> None:
    """``--tokens``: the token word lists (default ``data/lots/vocabulary/tokens.yaml``)."""
    p.add_argument("--tokens", default=str(FOLDER / "tokens.yaml"), help=f"{purpose} (default: %(default)s)")


def token_rules(tokens: str | Path, *, params: str | Path) -> TokenRules:
    """The token rules: the word lists of ``tokens`` and ``lots.min_number_digits`` of the params file ``params``."""
    lots = section(LotsParams, "lots", path=params)
    return read_token_rules(tokens, min_number_digits=lots.min_number_digits)


def candidates(params: str | Path) -> list[str]:
    """``identify.candidates`` of the params file ``params``: the candidates scored and valued."""
    return section(IdentifyParams, "identify", path=params).candidates
