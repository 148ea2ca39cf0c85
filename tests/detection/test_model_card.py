"""candor_eval.detection.model_card: a card is read by the checked YAML loader and validated once."""
from __future__ import annotations

import hashlib

import pytest
from pydantic import ValidationError

from candor_eval.common.errors import InputError
from candor_eval.detection.model_card import ModelCard, load_card, verify_cards

CARD = "onnx: m.onnx\nsha256: " + "a" * 64 + "\n"


@pytest.mark.parametrize("extra, message", [
    ("classes: [deer, sheep, deer]\n", r"m.yaml.classes: .*listed more than once: \['deer'\]"),
    ("preprocess: {scale: .nan}\n", r"m.yaml:preprocess.scale: non-finite number"),
    ("onnx: n.onnx\n", r"m.yaml:line 3: key 'onnx' repeated"),
    ("input_sise: [64, 64]\n", r"m.yaml.input_sise: .*did you mean 'input_size'"),
])
def test_ambiguous_or_misspelled_cards_are_refused(tmp_path, extra, message):
    (tmp_path / "m.yaml").write_text(CARD + extra, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_card(tmp_path / "m.yaml")


def test_a_good_card_loads(tmp_path):
    (tmp_path / "m.yaml").write_text(CARD + "classes: [deer, sheep]\n", encoding="utf-8")
    assert load_card(tmp_path / "m.yaml").classes == ["deer", "sheep"]


@pytest.mark.parametrize("stem", ["my model", "x;touch PWNED", "$(id)", ".hidden", "-rf"])
def test_a_card_whose_file_name_is_not_a_model_name_is_a_problem(tmp_path, stem):
    """The card's file name is the model's name: a path and a word of dvc.yaml's commands."""
    (tmp_path / "m.onnx").write_bytes(b"onnx")
    card = f"onnx: m.onnx\nsha256: {hashlib.sha256(b'onnx').hexdigest()}\n"
    (tmp_path / "good-1.yaml").write_text(card, encoding="utf-8")
    (tmp_path / f"{stem}.yaml").write_text(card, encoding="utf-8")
    cards, problems = verify_cards(tmp_path)
    assert list(cards) == ["good-1"]
    assert [(p.where, p.what) for p in problems] == [((tmp_path / f"{stem}.yaml").as_posix(),
                                                      "the card's file name is not a model name")]
    assert "one path segment" in (problems[0].expected or "") and problems[0].got == repr(stem)


@pytest.mark.parametrize("key, value", [("input_size", [True, 320]), ("input_size", ["320", 320]),
                                        ("preprocess", {"scale": True}), ("preprocess", {"scale": "255"})])
def test_a_cards_numbers_are_never_bools_or_text(tmp_path, key, value):
    """YAML ``true`` is not 1 and ``"255"`` is not 255: a card's numbers are strict, as params are."""
    import yaml

    card = {"onnx": "m.onnx", "sha256": "0" * 64, key: value}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(card))
    with pytest.raises(InputError, match=f"m.yaml.{key}"):
        load_card(tmp_path / "m.yaml")


@pytest.mark.parametrize("sessions", [["s1", "s1"], ["s1", " "], [""]])
def test_training_sessions_are_named_once(sessions):
    with pytest.raises(ValidationError, match="training session"):
        ModelCard(onnx="m.onnx", sha256="0" * 64, training_sessions=sessions)
