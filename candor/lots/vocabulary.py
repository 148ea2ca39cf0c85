"""The lots track's vocabularies: word lists kept as data files, ``data/lots/vocabulary/*.yaml``.

Three files, each a YAML mapping of named lists, read by the one checked loader
(:func:`candor.common.params.load_yaml`: repeated keys, anchors and non-finite numbers refused)
and validated by its model (``extra='forbid'``; every list required: the file is the lists' one
home). A bad file is an InputError (exit 2) naming the file and the field, e.g.
``data/lots/vocabulary/tokens.yaml.spec_words.3: Input should be a valid string``.

- ``makes.yaml`` (:class:`Makes`): what the local OCR reader can name (identify). A local-ocr
  recording's ``prompt_sha256`` covers ``{"makes": [...]}`` (:func:`candor.lots.ocr_reading.reader_sha256`).
- ``tokens.yaml`` (:class:`TokenWords`): what is never a distinctive model token and what marks a
  hedge (score-lots, value; identify's local OCR reader); with ``lots.min_number_digits`` they make
  :class:`candor.lots.tokens.TokenRules`.
- ``accessory-words.yaml`` (:class:`AccessoryWords`): titles that are not comps (value).

They are data, not params: a stage lists its files as ``deps`` in dvc.yaml, so ``dvc.lock``
records one hash per file instead of every word for every stage that reads them (DVC rewrites
the whole lock after each stage it runs). To try another list, edit the file and run
``dvc exp run`` (an experiment takes the workspace's changes); ``-S`` sets params only.
"""
from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from candor.common.params import load_yaml, validate
from candor.lots.ocr_reading import ReadingRules
from candor.lots.tokens import TokenRules

FOLDER = Path("data/lots/vocabulary")

V = TypeVar("V", bound=BaseModel)


class Makes(BaseModel):
    """``makes.yaml``: manufacturers the local OCR reader can name, spelled as they are to be answered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    makes: list[str] = Field(min_length=1)

    def rules(self, *, tokens: TokenRules) -> ReadingRules:
        return ReadingRules(makes=tuple(self.makes), tokens=tokens)


class TokenWords(BaseModel):
    """``tokens.yaml``: the word lists of :class:`candor.lots.tokens.TokenRules`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec_words: list[str]
    form_factors: list[str]
    generation_prefixes: list[str]
    hedge_markers: list[str]

    def rules(self, *, min_number_digits: int) -> TokenRules:
        return TokenRules(spec_words=tuple(self.spec_words), form_factors=tuple(self.form_factors),
                          generation_prefixes=tuple(self.generation_prefixes),
                          min_number_digits=min_number_digits, hedge_markers=tuple(self.hedge_markers))


class AccessoryWords(BaseModel):
    """``accessory-words.yaml``: a title containing any of these (words or phrases) is not a comp."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    accessory_words: tuple[str, ...]


def read_vocabulary(model: type[V], path: str | Path) -> V:
    """The vocabulary file ``path`` validated by ``model`` (a problem: InputError naming the file and field)."""
    return validate(model, load_yaml(path), where=Path(path).as_posix())


def read_token_rules(path: str | Path, *, min_number_digits: int) -> TokenRules:
    """The token rules: the word lists of ``path`` (``tokens.yaml``) and params ``lots.min_number_digits``."""
    return read_vocabulary(TokenWords, path).rules(min_number_digits=min_number_digits)
