"""The benchmark's evidence documents as the benchmark reads them back (``benchmark.steps``, ``benchmark.evidence``).

- ``SweepPlan``: ``sweep/plan.json``, the sweep's points, their target and the engine's capabilities (written
  whole from the record; a plan of before, without ``schema_version``, reads as version 1);
- ``Measured``: what a probe or a sweep point measured (``probes/<phase>.json``, ``sweep/points/<id>.json``, the
  point item), as far as the steps read it; the documents themselves are the measurement's own JSON
  (``measure.runner``), kept as written;
- ``CloudWatchEvidence``: ``metrics/cloudwatch.json`` (``metrics.collect_windows``) as far as the analysis reads it.

Every model keeps the fields it does not name (``extra="allow"``): the documents are read, never rewritten from
these, except the sweep plan.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, InstanceOf, field_serializer, field_validator

from cutover_prep.dal.records.base import Record
from cutover_prep.engines.bench import PointSpec, SweepTarget

Number = int | float  # kept as written: an int stays an int


class Percentiles(BaseModel):
    """``latency_us``: a measurement's latency percentiles, in microseconds."""

    model_config = ConfigDict(extra="allow")

    p50: Number | None = None
    p99: Number | None = None


class Capabilities(BaseModel):
    """What the steps read of an engine driver's capabilities (``BenchDriver.capabilities``): its notes."""

    model_config = ConfigDict(extra="allow")

    notes: list[str] = []


class Measured(Record):
    """A probe's or a sweep point's measurement (or its point item): the figures the steps hand on."""

    point_id: str | None = None
    phase: str | None = None
    kind: str | None = None
    status: str | None = None
    sessions: int | None = 1
    io_size_kb: Number | None = None
    effective_io_kb: Number | None = None
    requests: int | None = None
    blocks_read: int | None = None
    overlap_blocks: int | None = None
    iops: Number | None = None
    throughput_kbps: Number | None = None
    latency_us: Percentiles | None = None
    seconds: Number | None = None
    started_at: str | None = None
    finished_at: str | None = None


class SweepPlan(Record):
    """``sweep/plan.json``: the points the sweep measures (the Map's items), what the scans read, the engine's
    capabilities as its driver reported them and the notes of the planning."""

    run_id: str | None = None
    created_at: str | None = None
    engine: str | None = None
    capabilities: dict[str, Any] | None = None  # the engine driver's own report (``BenchDriver.capabilities``)
    target: InstanceOf[SweepTarget] | None = None
    points: list[InstanceOf[PointSpec]] = []
    write_cap_bytes: int | None = None
    notes: list[str] = []

    @field_validator("target", mode="before")
    @classmethod
    def _target_of(cls, value: object) -> object:
        return SweepTarget.from_json(value) if isinstance(value, dict) else value

    @field_validator("points", mode="before")
    @classmethod
    def _points_of(cls, value: object) -> object:
        return [PointSpec.from_json(p) if isinstance(p, dict) else p for p in value] if isinstance(value, list) \
            else value

    @field_serializer("target")
    def _target_json(self, target: SweepTarget | None) -> object:
        return target.to_json() if target is not None else None

    @field_serializer("points")
    def _points_json(self, points: list[PointSpec]) -> object:
        return [p.to_json() for p in points]

    def document(self) -> dict[str, Any]:
        """The document to store: every field, ``null`` ones too (as the plan has always been written)."""
        return self.model_dump(mode="json")

    def point_json(self) -> list[object]:
        """The points as the Map hands them on, one ``PointSpec.to_json`` each."""
        return [p.to_json() for p in self.points]


class CloudWatchMetric(BaseModel):
    """One metric over one point's window: its mean and its datapoints (``[time, value]``)."""

    model_config = ConfigDict(extra="allow")

    mean: Number | None = None
    points: list[tuple[str, Number]] | None = None


class CloudWatchWindow(BaseModel):
    model_config = ConfigDict(extra="allow")

    metrics: dict[str, CloudWatchMetric] = {}


class CloudWatchEvidence(BaseModel):
    """``metrics/cloudwatch.json``: each point's window (by point id), whether every required datapoint arrived and
    which are missing (``point_id/metric``)."""

    model_config = ConfigDict(extra="allow")

    complete: bool | None = None
    missing: list[str] | None = None
    windows: dict[str, CloudWatchWindow] = {}

    def mean(self, point_id: str, metric: str) -> Number | None:
        """The metric's mean over the point's window (None: not there)."""
        window = self.windows.get(point_id)
        found = window.metrics.get(metric) if window else None
        return found.mean if found else None

    def series(self, metric: str) -> list[float] | None:
        """The metric's datapoints over every window, by time (one value a time), or None without any."""
        points = [p for w in self.windows.values() if (m := w.metrics.get(metric)) for p in m.points or []]
        values = [v for _, v in sorted({ts: v for ts, v in points}.items())]
        return values or None
