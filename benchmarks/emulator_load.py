"""The emulated volume quiet and beside a CPU hog, in one run (needs FUSE: root, /dev/fuse, `make fuse`).

What ``make demo`` judges on the volume, each measured twice, first on the machine as it is, then
with ``--hog`` CPU-bound processes beside it (``stress-ng --cpu N`` when installed, else N Python
busy loops; the line says which):

1. the probes: single-block (8 KiB) random reads at queue depth 1, cold (one per cold chunk) and
   warm (hydrated chunks): medians and means in emulated ms, and cold/warm of the medians (the
   verdict's WARM_VS_COLD reads medians) and of the means;
2. the warm-up: sequential cold reads of disjoint ranges by ``--readers`` threads in 128 KiB
   requests (what ``pg_read_binary_file`` sends through FUSE) and in 8 KiB ones, as a fraction of
   the profile's ceiling;
3. the daemon's CPU time per request (its threads' on-CPU time from /proc, over the requests it
   counted, its twice-a-second counter writes included) for each of them.

    .venv/bin/python benchmarks/emulator_load.py [--mib 48] [--samples 100] [--hog 2]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, fuse_unavailable

KIB, MIB = 1024, 1024 * 1024
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """CPU time of a process, seconds: the sum of its threads' on-CPU nanoseconds (/proc schedstat; a
    thread that ended is not counted, libfuse keeps its workers), else utime + stime (clock ticks)."""
    try:
        return sum(int((t / "schedstat").read_text().split()[0])
                   for t in Path(f"/proc/{pid}/task").iterdir()) / 1e9
    except (OSError, ValueError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS


class Daemon:
    """The daemon's CPU and request counts between two points."""

    def __init__(self, vol: EmulatedVolume) -> None:
        self.vol = vol
        self.pid = vol._proc.pid  # noqa: SLF001 (the bench's own view of the process)

    def mark(self) -> tuple[float, int]:
        c = self.vol.counters()
        return cpu_s(self.pid), c["reads"] + c["writes"]

    @staticmethod
    def per_request_us(before: tuple[float, int], after: tuple[float, int]) -> float:
        n = after[1] - before[1]
        return (after[0] - before[0]) / n * 1e6 if n else float("nan")


def _make_file(vol: EmulatedVolume, name: str, size: int) -> Path:
    vol.backing.mkdir(parents=True, exist_ok=True)
    with open(vol.backing / name, "wb") as f:
        for _ in range(size // MIB):
            f.write(os.urandom(MIB))
    return vol.mountpoint / name


def timed_reads(path: Path, offsets: list[int], block: int = 8 * KIB) -> list[float]:
    """Reads at queue depth 1; each one's seconds."""
    fd = os.open(path, os.O_RDONLY)
    try:
        out = []
        for off in offsets:
            start = time.perf_counter()
            os.pread(fd, block, off)
            out.append(time.perf_counter() - start)
        return out
    finally:
        os.close(fd)


def sequential_reads(path: Path, size: int, readers: int, block: int) -> float:
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


def measure(vol: EmulatedVolume, path: Path, size: int, samples: int, readers: int) -> dict[str, float]:
    p, d, out = vol.profile, Daemon(vol), {}
    ms = 1000 / p.time_scale  # wall seconds -> emulated ms
    vol.restore()
    chunks = size // p.chunk_bytes
    rng = random.Random(1)
    picked = rng.sample(range(chunks), min(samples, chunks))
    cold_offsets = [c * p.chunk_bytes + rng.randrange(p.chunk_bytes // (8 * KIB)) * 8 * KIB for c in picked]
    a = d.mark()
    cold = timed_reads(path, cold_offsets)
    b = d.mark()
    warm_offsets = [c * p.chunk_bytes + rng.randrange(p.chunk_bytes // (8 * KIB)) * 8 * KIB for c in picked]
    warm = timed_reads(path, warm_offsets)  # the chunks the cold pass hydrated, other blocks in them
    c = d.mark()
    out.update(cold_p50=statistics.median(cold) * ms, warm_p50=statistics.median(warm) * ms,
               cold_mean=statistics.fmean(cold) * ms, warm_mean=statistics.fmean(warm) * ms,
               cpu_cold_us=d.per_request_us(a, b), cpu_warm_us=d.per_request_us(b, c))
    for block in (128 * KIB, 8 * KIB):
        vol.restore()
        a = d.mark()
        secs = sequential_reads(path, size, readers, block)
        b = d.mark()
        out[f"seq{block // KIB}_of_ceiling"] = size / MIB / secs / p.ceiling_mib_per_s
        out[f"cpu_seq{block // KIB}_us"] = d.per_request_us(a, b)
    return out


class Hog:
    """``n`` CPU-bound processes: stress-ng when installed, else Python busy loops."""

    def __init__(self, n: int) -> None:
        self.n = n
        if shutil.which("stress-ng"):
            self.what = f"stress-ng --cpu {n}"
            self.procs = [subprocess.Popen(["stress-ng", "--cpu", str(n), "--quiet"], start_new_session=True)]
        else:
            self.what = f"{n} x python -c 'while True: pass'"
            self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
        time.sleep(1)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                if self.what.startswith("stress-ng"):
                    os.killpg(proc.pid, 15)
                else:
                    proc.terminate()
            proc.wait()


def line(label: str, r: dict[str, float]) -> str:
    return (f"{label:>24}: probes cold p50 {r['cold_p50']:5.2f} ms / warm p50 {r['warm_p50']:5.2f} ms "
            f"= {r['cold_p50'] / r['warm_p50']:.2f}x (means {r['cold_mean']:5.2f} / {r['warm_mean']:5.2f} "
            f"= {r['cold_mean'] / r['warm_mean']:.2f}x); warm-up 128 KiB {r['seq128_of_ceiling']:.2f}, "
            f"8 KiB {r['seq8_of_ceiling']:.2f} x ceiling; daemon CPU per request: cold {r['cpu_cold_us']:.0f} us, "
            f"warm {r['cpu_warm_us']:.0f} us, seq 128 KiB {r['cpu_seq128_us']:.0f} us, "
            f"seq 8 KiB {r['cpu_seq8_us']:.0f} us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=48, help="size of the test file (MiB)")
    parser.add_argument("--samples", type=int, default=100, help="probe reads per pass (at most one per chunk)")
    parser.add_argument("--readers", type=int, default=4, help="warm-up threads")
    parser.add_argument("--hog", type=int, default=2, help="CPU-bound processes beside the second pass")
    args = parser.parse_args()
    reason = fuse_unavailable()
    if reason:
        print(reason)
        return 0
    p = DEFAULT_PROFILE
    print(f"default profile, time_scale {p.time_scale:g}: ceiling {p.ceiling_mib_per_s:.2f} MiB/s wall; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} before the first pass; times in emulated ms")
    with tempfile.TemporaryDirectory(prefix="cutover-bench-load-") as tmp, \
            EmulatedVolume(Path(tmp), p, seed=7) as vol:
        path = _make_file(vol, "data.bin", args.mib * MIB)
        print(f"the daemon runs at nice {vol.counters().get('nice')}")
        print(line("quiet", measure(vol, path, args.mib * MIB, args.samples, args.readers)), flush=True)
        hog = Hog(args.hog)
        try:
            print(line(f"beside {hog.what}", measure(vol, path, args.mib * MIB, args.samples, args.readers)))
        finally:
            hog.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
