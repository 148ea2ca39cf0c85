"""candor_eval/lots/vocabulary.py: the word-list files, validated at the boundary (a bad file: exit 2 naming the file
and the field), found in the bench's vocabulary/ folder or else among candor's packaged defaults."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.comps import KeyWords
from candor_eval.lots.golden import CategoryLibrary
from candor_eval.lots.tokens import TokenRules
from candor_eval.lots.vocabulary import (
    FILES,
    AccessoryWords,
    CategorySuggestions,
    CompsWords,
    Makes,
    TokenWords,
    packaged,
    read_category_library,
    read_key_words,
    read_token_rules,
    read_vocabulary,
    vocabulary_file,
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


MODELS = {"makes.yaml": Makes, "tokens.yaml": TokenWords, "accessory-words.yaml": AccessoryWords,
          "comps-words.yaml": CompsWords, "category-library.yaml": CategorySuggestions}


@pytest.mark.parametrize("name", FILES)
def test_the_package_ships_each_committed_word_list(name):
    """The packaged default is found (importlib.resources) and is the committed file, byte for byte."""
    assert packaged(name).is_file() and packaged(name).read_bytes() == (VOCABULARY / name).read_bytes()
    assert read_vocabulary(MODELS[name], packaged(name)) == read_vocabulary(MODELS[name], VOCABULARY / name)


def test_packaged_refuses_a_name_it_does_not_ship():
    with pytest.raises(ValueError, match="no packaged word list 'make.yaml'"):
        packaged("make.yaml")


def test_a_bench_file_is_used_when_it_exists_else_the_packaged_default(tmp_path: Path):
    """File by file: a bench with only its own makes.yaml takes the packaged tokens.yaml."""
    bench = tmp_path / "my bench"
    (bench / "vocabulary").mkdir(parents=True)
    (bench / "vocabulary" / "makes.yaml").write_text("makes: [Zeiss]\n")
    assert vocabulary_file("makes.yaml", lots=bench) == bench / "vocabulary" / "makes.yaml"
    assert read_vocabulary(Makes, vocabulary_file("makes.yaml", lots=bench)) == Makes(makes=["Zeiss"])
    assert vocabulary_file("tokens.yaml", lots=bench) == packaged("tokens.yaml")
    assert vocabulary_file("makes.yaml", lots=tmp_path / "no vocabulary here") == packaged("makes.yaml")
    assert vocabulary_file("makes.yaml", lots=str(bench)) == bench / "vocabulary" / "makes.yaml"


def test_a_bench_entry_that_is_not_a_file_is_not_skipped(tmp_path: Path):
    """A vocabulary/makes.yaml folder is an error naming it, not a silent switch to the packaged list."""
    (tmp_path / "vocabulary" / "makes.yaml").mkdir(parents=True)
    with pytest.raises(InputError, match="vocabulary/makes.yaml: is a folder"):
        read_vocabulary(Makes, vocabulary_file("makes.yaml", lots=tmp_path))


def test_a_word_list_inside_an_archive_is_read(tmp_path: Path):
    """A Traversable that is not a path (a package imported from a zip) is read through a temporary copy;
    a problem in it names the packaged file."""
    archive = tmp_path / "pkg.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("vocabulary/makes.yaml", "makes: [Dell]\n")
        z.writestr("vocabulary/tokens.yaml", "spec_words: gb\n")
    root = zipfile.Path(archive)
    assert read_vocabulary(Makes, root / "vocabulary" / "makes.yaml") == Makes(makes=["Dell"])
    with pytest.raises(InputError, match="candor's packaged tokens.yaml.spec_words"):
        read_vocabulary(TokenWords, root / "vocabulary" / "tokens.yaml")
