"""The FUSE operations: a passthrough over the backing directory with lazy loading and EBS limits.

Reads: every cold 512 KiB chunk a read touches is fetched first (a latency drawn from the
profile's lognormal distribution, at most ``max_fetches`` at once; concurrent readers of one
chunk wait on the same fetch); then the read is served like a warm one: the IO accounting and
buckets (``accounting``) and the warm per-request service time. Every cost is charged on the
request's timeline (``clock``): the handler sleeps until the sum of its costs is due, so time the
daemon lost to a busy machine while it held the request counts toward them. Writes: a write that covers a
cold chunk only partly fetches it first (EBS hydrates a block before a partial write); writes
count against the buckets too. New files and directories belong to the calling process's
uid/gid (``fuse_get_context``), so PostgreSQL accepts its own directories on the mount.
"""

from __future__ import annotations

import errno
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

from mfusepy import FuseOSError, Operations, fuse_get_context

from cutover_prep.local.volume.accounting import IoCounter, Limits
from cutover_prep.local.volume.clock import ServiceClock, Timeline
from cutover_prep.local.volume.profile import VolumeProfile
from cutover_prep.local.volume.served import ServedWork
from cutover_prep.local.volume.state import HydrationState

STAT_KEYS = ("st_mode", "st_ino", "st_dev", "st_nlink", "st_uid", "st_gid", "st_size", "st_blocks",
             "st_blksize", "st_atime_ns", "st_mtime_ns", "st_ctime_ns")
STATVFS_KEYS = ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail",
                "f_flag", "f_namemax")
SAMPLES_KEPT = 20_000


class _Reservoir:
    """A uniform sample of at most ``SAMPLES_KEPT`` values (the caller holds the lock)."""

    def __init__(self, rng: random.Random) -> None:
        self.values: list[float] = []
        self.seen = 0
        self._rng = rng

    def add(self, value: float) -> None:
        self.seen += 1
        if len(self.values) < SAMPLES_KEPT:
            self.values.append(value)
        else:
            slot = self._rng.randrange(self.seen)
            if slot < SAMPLES_KEPT:
                self.values[slot] = value

    def p50(self) -> float | None:
        samples = sorted(self.values)
        return samples[len(samples) // 2] if samples else None


class Stats:
    """The daemon's counters (thread-safe).

    ``first_touch_ms_p50``: a chunk's fetch as charged. ``block_read_ms_p50``: the time the daemon
    held a single-block read (at most ``BLOCK_BYTES``), from its handler's start to its end: what
    the volume took, to set beside what a reader measured (the difference is the machine's, the
    reader's own and the kernel's time, not the volume's). ``served``: per wall-clock second, the bytes read and
    how long reads were in hand (``served.ServedWork``)."""

    BLOCK_BYTES = 8 * 1024

    def __init__(self, rng: random.Random, wall_clock: Any = None) -> None:
        self.served = ServedWork(wall_clock or time.time)
        self.mutex = threading.Lock()
        self.bytes_served = self.bytes_written = self.reads = self.writes = 0
        self.ios_counted = self.fetches = 0
        self.fetch_wait_s = self.throttle_s = 0.0
        self._first_touch_ms = _Reservoir(rng)
        self._block_read_ms = _Reservoir(rng)

    def add(self, **values: float) -> None:
        with self.mutex:
            for name, value in values.items():
                setattr(self, name, getattr(self, name) + value)

    def fetched(self, waited_s: float) -> None:
        with self.mutex:
            self.fetches += 1
            self._first_touch_ms.add(waited_s * 1000)

    def read(self, nbytes: int, held_s: float) -> None:
        with self.mutex:
            self.reads += 1
            self.bytes_served += nbytes
            if 0 < nbytes <= self.BLOCK_BYTES:
                self._block_read_ms.add(held_s * 1000)

    def snapshot(self, time_scale: float) -> dict[str, Any]:
        with self.mutex:
            out = {"bytes_served": self.bytes_served, "bytes_written": self.bytes_written, "reads": self.reads,
                   "writes": self.writes, "ios_counted": self.ios_counted, "fetches": self.fetches,
                   "fetch_wait_s": round(self.fetch_wait_s, 4), "throttle_s": round(self.throttle_s, 4)}
            medians = {"first_touch": self._first_touch_ms.p50(), "block_read": self._block_read_ms.p50()}
        for name, p50 in medians.items():
            out[f"{name}_ms_p50"] = None if p50 is None else round(p50, 3)
            out[f"emulated_{name}_ms_p50"] = None if p50 is None else round(p50 / time_scale, 3)
        out["served_seconds"] = self.served.seconds()
        return out


class _Fetch:
    """One chunk's fetch in flight: followers wait on ``done``; ``due`` is when the fetch is due."""

    __slots__ = ("done", "due")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.due: float | None = None


class Hydrator:
    """Fetches cold chunks: at most ``max_fetches`` at once, one fetch per chunk however many wait."""

    def __init__(self, profile: VolumeProfile, state: HydrationState, stats: Stats, rng: random.Random,
                 service: ServiceClock) -> None:
        self.profile, self.state, self.stats, self.rng, self.service = profile, state, stats, rng, service
        self._slots = threading.BoundedSemaphore(profile.max_fetches)
        self._inflight: dict[tuple[str, int], _Fetch] = {}
        self._mutex = threading.Lock()

    def ensure(self, rel: str, chunks: list[int], timeline: Timeline) -> float:
        """Hydrate ``chunks`` of ``rel``, each fetch charged on ``timeline``; the seconds this caller waited."""
        clock = self.service.clock
        waited = 0.0
        for chunk in chunks:
            start = clock()
            with self._mutex:
                if self.state.is_hot(rel, chunk):
                    continue
                fetch = self._inflight.get((rel, chunk))
                leader = fetch is None
                if leader:
                    fetch = self._inflight[(rel, chunk)] = _Fetch()
            if leader:
                try:
                    queued = 0.0
                    if not self._slots.acquire(blocking=False):  # all fetch slots busy: it starts when one frees
                        self._slots.acquire()
                        queued = clock() - start
                        timeline.not_before(clock())
                    try:
                        with self._mutex:
                            latency = self.profile.draw_first_touch_s(self.rng)
                        fetch.due = timeline.charge(latency)
                        timeline.wait()
                    finally:
                        self._slots.release()
                    self.state.mark(rel, chunk)
                finally:
                    with self._mutex:
                        self._inflight.pop((rel, chunk), None)
                    fetch.done.set()
                self.stats.fetched(queued + latency)  # the fetch as charged: its queueing for a slot, its latency
            else:
                fetch.done.wait()
                if fetch.due is not None:
                    timeline.not_before(fetch.due)
            waited += clock() - start
        if waited:
            self.stats.add(fetch_wait_s=waited)
        return waited


class VolumeFS(Operations):
    use_ns = True

    def __init__(self, backing: Path, profile: VolumeProfile, state: HydrationState, stats: Stats,
                 rng: random.Random) -> None:
        self.backing = str(backing)
        self.profile, self.state, self.stats = profile, state, stats
        # time.monotonic and time.sleep looked up now, not at import (tests run the daemon on a fake clock)
        self.service = ServiceClock(clock=time.monotonic, sleep=time.sleep)
        self.hydrator = Hydrator(profile, state, stats, rng, self.service)
        self.counter = IoCounter()
        self._opened: dict[int, float] = {}  # file handle -> when it was opened, until its first read
        self._opened_mutex = threading.Lock()
        self.limits = Limits(profile.ceiling_iops, profile.throughput_bytes_per_s,
                             sustained_iops=profile.sustained_iops, credits=profile.burst_credits,
                             clock=time.monotonic, sleep=time.sleep)

    def _full(self, path: str) -> str:
        return self.backing + path

    def _own(self, full: str) -> None:
        uid, gid, _pid = fuse_get_context()
        os.lchown(full, uid, gid)

    def _serve(self, rel: str, offset: int, size: int, timeline: Timeline) -> float:
        """The warm part of an IO: the counted IOs through the buckets, then the service time, both
        charged on ``timeline``, which is then waited for; the buckets' wait (throttle time).

        Physically sequential requests that EBS merges into one IO (``IoCounter``) pay one service
        time, as the kernel's readahead would make them one request to a real volume (direct_io
        turns readahead off here, so without this a sequential 8 KiB reader paid 2.3 ms a block)."""
        if size > 0:
            ios = self.counter.count(rel, offset, size)
            throttled = self.limits.reserve(ios, size)
            if throttled > 0:  # the tokens are earned on the wall clock
                timeline.not_before(self.service.clock() + throttled)
            if self.profile.io_latency_s and ios:  # a request merged into the IO before it rides on its service time
                timeline.charge(self.profile.io_latency_s)
            self.stats.add(ios_counted=ios, throttle_s=throttled)
        else:
            throttled = 0.0
        timeline.wait()
        return throttled

    def _timeline(self, fh: int | None = None) -> Timeline:
        """A request's timeline, in the calling thread's stream (FUSE gives its thread id as ``pid``). The first
        read of a file handle starts when the handle was opened: on a block device an open asks the storage
        nothing, here it is a round trip through FUSE to this daemon (and the reader's wake-up after it), which a
        reader that opens a file for each read (``pg_read_binary_file``) would otherwise pay on every read, cold
        or warm alike."""
        asked = None
        if fh is not None:
            with self._opened_mutex:
                asked = self._opened.pop(fh, None)
        return self.service.begin(fuse_get_context()[2], asked)

    # --- metadata ------------------------------------------------------------------------
    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        st = os.fstat(fh) if fh is not None else os.lstat(self._full(path))
        return {key: getattr(st, key) for key in STAT_KEYS}

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._full(path))]

    def readlink(self, path: str) -> str:
        return os.readlink(self._full(path))

    def statfs(self, path: str) -> dict[str, int]:
        st = os.statvfs(self._full(path))
        return {key: getattr(st, key) for key in STATVFS_KEYS}

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._full(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.lchown(self._full(path), uid, gid)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        os.utime(self._full(path), ns=times, follow_symlinks=False) if times else os.utime(self._full(path))
        return 0

    # --- namespace -----------------------------------------------------------------------
    def mkdir(self, path: str, mode: int) -> int:
        os.mkdir(self._full(path), mode)
        self._own(self._full(path))
        return 0

    def rmdir(self, path: str) -> int:
        os.rmdir(self._full(path))
        return 0

    def unlink(self, path: str) -> int:
        os.unlink(self._full(path))
        self.state.drop(path)
        self.counter.forget(path)
        return 0

    def rename(self, old: str, new: str) -> int:
        os.rename(self._full(old), self._full(new))
        self.state.rename(old, new)
        self.counter.forget(old)
        return 0

    def symlink(self, target: str, source: str) -> int:
        """``target`` is the new link, pointing at ``source`` (mfusepy's naming)."""
        os.symlink(source, self._full(target))
        self._own(self._full(target))
        return 0

    def link(self, target: str, source: str) -> int:
        os.link(self._full(source), self._full(target))
        return 0

    # --- files ---------------------------------------------------------------------------
    def open(self, path: str, flags: int) -> int:
        asked = self.service.clock()
        fh = os.open(self._full(path), flags)
        with self._opened_mutex:
            self._opened[fh] = asked
        return fh

    def create(self, path: str, mode: int, flags: int = os.O_WRONLY) -> int:
        # O_RDWR whatever was asked: the kernel may read through a handle opened for writing
        # (PostgreSQL reads its temporary files back).
        flags = (flags & ~os.O_ACCMODE) | os.O_RDWR | os.O_CREAT
        fd = os.open(self._full(path), flags, mode)
        self._own(self._full(path))
        return fd

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        self.stats.served.begin()
        served = 0
        try:
            timeline = self._timeline(fh)
            cold = self.state.cold_chunks(path, offset, size)
            if cold:
                self.hydrator.ensure(path, cold, timeline)
            data = os.pread(fh, size, offset)
            self._serve(path, offset, len(data), timeline)  # a read past the end costs nothing
            timeline.finish()
            self.stats.read(len(data), self.service.clock() - timeline.began)
            served = len(data)
            return data
        finally:
            self.stats.served.end(served)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        timeline = self._timeline()
        size, chunk = len(data), self.profile.chunk_bytes
        partial = [c for c in self.state.cold_chunks(path, offset, size)
                   if offset > c * chunk or offset + size < (c + 1) * chunk]
        if partial:
            self.hydrator.ensure(path, partial, timeline)
        for c in self.state.cold_chunks(path, offset, size):  # fully overwritten: nothing to fetch
            self.state.mark(path, c)
        written = os.pwrite(fh, data, offset)
        self._serve(path, offset, size, timeline)
        timeline.finish()
        self.stats.add(bytes_written=written, writes=1)
        return written

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._full(path), length)
        self.state.truncate(path, length)
        return 0

    def fallocate(self, path: str, mode: int, offset: int, size: int, fh: int) -> int:
        if mode:
            raise FuseOSError(errno.EOPNOTSUPP)
        os.posix_fallocate(fh, offset, size)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        (os.fdatasync if datasync else os.fsync)(fh)
        return 0

    def release(self, path: str, fh: int) -> int:
        with self._opened_mutex:
            self._opened.pop(fh, None)
        os.close(fh)
        return 0
