"""What the IO analysis reads and judges (``analysis.io``): a point as handed in (``PointRow``), a point or probe
as measured (``Measured``, ``PointIn``, ``Probes``: read at entry, pydantic), a point as judged (``Row``) and what
the analysis finds (``MeasuredMax``, ``Crossover``, ``Burst``, ``ColdWarm``: written as the analysis document's
sections)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Annotated, Any, NotRequired, TypedDict

from pydantic import BaseModel, BeforeValidator

LATENCY_KEYS = ("p50", "p95", "p99", "mean")
BOUND_AT = 0.85  # a point within 85 % (to 120 %) of a cap is bound by it


def num(value: Any) -> float | None:
    """A number as the analysis reads it: empty and NaN are None, a boolean is refused."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    number = float(value)
    if math.isnan(number):
        return None
    return number


Number = Annotated[float | None, BeforeValidator(num)]  # empty and NaN are None, a boolean is refused


class PointRow(TypedDict, total=False):
    """A benchmark point as it is handed in: a ``cutover-prep analyze`` CSV row (``sweep/points.csv``'s columns);
    any may be absent, a number may come as text."""

    point_id: str
    kind: str
    sessions: int | float | str | None
    io_size_kb: float | str | None
    iops: float | str | None
    throughput_kbps: float | str | None
    latency_p50_us: float | str | None
    latency_p99_us: float | str | None
    burst_balance: float | str | None
    seconds: float | str | None


class Measured(BaseModel):
    """What a point or a probe measured, as the analysis reads it: its rates and latencies."""

    iops: Number = None
    throughput_kbps: Number = None
    latency_us: dict[str, Number] | None = None
    latency_p50_us: Number = None
    latency_p95_us: Number = None
    latency_p99_us: Number = None

    def latency(self) -> dict[str, float] | None:
        """The latency percentiles and mean (µs): ``latency_us``'s, each overridden by its own column."""
        lat = {k: v for k, v in (self.latency_us or {}).items() if k in LATENCY_KEYS}
        for key, value in (("p50", self.latency_p50_us), ("p95", self.latency_p95_us), ("p99", self.latency_p99_us)):
            if value is not None:
                lat[key] = value
        found = {k: v for k, v in lat.items() if v is not None}
        return found or None


class PointIn(Measured):
    """One benchmark point (a ``cutover-prep analyze`` CSV row, or the sweep's row of it)."""

    point_id: str | None = None
    kind: str | None = None
    sessions: Number = None
    io_size_kb: Number = None
    burst_balance: Number = None
    seconds: Number = None


class Probes(BaseModel):
    """The cold and warm probes (each as the benchmark stored it)."""

    cold: Measured | None = None
    warm: Measured | None = None


@dataclass(frozen=True)
class Row:
    """A point as the analysis judges it (``points`` of the result)."""

    point_id: str
    kind: str | None
    sessions: int | None
    io_size_kb: float | None
    effective_io_kb: float | None
    iops: float | None
    throughput_kbps: float | None
    bound: str | None = None
    bound_basis: str | None = None
    limit_level: str | None = None
    pct_iops_limit: float | None = None
    pct_throughput_limit: float | None = None
    iops_above_limit: bool = False
    burst_balance: float | None = None
    seconds: float | None = None
    latency_us: dict[str, float] | None = None

    def document(self) -> dict[str, Any]:
        doc = asdict(self)
        if self.latency_us is None:
            del doc["latency_us"]
        return doc


def size_of(row: Row) -> float | None:
    return row.effective_io_kb if row.effective_io_kb is not None else row.io_size_kb


def valid(row: Row) -> bool:
    return bool(row.iops and row.throughput_kbps and row.iops > 0 and row.throughput_kbps > 0)


def is_sequential(row: Row) -> bool:
    return row.kind in (None, "sequential")


def latency_at(latency: dict[str, float] | None, key: str) -> float | None:
    """One figure of a latency summary (``p50``, ``p99``), None when it has none."""
    return (latency or {}).get(key)


class MeasuredMax(TypedDict):
    """The analysis' ``measured``: the highest IOPS and throughput and where they were reached (the points only
    when a point was valid)."""

    points: int
    max_iops: float | None
    max_iops_at_kb: float | None
    max_iops_point: NotRequired[str]
    max_throughput_kbps: float | None
    max_throughput_mb_s: float | None
    max_throughput_at_kb: float | None
    max_throughput_point: NotRequired[str]


@dataclass(frozen=True)
class Crossover:
    """The crossover measured (the first throughput-bound IO size above an IOPS-bound one) and predicted."""

    measured_kb: float | None
    last_iops_bound_kb: float | None
    first_throughput_bound_kb: float | None
    clean: bool
    theoretical_kb: float | None
    theoretical_level: str | None
    theoretical_peak_kb: float | None
    theoretical_sustained_kb: float | None


@dataclass(frozen=True)
class Burst:
    """How the gp2 burst balance went during the sweep, and when it runs empty."""

    source: str
    samples: int
    first_pct: float
    last_pct: float
    min_pct: float
    minutes: float
    rate_pct_per_min: float
    draining: bool
    empty: bool
    minutes_to_empty: float | None
    baseline_iops: float | None
    baseline_label: str | None


@dataclass(frozen=True)
class ColdWarm:
    """The probes of the same blocks before and after the warm-up, side by side."""

    cold_iops: float
    warm_iops: float
    ratio: float
    penalty_pct: float
    cold_throughput_kbps: float | None
    warm_throughput_kbps: float | None
    cold_latency_us: dict[str, float] | None
    warm_latency_us: dict[str, float] | None
    latency_p50_ratio: float | None
