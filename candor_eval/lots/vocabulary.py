"""The lots track's vocabularies: word lists kept as data files, ``data/lots/vocabulary/*.yaml``.

Five files, each a YAML mapping of named lists, read by the one checked loader
(:func:`candor_eval.common.params.load_yaml`: repeated keys, anchors and non-finite numbers refused)
and validated by its model (``extra='forbid'``; every list required: the file is the lists' one
home). A bad file is an InputError (exit 2) naming the file and the field, e.g.
``data/lots/vocabulary/tokens.yaml.spec_words.3: Input should be a valid string``.

- ``makes.yaml`` (:class:`Makes`): what the local OCR reader can name (identify). A local-ocr
  recording's ``prompt_sha256`` covers ``{"makes": [...]}`` (:func:`candor_eval.lots.ocr_reading.reader_sha256`).
- ``tokens.yaml`` (:class:`TokenWords`): what is never a distinctive model token and what marks a
  hedge (score-lots, value; identify's local OCR reader); with ``lots.min_number_digits`` they make
  :class:`candor_eval.lots.tokens.TokenRules`.
- ``accessory-words.yaml`` (:class:`AccessoryWords`): titles that are not comps (value).
- ``comps-words.yaml`` (:class:`CompsWords`): the category, generic and hedge words a model's
  phrase and family keys leave out (value; :class:`candor_eval.lots.comps.KeyWords`). Its
  ``hedge_words`` are single words never used as keys; ``tokens.yaml``'s ``hedge_markers`` are
  the phrases that decide whether an answer hedges: two lists, two meanings.
- ``category-library.yaml`` (:class:`CategorySuggestions`): the categories the prompt suggests
  when a case has no ``categoryLibrary`` (identify, live mode; :func:`candor_eval.lots.golden.render_library`).

They are data, not params: a stage lists its files as ``deps`` in dvc.yaml, so ``dvc.lock``
records one hash per file instead of every word for every stage that reads them (DVC rewrites
the whole lock after each stage it runs). To try another list, edit the file and run
``dvc exp run`` (an experiment takes the workspace's changes); ``-S`` sets params only.
"""
from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from candor_eval.common.params import load_yaml, validate
from candor_eval.common.unique import repeated
from candor_eval.lots.comps import KeyWords
from candor_eval.lots.golden import CategoryLibrary
from candor_eval.lots.ocr_reading import ReadingRules
from candor_eval.lots.tokens import TokenRules

FOLDER = Path("data/lots/vocabulary")

V = TypeVar("V", bound=BaseModel)


class Makes(BaseModel):
    """``makes.yaml``: manufacturers the local OCR reader can name, spelled as they are to be answered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    makes: list[str] = Field(min_length=1)

    def rules(self, *, tokens: TokenRules) -> ReadingRules:
        return ReadingRules(makes=tuple(self.makes), tokens=tokens)


class TokenWords(BaseModel):
    """``tokens.yaml``: the word lists of :class:`candor_eval.lots.tokens.TokenRules`."""

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


class CompsWords(BaseModel):
    """``comps-words.yaml``: the words comps keys leave out (:class:`candor_eval.lots.comps.KeyWords`).

    ``generic_words`` are the words *besides* the category words that never name a product line;
    a word is in one of the two lists, not both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category_words: list[str]
    generic_words: list[str]
    hedge_words: list[str]

    @model_validator(mode="after")
    def _one_list_each(self) -> CompsWords:
        if both := repeated([*set(self.category_words), *set(self.generic_words)]):
            raise ValueError(f"generic_words lists category words again: {', '.join(both)} (keep each in one list)")
        return self

    def key_words(self) -> KeyWords:
        return KeyWords(category=frozenset(self.category_words), generic=frozenset(self.generic_words),
                        hedge=frozenset(self.hedge_words))


class CategorySuggestions(BaseModel):
    """``category-library.yaml``: the suggested tiers of :class:`candor_eval.lots.golden.CategoryLibrary`
    (``itemType: null``: no suggestion of that tier); every key required."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    functional: tuple[str, ...] | None
    specific: tuple[str, ...] | None
    itemType: tuple[str, ...] | None  # camelCase: the prompt's JSON key

    def library(self) -> CategoryLibrary:
        return CategoryLibrary(functional=self.functional, specific=self.specific, itemType=self.itemType)


def read_vocabulary(model: type[V], path: str | Path) -> V:
    """The vocabulary file ``path`` validated by ``model`` (a problem: InputError naming the file and field)."""
    return validate(model, load_yaml(path), where=Path(path).as_posix())


def read_token_rules(path: str | Path, *, min_number_digits: int) -> TokenRules:
    """The token rules: the word lists of ``path`` (``tokens.yaml``) and params ``lots.min_number_digits``."""
    return read_vocabulary(TokenWords, path).rules(min_number_digits=min_number_digits)


def read_key_words(path: str | Path) -> KeyWords:
    """The words comps keys leave out: ``path`` (``comps-words.yaml``)."""
    return read_vocabulary(CompsWords, path).key_words()


def read_category_library(path: str | Path) -> CategoryLibrary:
    """The suggested categories of a prompt without a case library: ``path`` (``category-library.yaml``)."""
    return read_vocabulary(CategorySuggestions, path).library()
