"""The call-rate limiter: even spacing on a fake clock, unlimited, and real threads sharing it."""
from __future__ import annotations

import threading
import time

import pytest

from candor_eval.lots.ratelimit import RateLimiter


class Clock:
    """A fake monotonic clock that sleeping advances."""

    def __init__(self) -> None:
        self.t, self.waits = 100.0, []

    def sleep(self, s: float) -> None:
        self.waits.append(round(s, 9))
        self.t += s


@pytest.mark.parametrize("per_minute, gaps, waits", [
    (60, [0, 0, 0], [1.0, 1.0]),            # back to back: one call a second
    (60, [0, 0.4, 5.0], [0.6]),             # a late caller starts at once (no credit saved up)
    (120, [0, 0.5, 0.5], []),               # already spaced: no wait
    (None, [0, 0, 0], []),                  # unlimited
])
def test_waits(per_minute, gaps, waits):
    clock = Clock()
    lim = RateLimiter(per_minute, clock=lambda: clock.t, sleep=clock.sleep)
    for gap in gaps:
        clock.t += gap
        lim.wait()
    assert clock.waits == waits


def test_threads_share_one_grid():
    """Eight threads at the same instant get the eight slots of one grid, each once."""
    waits: list[float] = []
    lock = threading.Lock()

    def sleep(s: float) -> None:
        with lock:
            waits.append(round(s, 9))

    lim = RateLimiter(1200, clock=lambda: 5.0, sleep=sleep)        # 50 ms apart, time standing still
    threads = [threading.Thread(target=lim.wait) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(waits) == [round(0.05 * k, 9) for k in range(1, 8)]


def test_real_sleeps_space_the_starts():
    lim = RateLimiter(1200)
    t0 = time.monotonic()
    for _ in range(5):
        lim.wait()
    assert time.monotonic() - t0 >= 0.2
