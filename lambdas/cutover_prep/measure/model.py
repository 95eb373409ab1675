"""What a benchmark sweep measures, engine-independent.

A sweep is a list of *points*; each point runs alone, for ``seconds``, in its own
recorded time window (UTC ISO timestamps), so CloudWatch / Enhanced Monitoring data can
be matched to it afterwards. Engine-specific work lives behind ``BenchDriver``:

- ``capabilities()``: which knobs and counters this server has (recorded in findings):
  ``{"server_version": str, "knobs": {name: bool}, "counters": "v$sysstat" | "pg_stat_io" | None,
  "latency_histogram": "v$event_histogram" | None, "notes": [str, ...]}``;
- ``io_size_points(options, target)``: the engine's IO-size sweep (Oracle:
  ``db_file_multiblock_read_count``; PostgreSQL 17+: ``io_combine_limit``), or ``[]``;
- ``counters()``: an instance-wide snapshot of the engine's cumulative IO counters; the
  runner takes deltas per point. Besides raw names (e.g. ``physical read total bytes``)
  it includes the normalised keys ``read_requests`` and ``read_bytes`` (and
  ``write_requests`` / ``write_bytes``, ``multiblock_read_requests`` when known) so the
  runner can compute IOPS and effective IO size; ``{}`` when the engine has no counters
  (then the client's count is used and the findings say so);
- ``latency_histogram()``: an instance-wide single-block read latency histogram snapshot
  (Oracle ``v$event_histogram``), or ``None`` when the engine has none;
- ``scan(spec, target, deadline)``: sequential reads of ``target`` with ``spec.knobs``
  applied to this session only, until ``deadline`` (``time.monotonic()``) or the end of
  the target; returns the bytes and read calls the client issued;
- ``random_reader()``: a new session (own connection) that reads single blocks;
- optional ``random_point_notes(point_id)``: once a random point's (or a probe's) reader sessions
  are closed, what the engine saw in them (Oracle: their V$SESSION_EVENT waits), for its notes;
- ``write_point(spec, deadline, scratch)``: the opt-in write test in the run's own scratch
  object (``cutover_prep.benchmark.scratch``), capped at ``scratch.max_bytes``, dropped afterwards
  even on failure; ``drop_scratch(scratch)`` drops it only when it carries the run's marker.

Nothing here writes to the customer database; only ``write_point`` and ``drop_scratch``
do, and only when the run input asks for it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from cutover_prep.benchmark.scratch import Dropped, Scratch
from cutover_prep.models.run_input import Benchmark

# Latency histogram buckets: upper bounds in microseconds, powers of two from 64 µs
# (below a page-cache hit is free) to ~4 s; the last bucket is open-ended ("inf").
BUCKET_BOUNDS_US: tuple[int, ...] = tuple(2**k for k in range(6, 23))


def bucket_of(latency_us: float) -> str:
    for bound in BUCKET_BOUNDS_US:
        if latency_us <= bound:
            return str(bound)
    return "inf"


def histogram(latencies_us: list[float]) -> dict[str, int]:
    """Counts per bucket upper bound (string keys, JSON-safe), only non-empty buckets."""
    hist: dict[str, int] = {}
    for lat in latencies_us:
        b = bucket_of(lat)
        hist[b] = hist.get(b, 0) + 1
    return dict(sorted(hist.items(), key=lambda kv: math.inf if kv[0] == "inf" else int(kv[0])))


def percentiles(latencies_us: list[float], ps: tuple[float, ...] = (50, 90, 95, 99)) -> dict[str, float]:
    """Nearest-rank percentiles in microseconds ({} when there are no samples)."""
    if not latencies_us:
        return {}
    ordered = sorted(latencies_us)
    out = {}
    for p in ps:
        rank = max(1, math.ceil(p / 100 * len(ordered)))
        out[f"p{p:g}"] = round(ordered[rank - 1], 1)
    out["mean"] = round(sum(ordered) / len(ordered), 1)
    out["max"] = round(ordered[-1], 1)
    return out


@dataclass(frozen=True)
class SweepTarget:
    """What a point reads: one big segment for scans, many block ranges for random reads."""

    segment_key: str
    locator: dict[str, Any]
    extents: tuple[tuple[int, int, int], ...]  # (file_id, first_block, blocks)
    block_size: int

    @property
    def bytes(self) -> int:
        return sum(e[2] for e in self.extents) * self.block_size

    def to_json(self) -> dict[str, Any]:
        return {"segment": self.segment_key, "locator": self.locator,
                "extents": [list(e) for e in self.extents], "block_size": self.block_size}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SweepTarget:
        return cls(d["segment"], d["locator"], tuple(tuple(int(x) for x in e) for e in d["extents"]),
                   int(d["block_size"]))


@dataclass(frozen=True)
class PointSpec:
    """One measurement. ``kind``: ``sequential`` (scan at an IO size), ``random`` (single
    blocks from ``sessions`` sessions), ``write_direct`` / ``write_random`` (opt-in)."""

    point_id: str
    kind: str
    seconds: float
    sessions: int = 1
    io_size_kb: float | None = None
    knobs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PointSpec:
        return cls(**{k: d[k] for k in ("point_id", "kind", "seconds", "sessions", "io_size_kb", "knobs") if k in d})


@dataclass
class ScanResult:
    """What the client did in a scan: bytes asked for and database calls made."""

    bytes: int
    calls: int
    seconds: float
    notes: list[str] = field(default_factory=list)
    passes: int = 1  # how many times the scan read its target from the start
    cached: bool = False  # passes after the first may have come from a cache (the engine says)


@dataclass
class PointMeasurement:
    """The result of one point. ``requests``/``bytes`` come from ``source``: the engine's
    counter deltas when it has them, else the client's own count."""

    point_id: str
    kind: str
    sessions: int
    io_size_kb: float | None
    started_at: str
    finished_at: str
    seconds: float
    requests: int
    bytes: int
    source: str
    knobs_applied: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    client: dict[str, Any] = field(default_factory=dict)
    latency_hist_us: dict[str, int] = field(default_factory=dict)
    latency_us: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    passes: int = 1
    cached: bool = False

    @property
    def iops(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    @property
    def throughput_kbps(self) -> float:
        return self.bytes / 1024 / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["iops"] = round(self.iops, 2)
        d["throughput_kbps"] = round(self.throughput_kbps, 2)
        d["effective_io_kb"] = round(self.bytes / 1024 / self.requests, 2) if self.requests else None
        return d


# The sweep's options are the run input's ``benchmark`` section itself: its defaults are written once.
SweepOptions = Benchmark


class RandomReader(Protocol):
    def read_block(self, locator: dict[str, Any], file_id: int, block: int) -> None: ...

    def close(self) -> None: ...


class BenchDriver(Protocol):
    engine: str

    def capabilities(self) -> dict[str, Any]: ...

    def io_size_points(self, options: SweepOptions, target: SweepTarget) -> list[PointSpec]: ...

    def counters(self) -> dict[str, float]: ...

    def counts_reads_of(self, spec: PointSpec) -> bool:
        """Whether the engine's counters see this point's reads; if not, a counter delta is other
        sessions' IO (autovacuum, the catalogue) and the point's rate comes from the client's count."""
        ...

    def latency_histogram(self) -> dict[str, int] | None: ...

    def scan(self, spec: PointSpec, target: SweepTarget, deadline: float) -> ScanResult: ...

    def random_reader(self) -> RandomReader: ...

    # Optional, looked up with getattr (a driver without it is complete):
    #     def random_point_notes(self, point_id: str) -> list[str]: ...
    # called once a random point's (or a probe's) reader sessions are all closed; the driver says what
    # it saw in those sessions (Oracle: their V$SESSION_EVENT waits), recorded in the point's notes.

    def write_point(self, spec: PointSpec, deadline: float, scratch: Scratch) -> ScanResult: ...

    def drop_scratch(self, scratch: Scratch) -> Dropped: ...

    def close(self) -> None: ...
