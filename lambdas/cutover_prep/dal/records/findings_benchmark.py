"""The benchmark's sections of findings.json (``benchmark``: probes, sweep points, their target and errors)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from cutover_prep.dal.records.section import Json, Num, OpenSection, Section


# -- the benchmark -------------------------------------------------------------------------------------------------
class BenchmarkError(Section):
    error: Json = None
    cause: Json = None


class Probe(OpenSection):
    """One probe (``probe-cold`` / ``probe-warm``): its point item's fields that are set."""

    status: str | None = None
    blocks_planned: int | None = None
    blocks_read: int | None = None
    overlap_blocks: int | None = None
    cold_sample_blocks: int | None = None
    iops: Num | None = None
    throughput_kbps: Num | None = None
    latency_us: Json = None
    latency_hist_us: Json = None
    timed_by: Json = None
    client_latency_us: Json = None
    started_at: str | None = None
    finished_at: str | None = None
    cut_short: Json = None
    note: Json = None
    sized: Json = None
    cause: Json = None


class CloudWatchMean(Section):
    mean: Num | None = None
    max: Num | None = None
    status: str | None = None


class SweepPoint(OpenSection):
    """One sweep point: its point item's fields that are set, its bound and its CloudWatch means."""

    point_id: str | None = None
    status: str | None = None
    kind: str | None = None
    sessions: int | None = None
    io_size_kb: Num | None = None
    effective_io_kb: Num | None = None
    iops: Num | None = None
    throughput_kbps: Num | None = None
    latency_us: Json = None
    latency_hist_us: Json = None
    source: Json = None
    knobs_applied: Json = None
    started_at: str | None = None
    finished_at: str | None = None
    seconds: Num | None = None
    notes: Json = None
    error: Json = None
    cause: Json = None
    bound: Json = None
    cloudwatch: dict[str, CloudWatchMean] = {}


class BenchmarkTarget(Section):
    segment: Json = None
    bytes: int | None = None


class BenchmarkSection(OpenSection):
    """``benchmark``: the probes, the sweep points and the analysis's conclusions (its keys as the analysis wrote
    them)."""

    status: str | None = None
    error: BenchmarkError | None = None
    probes: dict[str, Probe] = {}
    points: list[SweepPoint] = []
    capabilities: Json = None
    target: BenchmarkTarget | None = None
    crossover_kb: Json = None
    limits: Json = None
    measured: Json = None
    burst: Json = None
    cold_warm: Json = None
    conclusions: Json = None
    notes: Json = None
    metrics: Json = None
    failed_points: list[dict[str, Any]] = []

    def probe(self, phase: str) -> Probe:
        """The ``cold`` or ``warm`` probe; an empty one when it is not there."""
        return self.probes.get(phase) or Probe()


# -- what the findings read of the benchmark's evidence (``benchmark.evidence``): the rest of it is kept as written
class CloudWatchMetric(BaseModel):
    """One metric of a sweep point's window in ``metrics/cloudwatch.json``."""

    mean: Num | None = None
    max: Num | None = None
    status: str | None = None


class CloudWatchWindow(BaseModel):
    metrics: dict[str, CloudWatchMetric] | None = None


class CloudWatchEvidence(BaseModel):
    """``metrics/cloudwatch.json`` as the findings read it: each sweep point's window of metrics."""

    windows: dict[str, CloudWatchWindow | None] | None = None


class AnalysisPoint(BaseModel):
    """A point of ``analysis.json``: its id and what bound it (``analysis.io``)."""

    point_id: str | None = None
    bound: str | None = None


class AnalysisTarget(BaseModel):
    """``analysis.json``'s ``target``: the segment the sweep read, its extents ``[file, first block, blocks]`` and
    block size (the findings keep the segment and its bytes)."""

    segment: str | None = None
    extents: list[tuple[int | str, int, int]] = []
    block_size: int = 0


class AnalysisEvidence(BaseModel):
    """What the findings read of ``analysis.json`` besides the keys they keep as written."""

    points: list[AnalysisPoint] | None = None
    target: AnalysisTarget | None = None
