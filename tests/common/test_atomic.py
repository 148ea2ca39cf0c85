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


def test_pretty_json_and_the_list_writer_are_json_dumps_byte_for_byte():
    import io
    import json
    import random

    from candor.common.atomic import JsonListWriter, dumps_json, pretty_json
    rng = random.Random(4)
    leaves = [0, -1, 2**70, 0.1, 1e-7, 1e22, -0.0, "a\"b\n\\", "é✓", True, False, None, [], {}]

    def value(depth=0):
        r = rng.random()
        if depth > 3 or r < 0.4:
            return rng.choice(leaves)
        if r < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randint(0, 4))}

    for _ in range(500):
        items = [value() for _ in range(rng.randint(0, 6))]
        assert pretty_json(items) == json.dumps(items, indent=2, ensure_ascii=False, allow_nan=False)
        buf = io.StringIO()
        writer = JsonListWriter(buf)
        cut = rng.randint(0, len(items))
        for part in (items[:cut], [], items[cut:]):
            writer.extend(part)
        writer.close()
        assert buf.getvalue() == dumps_json(items)
    with pytest.raises(ValueError):
        pretty_json([float("nan")])
