"""The emulated restored volume, measured in one run (needs FUSE: root, /dev/fuse, `make fuse`).

1. The calibrated default profile's single-block (8 KiB) random reads at queue depth 1, cold vs
   warm: IOPS and their ratio (seed 002: 128 vs 433 IOPS, ~3.4x).
2. Sequential cold reads (256 KiB requests, disjoint ranges) at concurrency 1, 4, 16 against
   ``ceiling_mib_per_s``.
3. The daemon's own overhead: a profile without limits or latencies, 8 KiB and 256 KiB reads.

Rates are printed wall-clock and as the emulated volume's own (wall x time_scale).

    .venv/bin/python benchmarks/emulator.py [--mib 48]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile, fuse_unavailable

KIB, MIB = 1024, 1024 * 1024


def _make_file(vol: EmulatedVolume, name: str, size: int) -> Path:
    vol.backing.mkdir(parents=True, exist_ok=True)
    path = vol.backing / name
    with open(path, "wb") as f:
        for _ in range(size // MIB):
            f.write(os.urandom(MIB))
    return vol.mountpoint / name


def random_reads(path: Path, offsets: list[int], block: int = 8 * KIB) -> float:
    """Reads at queue depth 1; the seconds taken."""
    fd = os.open(path, os.O_RDONLY)
    try:
        start = time.perf_counter()
        for off in offsets:
            os.pread(fd, block, off)
        return time.perf_counter() - start
    finally:
        os.close(fd)


def sequential_reads(path: Path, size: int, readers: int, block: int) -> float:
    """``readers`` threads each read a disjoint range in ``block`` requests; the seconds taken."""
    span = size // readers

    def run(i: int) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            for off in range(i * span, (i + 1) * span, block):
                os.pread(fd, block, off)
        finally:
            os.close(fd)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(readers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def bench_default(workdir: Path, size: int, samples: int) -> None:
    p = DEFAULT_PROFILE
    ts = p.time_scale
    print(f"default profile: {p.storage_type} {p.allocated_gb:g} GiB on {p.instance_class}, time_scale {ts:g}, "
          f"ceiling {p.emulated_ceiling_mib_s:.1f} MiB/s / {p.emulated_iops:,.0f} IOPS emulated = "
          f"{p.ceiling_mib_per_s:.2f} MiB/s / {p.ceiling_iops:.0f} IOPS wall; first touch p50 "
          f"{p.first_touch_p50_ms} ms (mean {p.first_touch_mean_ms:.2f}), warm IO {p.io_latency_ms} ms")
    with EmulatedVolume(workdir / "default", p, seed=7) as vol:
        path = _make_file(vol, "data.bin", size)
        vol.restore()
        chunks = size // p.chunk_bytes
        rng = random.Random(1)
        cold_offsets = [c * p.chunk_bytes + rng.randrange(0, p.chunk_bytes // (8 * KIB)) * 8 * KIB
                        for c in rng.sample(range(chunks), min(samples, chunks))]
        cold_s = random_reads(path, cold_offsets)
        before = vol.counters()
        warm_offsets = [rng.randrange(0, size // (8 * KIB)) * 8 * KIB for _ in range(len(cold_offsets))]
        for c in {o // p.chunk_bytes for o in warm_offsets}:  # hydrate what the warm pass reads
            random_reads(path, [c * p.chunk_bytes])
        mid = vol.counters()
        warm_s = random_reads(path, warm_offsets)
        after = vol.counters()
        assert after["fetches"] == mid["fetches"], "the warm pass fetched"
        n = len(cold_offsets)
        cold_iops, warm_iops = n / cold_s * ts, n / warm_s * ts
        print(f"single-block random reads, QD1, {n} each: cold {cold_iops:.0f} IOPS, warm {warm_iops:.0f} IOPS "
              f"(emulated; wall {n / cold_s:.1f} / {n / warm_s:.1f}), warm/cold {warm_iops / cold_iops:.2f}x "
              f"(seed 002: 433/128 = 3.38x); cold fetches {before['fetches']}, "
              f"first touch p50 {before['emulated_first_touch_ms_p50']} ms emulated")
        for readers in (1, 4, 16):
            vol.restore()
            secs = sequential_reads(path, size, readers, 256 * KIB)
            c = vol.counters()
            mib_s = size / MIB / secs
            print(f"sequential cold read, 256 KiB requests, concurrency {readers:2d}: {mib_s:6.2f} MiB/s wall = "
                  f"{mib_s * ts:6.1f} MiB/s emulated = {mib_s / p.ceiling_mib_per_s:.2f} x ceiling; "
                  f"hydrated {c['hydrated_pct']}%, throttled {c['throttle_s']:.1f} s")


def bench_overhead(workdir: Path, size: int) -> None:
    with EmulatedVolume(workdir / "unlimited", VolumeProfile.unlimited()) as vol:
        path = _make_file(vol, "data.bin", size)
        for block in (8 * KIB, 256 * KIB):
            for readers in (1, 16):
                secs = sequential_reads(path, size, readers, block)
                print(f"daemon overhead (no limits): {block // KIB:3d} KiB requests, {readers:2d} readers: "
                      f"{size / MIB / secs:7.1f} MiB/s, {size / block / secs:8.0f} requests/s")
    p = DEFAULT_PROFILE
    print(f"(the default profile asks at most {p.ceiling_mib_per_s:.1f} MiB/s and {p.ceiling_iops:.0f} counted IOPS "
          "of the daemon)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=48, help="size of the test file (MiB)")
    parser.add_argument("--samples", type=int, default=150, help="random reads per pass")
    args = parser.parse_args()
    reason = fuse_unavailable()
    if reason:
        print(reason)
        return 0
    with tempfile.TemporaryDirectory(prefix="cutover-bench-volume-") as tmp:
        bench_default(Path(tmp), args.mib * MIB, args.samples)
        bench_overhead(Path(tmp), 256 * MIB)
    return 0


if __name__ == "__main__":
    sys.exit(main())
