"""candor_eval/lots/vocabulary.py: the word-list files, validated at the boundary (a bad file: exit 2 naming the file
and the field)."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.comps import KeyWords
from candor_eval.lots.golden import CategoryLibrary
from candor_eval.lots.tokens import TokenRules
from candor_eval.lots.vocabulary import (
    AccessoryWords,
    CategorySuggestions,
    CompsWords,
    Makes,
    TokenWords,
    read_category_library,
    read_key_words,
    read_token_rules,
    read_vocabulary,
)
from tests.conftest import VOCABULARY

TOKENS = "spec_words: [gb]\nform_factors: [sff]\ngeneration_prefixes: [gen]\nhedge_markers: [e.g.]\n"


@pytest.mark.parametrize("model, text, expected", [
    (Makes, "makes: [Dell, Tripp Lite]\n", Makes(makes=["Dell", "Tripp Lite"])),
    (AccessoryWords, "accessory_words:\n- for parts\n- '?'\n", AccessoryWords(accessory_words=("for parts", "?"))),
    (TokenWords, TOKENS, TokenWords(spec_words=["gb"], form_factors=["sff"], generation_prefixes=["gen"],
                                    hedge_markers=["e.g."])),
])
def test_reads_a_good_file(tmp_path: Path, model, text, expected):
    f = tmp_path / "v.yaml"
    f.write_text(text)
    assert read_vocabulary(model, f) == expected


def test_token_rules_take_min_number_digits_from_the_caller(tmp_path: Path):
    f = tmp_path / "tokens.yaml"
    f.write_text(TOKENS)
    assert read_token_rules(f, min_number_digits=4) == TokenRules(
        spec_words=("gb",), form_factors=("sff",), generation_prefixes=("gen",), min_number_digits=4,
        hedge_markers=("e.g.",))


@pytest.mark.parametrize("model, text, needles", [
    (Makes, "makes: []\n", ["makes.yaml.makes", "at least 1 item"]),
    (Makes, "makes: Dell\n", ["makes.yaml.makes", "valid list"]),
    (Makes, "make: [Dell]\n", ["makes.yaml.make", "did you mean 'makes'"]),
    (Makes, "makes: [Dell]\nmakes: [HP]\n", ["makes.yaml:line 2", "'makes' repeated"]),
    (AccessoryWords, "accessory_words: [card, 3]\n", ["accessory-words.yaml.accessory_words.1", "valid string"]),
    (TokenWords, "spec_words: [gb]\n", ["tokens.yaml.form_factors", "Field required"]),
    (TokenWords, "- gb\n", ["tokens.yaml", "valid dictionary"]),
    (CompsWords, "category_words: [kit]\ngeneric_words: [pro, kit]\nhedge_words: [or]\n",
     ["comps-words.yaml", "generic_words lists category words again: kit"]),
    (CompsWords, "category_words: [kit]\ngeneric_words: [pro]\n", ["comps-words.yaml.hedge_words", "Field required"]),
    (CategorySuggestions, "functional: [Tools]\nspecific: null\n", ["category-library.yaml.itemType",
                                                                      "Field required"]),
    (CategorySuggestions, "functional: [Tools]\nspecific: null\nitemType: null\nitem_type: [x]\n",
     ["category-library.yaml.item_type", "Extra inputs"]),
])
def test_a_bad_file_names_the_file_and_the_field(tmp_path: Path, model, text, needles):
    name = {Makes: "makes.yaml", AccessoryWords: "accessory-words.yaml", TokenWords: "tokens.yaml",
            CompsWords: "comps-words.yaml", CategorySuggestions: "category-library.yaml"}[model]
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(InputError) as err:
        read_vocabulary(model, f)
    for needle in needles:
        assert needle in str(err.value), str(err.value)


def test_a_missing_file_is_an_input_error(tmp_path: Path):
    with pytest.raises(InputError, match="tokens.yaml"):
        read_vocabulary(TokenWords, tmp_path / "tokens.yaml")


@pytest.mark.parametrize("model, name", [(Makes, "makes.yaml"), (TokenWords, "tokens.yaml"),
                                         (AccessoryWords, "accessory-words.yaml"), (CompsWords, "comps-words.yaml")])
def test_the_committed_files_validate_without_repeats(model, name):
    doc = read_vocabulary(model, VOCABULARY / name).model_dump()
    for key, words in doc.items():
        assert words and len(set(words)) == len(words), f"{name}:{key} lists a word twice"


def test_comps_words_make_the_key_words(tmp_path: Path):
    """``generic_words`` are the words besides the category words; each list becomes a frozenset."""
    f = tmp_path / "comps-words.yaml"
    f.write_text("category_words: [kit, drill]\ngeneric_words: [pro]\nhedge_words: [e.g., or]\n")
    assert read_key_words(f) == KeyWords(category=frozenset({"kit", "drill"}), generic=frozenset({"pro"}),
                                         hedge=frozenset({"e.g.", "or"}))


def test_category_suggestions_keep_a_null_tier_null(tmp_path: Path):
    """``itemType: null`` suggests no tier; the library a provider is told keeps it None, not []."""
    f = tmp_path / "category-library.yaml"
    f.write_text("functional: [Tools]\nspecific: [Power Tools]\nitemType: null\n")
    assert read_category_library(f) == CategoryLibrary(functional=("Tools",), specific=("Power Tools",), itemType=None)


def test_the_committed_category_library_validates():
    lib = read_category_library(VOCABULARY / "category-library.yaml")
    assert lib.functional and lib.specific and len(set(lib.functional)) == len(lib.functional)


def test_hedge_words_and_hedge_markers_are_two_lists():
    """Two meanings kept apart: single words never used as keys, and the phrases that decide a hedge."""
    words = read_key_words(VOCABULARY / "comps-words.yaml").hedge
    markers = set(read_vocabulary(TokenWords, VOCABULARY / "tokens.yaml").hedge_markers)
    assert all(" " not in w for w in words) and any(" " in m for m in markers) and words != markers
