"""Tests for candor_eval/detection/frames.py: the frames.csv reader."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.frames import read_frames


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
