"""The daemon's clock of served work: a request's emulated costs are due times, not sleeps.

A Python daemon on a busy machine loses time it cannot control: its thread waits for a CPU
before it runs, a sleep ends late, the GIL is held by another thread. When every cost is a
``sleep(cost)``, that time is added to the cost, the same few milliseconds to a 2.3 ms warm read
as to an 8 ms cold one, and the ratios the emulator exists for (cold/warm, rate/ceiling) shrink.

Here a request's costs are charged on a timeline instead. Its emulated start is the moment the
handler began, and each cost (a chunk's fetch, the IO's service time, the buckets' wait) moves
its due time on; the handler sleeps only until the due time (``sleep(max(0, due - now))``), so
time lost while the request was in hand counts toward its cost rather than adding to it, and
a request that is already past its due time does not wait again.

Lateness the handler cannot absorb (its last sleep ended late) is carried by the caller's
stream (the calling thread, as FUSE names it): the stream's next request starts that much
earlier on its timeline, so over a stream of requests the emulated time is the sum of their
costs plus the caller's own time between them, whatever the scheduling delay. The carry is
capped at ``max_lag_s``: a daemon stalled for seconds does not then serve that many seconds of
requests free. Starvation that outlasts the costs stretches the run; it does not shift the
ratios.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

MAX_LAG_S = 0.25
ASKED_WITHIN_S = 0.05  # an open this recent is the start of the read that follows it (fs.VolumeFS._timeline)
STREAMS_KEPT = 1024


class Timeline:
    """One request's due time on the daemon's clock."""

    __slots__ = ("_clock", "_service", "_stream", "began", "due")

    def __init__(self, service: ServiceClock, stream: Hashable, start: float, began: float) -> None:
        self._service, self._stream, self.due = service, stream, start
        self.began = began  # when the daemon took the request (wall clock)
        self._clock = service.clock

    def charge(self, seconds: float) -> float:
        """Add a cost; the new due time."""
        if seconds > 0:
            self.due += seconds
        return self.due

    def not_before(self, moment: float) -> float:
        """Nothing later can be due before ``moment`` (a wall-clock time: tokens earned, a fetch done)."""
        if moment > self.due:
            self.due = moment
        return self.due

    def wait(self) -> float:
        """Sleep until the due time (not at all when it has passed); the seconds slept."""
        left = self.due - self._clock()
        if left > 0:
            self._service.sleep(left)
            return left
        return 0.0

    def finish(self) -> float:
        """The request is served: how late it is past its due time (carried by its stream)."""
        late = max(0.0, self._clock() - self.due)
        self._service.carry(self._stream, late)
        return late


class ServiceClock:
    """Hands out ``Timeline``s; remembers each stream's lateness. Takes a clock and a sleep function so
    tests run on a fake clock."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 max_lag_s: float = MAX_LAG_S, streams_kept: int = STREAMS_KEPT) -> None:
        self.clock, self.sleep = clock, sleep
        self.max_lag_s, self.streams_kept = max_lag_s, streams_kept
        self._lag: OrderedDict[Hashable, float] = OrderedDict()
        self._mutex = threading.Lock()

    def begin(self, stream: Hashable = None, asked_at: float | None = None) -> Timeline:
        """A request of ``stream`` starts now, less what the stream's earlier request ran late; or at ``asked_at``
        when the caller asked for it earlier (the open that came just before a file's first read), if that was at
        most ``ASKED_WITHIN_S`` ago."""
        now = self.clock()
        with self._mutex:
            lag = self._lag.pop(stream, 0.0)
        start = now - lag
        if asked_at is not None and now - asked_at <= ASKED_WITHIN_S:  # longer ago: the reader did something else
            start = min(start, asked_at)
        return Timeline(self, stream, start, now)

    def carry(self, stream: Hashable, late: float) -> None:
        with self._mutex:
            self._lag.pop(stream, None)
            if late > 0:
                self._lag[stream] = min(late, self.max_lag_s)
                while len(self._lag) > self.streams_kept:
                    self._lag.popitem(last=False)

    def lag(self, stream: Hashable = None) -> float:
        with self._mutex:
            return self._lag.get(stream, 0.0)
