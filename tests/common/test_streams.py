"""flush_std_streams: each open standard stream flushed; False when a flush fails, the other still tried."""
from __future__ import annotations

import io
import sys

from candor_eval.common.streams import flush_std_streams


class Counting(io.StringIO):
    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.flushes, self.fail = 0, fail

    def flush(self) -> None:
        self.flushes += 1
        if self.fail:
            raise BrokenPipeError("reader gone")


def test_both_streams_are_flushed(monkeypatch):
    out, err = Counting(), Counting()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert flush_std_streams() is True
    assert (out.flushes, err.flushes) == (1, 1)


def test_a_failed_flush_is_false_and_the_other_stream_is_still_flushed(monkeypatch):
    out, err = Counting(fail=True), Counting()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert flush_std_streams() is False
    assert err.flushes == 1


def test_closed_and_unset_streams_are_left_alone(monkeypatch):
    closed = Counting(fail=True)
    closed.close()
    monkeypatch.setattr(sys, "stdout", closed)
    monkeypatch.setattr(sys, "stderr", None)
    assert flush_std_streams() is True
    assert closed.flushes == 0
