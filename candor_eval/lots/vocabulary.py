"""The lots track's vocabularies: word lists kept as data files, ``<lots>/vocabulary/*.yaml``.

Five files, each a YAML mapping of named lists, read by the one checked loader
(:func:`candor_eval.common.params.load_yaml`: repeated keys, anchors and non-finite numbers refused)
and validated by its model (``extra='forbid'``; every list required: the file is the lists' one
home). A bad file is an InputError (exit 2) naming the file and the field, e.g.
``data/lots/vocabulary/tokens.yaml.spec_words.3: Input should be a valid string``.

Where a stage finds each file (:func:`vocabulary_file`): ``<lots>/vocabulary/<file>`` when that file
exists, ``<lots>`` being the bench folder the stage was given (``--lots``); else candor's packaged
default, the same five files shipped in the package (:func:`packaged`, read with
:mod:`importlib.resources`). A stage's flag naming the file always wins. What a file says is what
counts, not where it lies: a local-ocr recording's digest covers the makes list read, so the
packaged ``makes.yaml`` and a copy of it in a bench give the same digest.

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

from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from candor_eval.common.params import load_yaml, validate
from candor_eval.common.unique import repeated
from candor_eval.lots.comps import KeyWords
from candor_eval.lots.golden import CategoryLibrary
from candor_eval.lots.ocr_reading import ReadingRules
from candor_eval.lots.tokens import TokenRules

PACKAGE = "candor_eval"
FILES = ("makes.yaml", "tokens.yaml", "accessory-words.yaml", "comps-words.yaml", "category-library.yaml")

# A word-list file: a path (a bench's file, a flag's) or one of candor's packaged defaults
Source = str | Path | Traversable

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


def packaged(name: str) -> Traversable:
    """candor's default word list ``name`` (one of :data:`FILES`): ``importlib.resources.files("candor_eval")
    / "vocabulary" / name`` (in a checkout, ``candor_eval/vocabulary`` links to ``data/lots/vocabulary``)."""
    if name not in FILES:
        raise ValueError(f"no packaged word list {name!r} (one of {', '.join(FILES)})")
    return files(PACKAGE) / "vocabulary" / name


def vocabulary_file(name: str, *, lots: str | Path) -> Source:
    """The word list ``name`` of the bench folder ``lots``: ``<lots>/vocabulary/<name>`` when it exists,
    else :func:`packaged` ``(name)`` (the demo's ``data/lots`` has its own: ``data/lots/vocabulary/makes.yaml``).
    A ``<lots>/vocabulary/<name>`` that exists but is not a readable file is not skipped: reading it fails,
    naming it."""
    own = Path(lots) / "vocabulary" / name
    return own if own.exists() else packaged(name)


def read_vocabulary(model: type[V], path: Source) -> V:
    """The vocabulary file ``path`` validated by ``model`` (a problem: InputError naming the file and field).
    A packaged file inside an archive is read from a temporary copy (:func:`importlib.resources.as_file`)."""
    if isinstance(path, str | Path):
        return validate(model, load_yaml(path), where=Path(path).as_posix())
    with as_file(path) as real:
        return validate(model, load_yaml(real), where=f"candor's packaged {path.name}")


def read_token_rules(path: Source, *, min_number_digits: int) -> TokenRules:
    """The token rules: the word lists of ``path`` (``tokens.yaml``) and params ``lots.min_number_digits``."""
    return read_vocabulary(TokenWords, path).rules(min_number_digits=min_number_digits)


def read_key_words(path: Source) -> KeyWords:
    """The words comps keys leave out: ``path`` (``comps-words.yaml``)."""
    return read_vocabulary(CompsWords, path).key_words()


def read_category_library(path: Source) -> CategoryLibrary:
    """The suggested categories of a prompt without a case library: ``path`` (``category-library.yaml``)."""
    return read_vocabulary(CategorySuggestions, path).library()
