"""What each benchmark step answers the workflow (its ``ResultPath``), as ``StepResult`` models: ``to_json`` gives
the fields the step set, in the order it has always written them."""

from __future__ import annotations

from pydantic import InstanceOf, field_serializer

from cutover_prep.dal.records.sweep import Number
from cutover_prep.engines.bench import PointSpec
from cutover_prep.models.steps import StepResult


class ProbeResult(StepResult):
    """Probe's answer: the probe's status, and what it read when it ran (``reused``: measured before)."""

    phase: str | None
    status: str
    blocks_read: int | None = None
    iops: Number | None = None
    p50_us: Number | None = None
    reused: bool | None = None
    overlap_blocks: int | None = None


class SweepPlanned(StepResult):
    """PlanSweep's answer: the points the sweep Map measures (``PointSpec.to_json`` each)."""

    points: list[InstanceOf[PointSpec]]
    count: int
    reused: bool

    @field_serializer("points")
    def _points_json(self, points: list[PointSpec]) -> object:
        return [p.to_json() for p in points]


class PointResult(StepResult):
    """RunPoint's answer: the point measured (its rates and window), or why it was skipped."""

    point_id: str | None
    status: str
    cause: str | None = None
    iops: Number | None = None
    throughput_kbps: Number | None = None
    started_at: str | None = None
    finished_at: str | None = None
    reused: bool


class PointFailureRecorded(StepResult):
    """The sweep point Catch's answer: the point's status, and whether this failure was recorded."""

    point_id: str
    status: str | None
    error: str | None = None
    recorded: bool


class BenchmarkFailureRecorded(StepResult):
    """The benchmark Catch's answer: the failure recorded on the run."""

    status: str
    error: str
    cause: str


class MetricsPoll(StepResult):
    """CollectMetrics's answer: the poll it was, whether to stop polling, and what has arrived."""

    attempt: int
    done: bool
    complete: bool
    windows: int
    missing: int


class Analyzed(StepResult):
    """Analyze's answer: the benchmark's status and the analysis's headline figures."""

    status: str
    points: int
    failed: int
    crossover_kb: Number | None
    conclusions: int
