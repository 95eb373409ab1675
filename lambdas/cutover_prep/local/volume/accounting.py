"""EBS SSD IO accounting and the volume's limits (IOPS, throughput, gp2 burst credits).

IO counting follows "Amazon EBS I/O characteristics and monitoring" (EBS User Guide,
https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html): the maximum IO
size of an SSD volume (gp2, gp3, io1, io2) is 256 KiB; "when small I/O operations are physically
sequential, Amazon EBS attempts to merge them into a single I/O operation up to the maximum I/O
size", and larger ones are split: one 1,024 KiB IO counts as 4, eight sequential 32 KiB IOs
count as 1, eight random 32 KiB IOs count as 8. Here "physically sequential" means: on the same
file, starting where an earlier IO of that file ended (a few streams per file are followed, so
parallel sequential readers of one file each merge). Time is not considered: two contiguous IOs
merge however far apart they are.

The buckets block the caller until its IO may proceed and report how long it waited (throttle
time). They take a clock and a sleep function so tests run on a fake clock.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

IO_BYTES = 256 * 1024
STREAMS_PER_FILE = 16


class IoCounter:
    """Counts EBS IOs for a sequence of (file, offset, size) requests."""

    def __init__(self, io_bytes: int = IO_BYTES, streams_per_file: int = STREAMS_PER_FILE) -> None:
        self.io_bytes = io_bytes
        self.streams_per_file = streams_per_file
        # per file: end offset of a stream -> bytes already in that stream's last counted IO
        self._streams: dict[str, OrderedDict[int, int]] = {}
        self._mutex = threading.Lock()

    def count(self, key: str, offset: int, size: int) -> int:
        """How many IOs this request adds."""
        if size <= 0:
            return 0
        with self._mutex:
            streams = self._streams.setdefault(key, OrderedDict())
            filled = streams.pop(offset, None)
            new = 0
            if filled is not None and filled < self.io_bytes:
                room = self.io_bytes - filled
                if size <= room:  # merged entirely into the open IO
                    streams[offset + size] = filled + size
                    return 0
                size_left = size - room
            else:
                size_left = size
            new = -(-size_left // self.io_bytes)
            tail = size_left - (new - 1) * self.io_bytes
            streams[offset + size] = tail
            while len(streams) > self.streams_per_file:
                streams.popitem(last=False)
            return new

    def forget(self, key: str) -> None:
        with self._mutex:
            self._streams.pop(key, None)


class TokenBucket:
    """Thread-safe token bucket: ``rate`` tokens per second, at most ``capacity`` saved up.

    ``take(n)`` reserves n tokens (the balance may go negative: later callers queue behind) and
    sleeps until they are earned; it returns the seconds slept. ``rate=None`` means no limit.
    """

    def __init__(self, rate: float | None, capacity: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self._rate = rate
        self.capacity = capacity if capacity is not None else (max(1.0, rate * 0.01) if rate else 0.0)
        self._clock, self._sleep = clock, sleep
        self._tokens = self.capacity
        self._stamp = clock()
        self._mutex = threading.Lock()

    @property
    def rate(self) -> float | None:
        return self._rate

    def _refill(self, now: float) -> None:
        if self._rate:
            self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now

    def set_rate(self, rate: float | None) -> None:
        with self._mutex:
            self._refill(self._clock())
            self._rate = rate

    def reserve(self, n: float) -> float:
        """Take n tokens now; the seconds until they are earned (0 when available)."""
        if not self._rate or n <= 0:
            return 0.0
        with self._mutex:
            self._refill(self._clock())
            self._tokens -= n
            return 0.0 if self._tokens >= 0 else -self._tokens / self._rate

    def take(self, n: float) -> float:
        wait = self.reserve(n)
        if wait > 0:
            self._sleep(wait)
        return wait


class BurstCredits:
    """gp2's I/O credit bucket: starts full, each IO spends one credit, refills at the baseline."""

    def __init__(self, credits: float, refill_per_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = credits
        self.refill_per_s = refill_per_s
        self._clock = clock
        self._balance = credits
        self._stamp = clock()
        self._mutex = threading.Lock()

    def spend(self, ios: float) -> float:
        """Spend ``ios`` credits; the balance after. It may go below zero: IOs admitted at the
        baseline are paid by the refill while they wait, so the debt keeps the bucket empty."""
        with self._mutex:
            now = self._clock()
            self._balance = min(self.capacity, self._balance + (now - self._stamp) * self.refill_per_s)
            self._stamp = now
            self._balance -= ios
            return self._balance

    @property
    def balance(self) -> float:
        return self.spend(0)


class Limits:
    """The volume's IOPS and throughput buckets, with gp2's burst bucket switching the IOPS rate."""

    def __init__(self, iops: float | None, bytes_per_s: float | None, *, sustained_iops: float | None = None,
                 credits: float | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.iops = TokenBucket(iops, clock=clock, sleep=sleep)
        self.bytes = TokenBucket(bytes_per_s, capacity=max(IO_BYTES, (bytes_per_s or 0) * 0.01),
                                 clock=clock, sleep=sleep)
        self.peak_iops, self.sustained_iops = iops, sustained_iops
        self.credits = (BurstCredits(credits, sustained_iops, clock=clock)
                        if credits is not None and sustained_iops else None)
        self._sleep = sleep

    def admit(self, ios: int, nbytes: int) -> float:
        """Wait until an IO of ``ios`` counted IOs and ``nbytes`` may proceed; the seconds waited."""
        wait = self.reserve(ios, nbytes)
        if wait > 0:
            self._sleep(wait)
        return wait

    def reserve(self, ios: int, nbytes: int) -> float:
        """Take the tokens of an IO of ``ios`` counted IOs and ``nbytes`` now; the seconds until they
        are earned (0 when available). The caller waits (the daemon charges it on its clock)."""
        if self.credits is not None and ios:
            # burst while the bucket holds this IO's credits; else the baseline (the refill rate)
            rate = self.peak_iops if self.credits.balance >= ios else self.sustained_iops
            self.credits.spend(ios)
            if rate != self.iops.rate:
                self.iops.set_rate(rate)
        return max(self.iops.reserve(ios), self.bytes.reserve(nbytes))
