"""Run probes and sweep points through a ``BenchDriver`` (engine-independent).

Each point runs alone between two recorded UTC timestamps. Before and after it the
runner snapshots the engine's instance-wide counters and latency histogram and keeps
the deltas. Requests and bytes come from the engine's counters when it has them (the
point's ``source`` says which), else from the client's own count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cutover_prep.engines.bench import BenchDriver, PointSpec, ScanResult, SweepTarget
from cutover_prep.engines.locators import parse_locator
from cutover_prep.engines.scratch import Scratch
from cutover_prep.measure.model import ClientCount, PointMeasurement, histogram, percentiles
from cutover_prep.measure.sample import BlockPicker, SampledBlock

READ_KINDS = ("sequential", "random")
WRITE_KINDS = ("write_direct", "write_random")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before.get(k, 0.0), 3) for k in after}


def _hist_delta(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, int]:
    if after is None:
        return {}
    before = before or {}
    return {k: int(v - before.get(k, 0)) for k, v in after.items() if v - before.get(k, 0) > 0}


def run_probe(driver: BenchDriver, blocks: list[SampledBlock], *, phase: str, max_seconds: float) -> dict[str, Any]:
    """Read each block once, one at a time, timing each read; stop after ``max_seconds``.

    A read's latency is the database server's own time for it when the reader gives one (``RandomReader``:
    ``read_block`` returns the seconds its server measured), for every read of the probe: then ``latency_us``
    and its histogram are the server's (``timed_by: "server"``) and the client's own clock stands beside them
    (``client_latency_us``). The client's clock adds the network, the driver and a client process starved of CPU
    or of its interpreter's lock (the local harness's Python, where moto runs beside the handlers), the same
    milliseconds to a warm read as to a cold one, which narrows cold/warm. Otherwise ``timed_by: "client"``."""
    reader = driver.random_reader()
    counters_before, hist_before = driver.counters(), driver.latency_histogram()
    started_at, t0 = _now(), time.monotonic()
    client: list[float] = []
    server: list[float | None] = []
    block_size = 0
    try:
        for b in blocks:
            if time.monotonic() - t0 >= max_seconds:
                break
            locator = parse_locator(b["locator"])
            s = time.perf_counter()
            timed = reader.read_block(locator, b["file_id"], b["block"])
            client.append((time.perf_counter() - s) * 1e6)
            server.append(None if timed is None else float(timed) * 1e6)
            block_size = b["block_size"]
    finally:
        reader.close()
    seconds = time.monotonic() - t0
    finished_at = _now()
    n = len(client)
    by_server = bool(server) and all(v is not None for v in server)
    latencies = [v for v in server if v is not None] if by_server else client
    reader_notes = _reader_notes(driver, f"probe-{phase}")
    return {
        "point_id": f"probe-{phase}", "kind": "probe", "phase": phase, "started_at": started_at,
        "finished_at": finished_at, "seconds": round(seconds, 4), "blocks_planned": len(blocks), "blocks_read": n,
        "cut_short": n < len(blocks), "iops": round(n / seconds, 2) if seconds else 0.0,
        "throughput_kbps": round(n * block_size / 1024 / seconds, 2) if seconds and block_size else None,
        "latency_us": percentiles(latencies), "latency_hist_us": histogram(latencies),
        "timed_by": "server" if by_server else "client",
        **({"client_latency_us": percentiles(client)} if by_server else {}),
        "counters": _delta(counters_before, driver.counters()),
        "engine_latency_hist_us": _hist_delta(hist_before, driver.latency_histogram()),
        **({"notes": reader_notes} if reader_notes else {}),
    }


def _reader_notes(driver: BenchDriver, point_id: str) -> list[str]:
    """The driver's optional ``random_point_notes`` hook (``BenchDriver``), once the point's readers are closed."""
    hook = getattr(driver, "random_point_notes", None)
    return list(hook(point_id)) if callable(hook) else []


def _random_sessions(driver: BenchDriver, spec: PointSpec, picker: Callable[[int], BlockPicker],
                     deadline: float) -> tuple[list[float], list[str]]:
    latencies: list[list[float]] = [[] for _ in range(spec.sessions)]
    errors: list[str] = []
    readers = [driver.random_reader() for _ in range(spec.sessions)]  # connect before the clock matters
    start = threading.Barrier(spec.sessions)

    def session(i: int) -> None:
        blocks = picker(i).stream()
        mine = latencies[i]
        try:
            start.wait()
            while time.monotonic() < deadline:
                b = next(blocks)
                locator = parse_locator(b["locator"])
                s = time.perf_counter()
                readers[i].read_block(locator, b["file_id"], b["block"])
                mine.append((time.perf_counter() - s) * 1e6)
        except Exception as exc:  # noqa: BLE001 - reported with the point, the others go on
            errors.append(f"session {i + 1}: {exc}")
        finally:
            readers[i].close()

    threads = [threading.Thread(target=session, args=(i,), name=f"random-{i}") for i in range(spec.sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [lat for per in latencies for lat in per], errors


def run_point(driver: BenchDriver, spec: PointSpec, *, target: SweepTarget | None,
              picker: Callable[[int], BlockPicker] | None, block_size: int,
              scratch: Scratch | None = None) -> PointMeasurement:
    """Run one point for ``spec.seconds`` and measure it."""
    counters_before, hist_before = driver.counters(), driver.latency_histogram()
    started_at = _now()
    t0 = time.monotonic()
    deadline = t0 + spec.seconds
    latencies: list[float] = []
    notes: list[str] = []
    passes, cached = 1, False
    if spec.kind == "sequential":
        if target is None:
            raise ValueError("a sequential point needs a target segment")
        scan: ScanResult = driver.scan(spec, target, deadline)
        client_requests, client_bytes = scan.calls, scan.bytes
        notes += scan.notes
        passes, cached = scan.passes, scan.cached
    elif spec.kind == "random":
        if picker is None:
            raise ValueError("a random point needs blocks to read")
        latencies, errors = _random_sessions(driver, spec, picker, deadline)
        notes += _reader_notes(driver, spec.point_id)  # taken even when the point fails: not the next point's
        if errors and not latencies:
            raise RuntimeError("; ".join(errors))
        notes += errors
        client_requests, client_bytes = len(latencies), len(latencies) * block_size
    elif spec.kind in WRITE_KINDS:
        if scratch is None:
            raise ValueError("a write point needs the run's scratch object")
        scan = driver.write_point(spec, deadline, scratch)
        client_requests, client_bytes = scan.calls, scan.bytes
        notes += scan.notes
    else:
        raise ValueError(f"unknown point kind {spec.kind!r}")
    seconds = time.monotonic() - t0
    finished_at = _now()
    counters = _delta(counters_before, driver.counters())
    prefix = "read" if spec.kind in READ_KINDS else "write"
    counted = spec.kind not in READ_KINDS or driver.counts_reads_of(spec)
    if counted and counters.get(f"{prefix}_requests", 0) > 0:
        source = "engine"
        requests, bytes_ = int(counters[f"{prefix}_requests"]), int(counters.get(f"{prefix}_bytes", 0))
    else:
        source = "client"
        requests, bytes_ = client_requests, client_bytes
    return PointMeasurement(
        point_id=spec.point_id, kind=spec.kind, sessions=spec.sessions, io_size_kb=spec.io_size_kb,
        started_at=started_at, finished_at=finished_at, seconds=round(seconds, 4),
        requests=requests, bytes=bytes_, source=source, knobs_applied=dict(spec.knobs), counters=counters,
        client=ClientCount(requests=client_requests, bytes=client_bytes,
                           iops=round(client_requests / seconds, 2) if seconds else 0.0,
                           throughput_kbps=round(client_bytes / 1024 / seconds, 2) if seconds else 0.0),
        latency_hist_us=histogram(latencies) if latencies else _hist_delta(hist_before, driver.latency_histogram()),
        latency_us=percentiles(latencies), notes=notes, passes=passes, cached=cached,
    )
