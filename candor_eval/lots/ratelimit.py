"""A call-rate limiter shared by the threads of a live run: call starts at least ``60 / limit`` s apart.

``RateLimiter(calls_per_minute)`` hands out start times on an even grid: the first call starts
at once, each later one at ``max(now, previous start + 60 / calls_per_minute)``. This is a
token bucket of capacity one: no burst, so a provider that counts requests over windows
shorter than a minute (as most do) sees an even rate and no 429 from bunching. Every HTTP
attempt takes a slot, retries included, because every attempt counts against the provider's
allowance. ``None`` means unlimited (:meth:`wait` returns at once).

Thread-safe: a slot is reserved under a lock and waited for outside it, so threads wait in
parallel for their own slots.

>>> t = [0.0]; waits = []
>>> lim = RateLimiter(120, clock=lambda: t[0], sleep=waits.append)
>>> for _ in range(3): lim.wait()
>>> waits
[0.5, 1.0]
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    """Even spacing of call starts (module docstring)."""

    def __init__(self, calls_per_minute: float | None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.interval = 0.0 if calls_per_minute is None else 60.0 / calls_per_minute
        self._clock, self._sleep = clock, sleep
        self._next: float | None = None
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Block until this caller's slot; return at once when unlimited."""
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            start = now if self._next is None else max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self._sleep(start - now)
