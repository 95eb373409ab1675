"""The FUSE read path (``volume.fs``) on a fake clock: what a read costs is the profile's latencies,
whatever the machine's scheduling adds (sleeps ending late, the daemon starved mid-request).

The expected times come from the profile (a cold read: the chunk's fetch, p50 x time_scale with
sigma 0, then the warm service time io_latency x time_scale; a warm read: the service time), not
from the code under test. Needs mfusepy and libfuse to import ``fs`` (CI has them)."""

from __future__ import annotations

import os
import random
import time

import pytest

from cutover_prep.local.volume.profile import VolumeProfile
from cutover_prep.local.volume.state import HydrationState
from tests.unit.fake_clock import FakeClock as _FakeClock

try:
    from cutover_prep.local.volume import fs
except (ImportError, OSError) as exc:  # mfusepy raises OSError without libfuse
    if os.environ.get("CUTOVER_PREP_REQUIRE_FUSE"):
        raise
    pytest.skip(f"mfusepy or libfuse is missing: {exc}", allow_module_level=True)

KIB = 1024
PROFILE = VolumeProfile(first_touch_p50_ms=5.4, first_touch_sigma=0.0, io_latency_ms=2.3, time_scale=8.0)
FETCH_S = 5.4 * 8 / 1000  # one chunk's first touch, wall-clock
IO_S = 2.3 * 8 / 1000  # one warm IO's service time, wall-clock
N = 20


class FakeClock(_FakeClock):
    """Starts at 1000 s, as time.monotonic would."""

    def __init__(self, overshoot: float = 0.0) -> None:
        super().__init__(overshoot, start=1000.0)


@pytest.fixture
def volume(tmp_path, monkeypatch):
    """A VolumeFS over one 16 MiB file (32 chunks), on a fake clock; ``volume(cold=...)``."""
    (tmp_path / "f").write_bytes(os.urandom(16 * 1024 * KIB))
    fds: list[int] = []

    def make(*, cold: bool, overshoot: float = 0.0):
        clock = FakeClock(overshoot)
        monkeypatch.setattr(time, "monotonic", clock)
        monkeypatch.setattr(time, "sleep", clock.sleep)
        monkeypatch.setattr(fs, "fuse_get_context", lambda: (0, 0, 4242))  # one reader thread
        files = {"/f": bytearray(32)} if cold else {}
        state = HydrationState(PROFILE.chunk_bytes, files)
        rng = random.Random(1)
        vfs = fs.VolumeFS(tmp_path, PROFILE, state, fs.Stats(rng, clock), rng)  # one fake clock for both
        fds.append(os.open(tmp_path / "f", os.O_RDONLY))
        return vfs, clock, fds[-1]

    yield make
    for fd in fds:
        os.close(fd)


def read_one_block_per_chunk(vfs, fd: int, clock: FakeClock) -> float:
    """N single-block reads at queue depth 1, one in each of N chunks (never sequential); the time they took."""
    start = clock.now
    for i in range(N):
        vfs.read("/f", 8 * KIB, (N - i) * PROFILE.chunk_bytes + 8 * KIB, fd)
    return clock.now - start


def test_a_warm_read_starved_past_its_service_time_does_not_wait_again(volume, monkeypatch):
    vfs, clock, fd = volume(cold=False)
    real_pread = os.pread

    def starved_pread(*args):
        clock.now += 0.05  # the daemon lost 50 ms to the machine while it held the request
        return real_pread(*args)

    monkeypatch.setattr(os, "pread", starved_pread)
    start = clock.now
    vfs.read("/f", 8 * KIB, 0, fd)
    assert clock.slept == []
    assert clock.now - start == pytest.approx(0.05)


@pytest.mark.parametrize("overshoot", [0.0, 0.002, 0.005])
def test_n_warm_reads_take_their_service_time_whatever_the_sleeps_overshoot(volume, overshoot):
    vfs, clock, fd = volume(cold=False, overshoot=overshoot)
    # only the last read's lateness is not made up by a later one
    assert read_one_block_per_chunk(vfs, fd, clock) == pytest.approx(N * IO_S + overshoot)
    assert vfs.stats.snapshot(PROFILE.time_scale)["emulated_block_read_ms_p50"] == pytest.approx(2.3)


@pytest.mark.parametrize("overshoot", [0.0, 0.002, 0.005])
def test_n_cold_reads_take_fetch_plus_service_time_whatever_the_sleeps_overshoot(volume, overshoot):
    vfs, clock, fd = volume(cold=True, overshoot=overshoot)
    assert read_one_block_per_chunk(vfs, fd, clock) == pytest.approx(N * (FETCH_S + IO_S) + overshoot)
    assert vfs.stats.fetches == N


def test_cold_over_warm_is_the_profiles_ratio_on_a_busy_machine(volume, monkeypatch):
    vfs, clock, fd = volume(cold=True, overshoot=0.005)
    cold = read_one_block_per_chunk(vfs, fd, clock)
    monkeypatch.setattr(fs, "fuse_get_context", lambda: (0, 0, 4243))  # another reader thread (the probes)
    warm = read_one_block_per_chunk(vfs, fd, clock)  # the same blocks, hydrated now
    assert cold / warm == pytest.approx((N * (FETCH_S + IO_S) + 0.005) / (N * IO_S + 0.005))
    assert cold / warm > 3.2  # sleep(cost) made it 3.06: 5 ms more on each of its sleeps


def test_the_volume_records_the_time_it_had_reads_in_hand_not_its_readers_time_between_them(volume):
    """Issue 24 §5: a reader that idles between reads (a starved harness) leaves the volume idle; the daemon's
    per-second record counts only the time it held reads, here the profile's service time per warm read."""
    vfs, clock, fd = volume(cold=False)
    for i in range(N):
        vfs.read("/f", 8 * KIB, (N - i) * PROFILE.chunk_bytes + 8 * KIB, fd)
        clock.now += 0.5  # the reader's own time before its next read
    rows = vfs.stats.snapshot(PROFILE.time_scale)["served_seconds"]
    assert sum(r[1] for r in rows) == N * 8 * KIB
    assert sum(r[2] for r in rows) == pytest.approx(N * IO_S)


def test_a_files_first_read_is_timed_from_its_open_as_on_a_block_device(volume, monkeypatch):
    """A reader that opens the file for each read (pg_read_binary_file) pays a FUSE round trip for the open and
    a wake-up before its read arrives: on a real volume an open asks the storage nothing. The first read of a
    fresh handle is due at the open plus the read's cost (issue 24 §5); a handle opened long before is not."""
    vfs, clock, _ = volume(cold=False)
    path = str(vfs.backing) + "/f"
    fh = vfs.open("/f", os.O_RDONLY)
    clock.now += 0.006  # the open's reply, the reader's wake-up: 6 ms before its read reaches the daemon
    start = clock.now
    vfs.read("/f", 8 * KIB, 8 * KIB, fh)
    assert clock.now - start == pytest.approx(IO_S - 0.006)  # due at open + IO_S
    vfs.read("/f", 8 * KIB, 3 * PROFILE.chunk_bytes, fh)  # the handle's second read: its full cost
    assert clock.now - start == pytest.approx(2 * IO_S - 0.006)
    vfs.release("/f", fh)
    old = vfs.open("/f", os.O_RDONLY)
    clock.now += 10.0  # opened long before its first read (PostgreSQL keeps its files open)
    start = clock.now
    vfs.read("/f", 8 * KIB, 5 * PROFILE.chunk_bytes, old)
    assert clock.now - start == pytest.approx(IO_S)
    vfs.release("/f", old)
    assert os.path.exists(path)
