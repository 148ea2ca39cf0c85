"""The lots stages' CLI glue (:mod:`stages.cli_lots`): ``--params`` and the word-list flags with their defaults (the
bench's file, else the packaged one; a flag given wins), the token rules from a tokens file and
``lots.min_number_digits``, the candidates from ``identify.candidates``, and the commands hints print."""
from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.vocabulary import packaged
from candor_eval.stages.cli_lots import (
    add_tokens,
    add_vocabulary,
    candidates,
    command,
    given,
    stage_parser,
    token_rules,
    vocabulary,
)

TOKENS = "spec_words: [gb]\nform_factors: [sff]\ngeneration_prefixes: []\nhedge_markers: [e.g.]\n"


def test_the_parser_has_params_and_tokens_and_help_states_the_default_rule(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")                               # argparse wraps at hyphens otherwise
    p = stage_parser("candor x", "doc")
    add_tokens(p, purpose="the words")
    args = p.parse_args([])
    assert (args.params, args.tokens) == ("params.yaml", None)         # no fixed path: vocabulary() decides
    assert p.parse_args(["--params", "q.yaml", "--tokens", "t.yaml"]).tokens == "t.yaml"
    text = " ".join(p.format_help().split())              # wrapped at 100 columns, whatever COLUMNS says
    assert ("the words (default: <lots>/vocabulary/tokens.yaml when that file exists, else candor's packaged "
            "tokens.yaml)") in text


def test_a_word_list_flag_names_its_bench_folder_in_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    p = stage_parser("candor x", "doc")
    add_vocabulary(p, "--comps-words", "comps-words.yaml", purpose="words", lots="<folder of --lots>")
    assert p.parse_args(["--comps-words", "w.yaml"]).comps_words == "w.yaml"
    assert "<folder of --lots>/vocabulary/comps-words.yaml when that file exists" in " ".join(p.format_help().split())


def test_vocabulary_a_flag_wins_then_the_bench_then_the_package(tmp_path: Path):
    bench = tmp_path / "bench"
    (bench / "vocabulary").mkdir(parents=True)
    (bench / "vocabulary" / "tokens.yaml").write_text(TOKENS)
    assert vocabulary("my words.yaml", "tokens.yaml", lots=bench) == Path("my words.yaml")
    assert vocabulary(None, "tokens.yaml", lots=bench) == bench / "vocabulary" / "tokens.yaml"
    assert vocabulary(None, "tokens.yaml", lots=tmp_path) == packaged("tokens.yaml")


def test_given_keeps_the_flags_that_differ_from_their_default():
    p = stage_parser("candor x", "doc")
    p.add_argument("--lots", default="data/lots")
    add_tokens(p)
    args = p.parse_args(["--lots", "data/lots", "--params", "my params.yaml", "--tokens", "t.yaml"])
    assert given(p, args, ("--params", "--lots", "--tokens")) == [("--params", "my params.yaml"),
                                                                   ("--tokens", "t.yaml")]
    assert given(p, p.parse_args([]), ("--params", "--lots", "--tokens")) == []


@pytest.mark.parametrize("value", ["my bench/lots", "it's here", "a$b `c`", "-dash", ""])
def test_a_command_quotes_every_word_and_parses_back(value):
    cmd = command("x", ("--lots", value), ("--tokens", None), ("--params", Path("p.yaml")))
    argv = shlex.split(cmd)
    lots = [f"--lots={value}"] if value.startswith("-") else ["--lots", value]     # else argparse takes it for a flag
    assert argv == ["candor", "x", *lots, "--params", "p.yaml"]
    p = stage_parser("candor x", "doc")
    p.add_argument("--lots")
    assert p.parse_args(argv[2:]).lots == value


def test_token_rules_take_min_number_digits_from_the_params_file(tmp_path: Path):
    (tmp_path / "tokens.yaml").write_text(TOKENS)
    (tmp_path / "params.yaml").write_text("lots:\n  min_number_digits: 5\n")
    rules = token_rules(tmp_path / "tokens.yaml", params=tmp_path / "params.yaml")
    assert rules.min_number_digits == 5 and rules.spec_words == ("gb",)


def test_candidates_are_identify_candidates(tmp_path: Path):
    (tmp_path / "params.yaml").write_text("identify:\n  candidates: [b, a]\n")
    assert candidates(tmp_path / "params.yaml") == ["b", "a"]
    (tmp_path / "params.yaml").write_text("identify:\n  candidates: [a, a]\n")
    with pytest.raises(InputError, match="listed more than once: a"):
        candidates(tmp_path / "params.yaml")
