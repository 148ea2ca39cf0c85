"""Tests for candor_eval/detection/frames.py: the frames.csv reader."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.frames import check_sessions_within_splits, read_frames


def test_read_frames_validation(tmp_path):
    p = tmp_path / "frames.csv"
    p.write_text("frame,session,zoom,split\nb,s1,1,test\na,s1,0.5,dev\n")
    info = read_frames(p)
    assert info.frames == ("a", "b") and info.split == ("dev", "test") and info.zoom == ("0.5", "1")
    p.write_text("frame,session,zoom,split\na,s1,1,train\na,s1,1,dev\n")
    with pytest.raises(InputError) as err:
        read_frames(p)
    assert "row 2.split" in err.value.message and "row 3.frame" in err.value.message
    p.write_text("frame,zoom\na,1\n")
    with pytest.raises(InputError, match="missing column"):
        read_frames(p)


def test_a_session_lies_in_one_split(tmp_path):
    """A session with dev and test frames is named with its rows per split; the empty session is none."""
    p = tmp_path / "frames.csv"
    p.write_text("frame,session,zoom,split\nb,s1,1,test\na,s1,1,dev\nc,s2,1,test\nd,,1,dev\ne,,1,test\nf,s1,1,test\n")
    info = read_frames(p)
    assert info.rows == (3, 2, 4, 5, 6, 7)
    with pytest.raises(InputError) as err:
        check_sessions_within_splits(info, where="frames.csv")
    assert err.value.message.splitlines()[0] == \
        "frames.csv: session 's1' lies in two splits: dev row 3 (a); test row 2 (b), row 7 (f)"
    p.write_text("frame,session,zoom,split\na,s1,1,dev\nb,s2,1,test\n")
    check_sessions_within_splits(read_frames(p), where="frames.csv")
