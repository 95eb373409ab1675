"""What a benchmark point or probe measured, engine-independent.

Each point runs alone, for its ``seconds``, in its own recorded time window (UTC ISO timestamps), so
CloudWatch / Enhanced Monitoring data can be matched to it afterwards. ``PointMeasurement`` is its result;
the latency histogram's buckets and the percentiles are computed here from the reads' latencies.

What a point is (``PointSpec``), what it reads (``SweepTarget``) and the driver that runs it for each engine
(``BenchDriver``) are the engines' (``engines/bench.py``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

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
class ClientCount:
    """What the client itself counted of a point: its read or write calls and bytes, and their rates."""

    requests: int
    bytes: int
    iops: float
    throughput_kbps: float


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
    client: ClientCount | None = None
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
