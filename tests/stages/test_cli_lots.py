"""The lots stages' CLI glue (:mod:`stages.cli_lots`): ``--params`` and ``--tokens`` with their defaults, the token
rules from a tokens file and ``lots.min_number_digits``, the candidates from ``identify.candidates``."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.stages.cli_lots import add_tokens, candidates, stage_parser, token_rules

TOKENS = "spec_words: [gb]\nform_factors: [sff]\ngeneration_prefixes: []\nhedge_markers: [e.g.]\n"


def test_the_parser_has_params_and_tokens_with_their_defaults():
    p = stage_parser("candor x", "doc")
    add_tokens(p, purpose="the words")
    args = p.parse_args([])
    assert (args.params, args.tokens) == ("params.yaml", "data/lots/vocabulary/tokens.yaml")
    assert p.parse_args(["--params", "q.yaml", "--tokens", "t.yaml"]).tokens == "t.yaml"
    assert "the words (default: data/lots/vocabulary/tokens.yaml)" in p.format_help()


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
