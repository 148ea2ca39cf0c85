"""Whole-refresh timings: the format, every bad row named."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.refresh import parse_refresh, read_refresh

HEAD = "refresh,model,host,scope,ms\n"


def rows(*ms: object, scope: str = "capture-to-handoff", host: str = "edge-1") -> str:
    return HEAD + "".join(f"r{i},demo-v2,{host},{scope},{m}\n" for i, m in enumerate(ms))


def test_a_file_reads_to_its_times_in_order():
    t = parse_refresh(rows(1200, 850.5, 0), where="t.csv")
    assert (t.model, t.host, t.ms) == ("demo-v2", "edge-1", (1200.0, 850.5, 0.0))


@pytest.mark.parametrize("text, what", [
    (rows(100, scope="model-call"), "not a whole-refresh timing"),
    (rows(100, "-5"), "not a time"),
    (rows(100, "nan"), "not a time"),
    (rows(100, "1e999"), "not a time"),
    (HEAD + "r,demo-v2,a,capture-to-handoff,1\nr,demo-v2,a,capture-to-handoff,2\n", "repeated"),
    (HEAD + "r1,demo-v2,a,capture-to-handoff,1\nr2,demo-v2,b,capture-to-handoff,2\n", "host empty or not"),
    (HEAD, "no refreshes"),
    ("refresh,ms\nr1,5\n", "missing column"),
])
def test_bad_files_name_the_row_and_what_was_expected(text, what):
    with pytest.raises(InputError) as err:
        parse_refresh(text, where="timings.csv")
    assert what in err.value.message and "timings.csv" in err.value.message


def test_a_device_is_refused_not_read(tmp_path):
    link = tmp_path / "t.csv"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match="not a regular file"):
        read_refresh(link)
