"""When the volume had reads in hand, second by second: the storage's own rate, apart from its readers'.

A warm-up's end-to-end rate (bytes over the time from its first unit's start to its last unit's end)
is what the product achieved, orchestration included; on a busy machine the local harness's Python
(moto, the handlers) starves and the volume sits idle between chunks, so that rate falls far below
the emulated ceiling while the volume itself served every read it was given at its profile's speed.
To tell the two apart the daemon records, per wall-clock second (epoch), the bytes its reads served
and how long at least one read was in its hands (the union of the reads' intervals, from a handler's
start to its end, so concurrent reads count once). The findings sum the seconds of the warm-up's
window (``findings.emulation``): bytes ÷ busy seconds is the volume's rate while it was asked, and
busy ÷ window how much of the warm-up the volume was asked at all, and the reads in hand per busy second
(the integral of their count over time ÷ busy seconds) how many readers kept it busy: a cold reader alone
is latency-bound, far below a throughput ceiling.

Takes a clock so tests run on a fake one; thread-safe.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

SECONDS_KEPT = 6 * 3600  # a run's longest local wait (runner: 6 h); older seconds are dropped


class ServedWork:
    """Reads in hand and, per epoch second, ``[bytes served, seconds busy, read-seconds in hand]``."""

    def __init__(self, clock: Callable[[], float] = time.time, seconds_kept: int = SECONDS_KEPT) -> None:
        self._clock, self.seconds_kept = clock, seconds_kept
        self._mutex = threading.Lock()
        self._in_hand = 0
        self._busy_since = self._since = 0.0  # busy since; the in-hand count last changed at
        self._seconds: dict[int, list[float]] = {}

    def begin(self) -> None:
        """A read is taken."""
        with self._mutex:
            now = self._clock()
            if self._in_hand == 0:
                self._busy_since = now
            else:
                self._add(self._since, now, 2, self._in_hand)
            self._since = now
            self._in_hand += 1

    def end(self, nbytes: int) -> None:
        """A read is served (``nbytes`` returned; 0 for one that failed)."""
        with self._mutex:
            now = self._clock()
            if self._in_hand:
                self._add(self._since, now, 2, self._in_hand)
            self._since = now
            self._in_hand = max(0, self._in_hand - 1)
            if nbytes > 0:
                self._bucket(int(math.floor(now)))[0] += nbytes
            if self._in_hand == 0:
                self._add(self._busy_since, now, 1, 1)

    def _bucket(self, second: int) -> list[float]:
        bucket = self._seconds.get(second)
        if bucket is None:
            bucket = self._seconds[second] = [0, 0.0, 0.0]
            if len(self._seconds) > self.seconds_kept:
                del self._seconds[min(self._seconds)]
        return bucket

    def _add(self, start: float, end: float, column: int, weight: float) -> None:
        """Spread ``[start, end]`` x ``weight`` over the seconds it covers, in ``column``."""
        second = int(math.floor(start))
        while start < end:
            edge = min(end, second + 1.0)
            self._bucket(second)[column] += (edge - start) * weight
            start, second = edge, second + 1

    def seconds(self) -> list[list[float]]:
        """``[[epoch second, bytes, busy seconds, read-seconds in hand], ...]`` in time order; reads still in hand
        count up to now."""
        with self._mutex:
            if self._in_hand:  # counted up to now; the rest when they end
                now = self._clock()
                self._add(self._busy_since, now, 1, 1)
                self._add(self._since, now, 2, self._in_hand)
                self._busy_since = self._since = now
            return [[s, int(b[0]), round(b[1], 6), round(b[2], 6)] for s, b in sorted(self._seconds.items())]
