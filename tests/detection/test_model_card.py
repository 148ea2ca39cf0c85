"""candor_eval.detection.model_card: a card is read by the checked YAML loader and validated once."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.model_card import load_card

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
