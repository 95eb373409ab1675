"""When the volume had reads in hand, second by second: the storage's own rate, apart from its readers'.

A warm-up's end-to-end rate (bytes over the time from its first unit's start to its last unit's end)
is what the product achieved, orchestration included; on a busy machine the local harness's Python
(moto, the handlers) starves and the volume sits idle between chunks, so that rate falls far below
the emulated ceiling while the volume itself served every read it was given at its profile's speed.
To tell the two apart the daemon records, per wall-clock second (epoch), the bytes its reads served
and how long at least one read was in its hands (the union of the reads' intervals, from a handler's
start to its end, so concurrent reads count once). The findings sum the seconds of the warm-up's
window (``findings.emulation``): bytes ÷ busy seconds is the volume's rate while it was asked, and
busy ÷ window how much of the warm-up the volume was asked at all.

Takes a clock so tests run on a fake one; thread-safe.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

SECONDS_KEPT = 6 * 3600  # a run's longest local wait (runner: 6 h); older seconds are dropped


class ServedWork:
    """Reads in hand and, per epoch second, ``[bytes served, seconds busy]``."""

    def __init__(self, clock: Callable[[], float] = time.time, seconds_kept: int = SECONDS_KEPT) -> None:
        self._clock, self.seconds_kept = clock, seconds_kept
        self._mutex = threading.Lock()
        self._in_hand = 0
        self._busy_since = 0.0
        self._seconds: dict[int, list[float]] = {}

    def begin(self) -> None:
        """A read is taken."""
        with self._mutex:
            if self._in_hand == 0:
                self._busy_since = self._clock()
            self._in_hand += 1

    def end(self, nbytes: int) -> None:
        """A read is served (``nbytes`` returned; 0 for one that failed)."""
        with self._mutex:
            now = self._clock()
            self._in_hand = max(0, self._in_hand - 1)
            if nbytes > 0:
                self._bucket(int(math.floor(now)))[0] += nbytes
            if self._in_hand == 0:
                self._add_busy(self._busy_since, now)

    def _bucket(self, second: int) -> list[float]:
        bucket = self._seconds.get(second)
        if bucket is None:
            bucket = self._seconds[second] = [0, 0.0]
            if len(self._seconds) > self.seconds_kept:
                del self._seconds[min(self._seconds)]
        return bucket

    def _add_busy(self, start: float, end: float) -> None:
        """Spread ``[start, end]`` over the seconds it covers."""
        second = int(math.floor(start))
        while start < end:
            edge = min(end, second + 1.0)
            self._bucket(second)[1] += edge - start
            start, second = edge, second + 1

    def seconds(self) -> list[list[float]]:
        """``[[epoch second, bytes, busy seconds], ...]`` in time order; a read still in hand counts up to now."""
        with self._mutex:
            if self._in_hand:  # counted up to now; the rest when it ends
                now = self._clock()
                self._add_busy(self._busy_since, now)
                self._busy_since = now
            return [[s, int(b[0]), round(b[1], 6)] for s, b in sorted(self._seconds.items())]
