"""Command-line glue of the lots stages (identify, score-lots, value, score-valuation): the argument
sets two or more of them take, the params and word lists those arguments name, and the commands
their hints print.

Stages import this module; nothing in the library does (the library never reads argv or
``params.yaml``). ``--params`` names the params file (default ``params.yaml``); ``--tokens`` the
token word lists, which with params ``lots.min_number_digits`` make the token rules (:func:`token_rules`).

Word lists (``--tokens``, ``--makes``, ``--categories``, ``--accessory-words``, ``--comps-words``):
a flag given always wins; without it, ``<lots>/vocabulary/<file>`` when that file exists (``<lots>``:
the bench folder of ``--lots``; for value, whose ``--lots`` is the ``lots.csv`` file, its folder), else
candor's packaged default list (:func:`candor_eval.lots.vocabulary.vocabulary_file`).

A hint that prints a command (:func:`command`) names it ``candor <stage>`` and repeats the flags of
the command that failed, every word quoted for a POSIX shell, so it runs as printed.
"""
from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from pathlib import Path, PurePath

from candor_eval.common.params import DEFAULT_PARAMS, section
from candor_eval.lots.params import IdentifyParams, LotsParams
from candor_eval.lots.tokens import TokenRules
from candor_eval.lots.vocabulary import Source, read_token_rules, vocabulary_file
from candor_eval.stages.cli_help import StageParser

# The ``--help`` words for a bench folder: ``--lots`` itself, or the folder of value's ``lots.csv``
LOTS = "<lots>"
LOTS_CSV_FOLDER = "<folder of --lots>"

Flag = tuple[str, object]


def stage_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """A stage's parser: ``prog`` (``candor <stage>``), the module docstring as description, kept as
    written, and ``--params``."""
    p = StageParser(prog=prog, description=doc)
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: %(default)s)")
    return p


def add_vocabulary(p: argparse.ArgumentParser, flag: str, name: str, *, purpose: str, lots: str = LOTS) -> None:
    """A word-list flag ``flag`` for the file ``name`` (no fixed default: :func:`vocabulary`)."""
    p.add_argument(flag, metavar="YAML", help=f"{purpose} (default: {lots}/vocabulary/{name} when that file exists, "
                                              f"else candor's packaged {name})")


def add_tokens(p: argparse.ArgumentParser, *, purpose: str = "the token word lists", lots: str = LOTS) -> None:
    """``--tokens``: the token word lists (default: :func:`vocabulary` of ``tokens.yaml``)."""
    add_vocabulary(p, "--tokens", "tokens.yaml", purpose=purpose, lots=lots)


def vocabulary(given: str | None, name: str, *, lots: str | Path) -> Source:
    """The word list a flag names: the flag's file when ``given``, else the bench's or the packaged ``name``
    (:func:`candor_eval.lots.vocabulary.vocabulary_file` of the bench folder ``lots``)."""
    return Path(given) if given else vocabulary_file(name, lots=lots)


def token_rules(tokens: Source, *, params: str | Path) -> TokenRules:
    """The token rules: the word lists of ``tokens`` and ``lots.min_number_digits`` of the params file ``params``."""
    lots = section(LotsParams, "lots", path=params)
    return read_token_rules(tokens, min_number_digits=lots.min_number_digits)


def candidates(params: str | Path) -> list[str]:
    """``identify.candidates`` of the params file ``params``: the candidates scored and valued."""
    return section(IdentifyParams, "identify", path=params).candidates


def given(parser: argparse.ArgumentParser, args: argparse.Namespace, flags: Sequence[str]) -> list[Flag]:
    """``(flag, value)`` of each of ``flags`` whose value in ``args`` is not ``parser``'s default: the flags the
    user gave (one given with its default value is left out; the command means the same either way)."""
    out: list[Flag] = []
    for flag in flags:
        dest = flag.lstrip("-").replace("-", "_")
        value = getattr(args, dest)
        if value is not None and value != parser.get_default(dest):
            out.append((flag, value))
    return out


def command(stage: str, *flags: Flag) -> str:
    """``candor <stage>`` and each ``(flag, value)`` whose value is not None, every word quoted for a POSIX shell
    (:func:`shlex.quote`), so a hint's command runs as printed; a value starting with ``-`` is joined to its flag
    (``--lots=-x``: argparse would take a separate ``-x`` for a flag).

    >>> command("identify", ("--candidate", "p"), ("--lots", Path("my bench")), ("--makes", None))
    "candor identify --candidate p --lots 'my bench'"
    """
    words = ["candor", stage]
    for flag, value in flags:
        if value is not None:
            text = value.as_posix() if isinstance(value, PurePath) else str(value)
            words += [f"{flag}={text}"] if text.startswith("-") else [flag, text]
    return shlex.join(words)
