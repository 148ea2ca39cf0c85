"""candor.common.atomic: where a write may not go is an input error, and nothing is left behind."""
from __future__ import annotations

import pytest

from candor.common.atomic import write_text
from candor.common.errors import InputError


def test_a_folder_at_the_output_path_is_named(tmp_path):
    (tmp_path / "out.csv").mkdir()
    with pytest.raises(InputError, match="out.csv: is a folder"):
        write_text(tmp_path / "out.csv", "x")
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_a_file_where_a_parent_folder_should_be_is_named(tmp_path):
    (tmp_path / "a").write_text("x")
    with pytest.raises(InputError, match="a: is a file"):
        write_text(tmp_path / "a" / "b" / "out.csv", "x")
    assert (tmp_path / "a").read_text() == "x"
