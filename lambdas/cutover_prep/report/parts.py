"""What the report reads of the parts of ``Findings`` that the record keeps as another phase wrote them (pure).

``dal.records.findings`` keeps some parts as written (``Json``: the instance's facts, a local run's emulated volume,
the estimate, a probe's latency percentiles ...): their writers are elsewhere, and the record writes them back
byte for byte. The report only reads, so it reads them typed: ``ReportFindings`` is ``Findings`` with those parts as
the small open models below (every field optional, unknown fields kept). A ``Findings`` is read into it through its
stored mapping (``reading.findings_of``); it is never written.
"""

from __future__ import annotations

from pydantic import BaseModel

from cutover_prep.dal.records.findings import Concurrency, Findings, WarmupSection
from cutover_prep.dal.records.findings_benchmark import BenchmarkSection, Probe, SweepPoint
from cutover_prep.dal.records.findings_storage import StorageInitialization
from cutover_prep.dal.records.section import Json, Num, OpenSection


def present(part: BaseModel | None) -> bool:
    """A part the document holds with something in it: None and ``{}`` are both a part not recorded (the report
    has always read them alike)."""
    return part is not None and bool(part.model_fields_set or part.model_extra)


class Latency(OpenSection):
    """``latency_us`` / ``client_latency_us`` of a probe or a point: percentiles in microseconds."""

    p50: Num | None = None
    p90: Num | None = None
    p95: Num | None = None
    p99: Num | None = None
    mean: Num | None = None
    max: Num | None = None


class EmulationProfile(OpenSection):
    storage_type: Json = None
    allocated_gb: Json = None
    instance_class: Json = None
    time_scale: Json = None
    limits: Json = True  # the emulated volume's caps on (an older profile: on)


class WarmupServed(OpenSection):
    """``storage_emulation.warmup_served`` (``findings.emulation.warmup_served``)."""

    mib_per_s: Num | None = None
    busy_seconds: Num | None = None
    window_seconds: Num | None = None
    to_ceiling: Num | None = None
    reads_in_hand: Num | None = None


class StorageEmulation(OpenSection):
    """``storage_emulation``: a local run's emulated restored volume (``local.emulated``), or why it had none."""

    emulated: bool = False
    reason: Json = None
    profile: EmulationProfile | None = None
    hydrated_pct: Num | None = None
    first_touch_ms: Num | None = None
    ceiling_mib_per_s: Num | None = None
    warmup_mib_per_s: Num | None = None
    warmup_to_ceiling: Num | None = None
    warmup_served: WarmupServed | None = None


class EstimateFigures(OpenSection):
    """``estimate.estimate`` / ``.actual`` / ``.ratios`` (``estimate.run.estimate_section``)."""

    bytes_to_read: Num | None = None
    estimated_seconds: Num | None = None
    assumed_mib_per_s: Num | None = None
    source: Json = None
    bytes_read: Num | None = None
    warmup_seconds: Num | None = None
    mib_per_s: Num | None = None
    seconds: Num | None = None


class EstimateSection(OpenSection):
    estimate: EstimateFigures | None = None
    actual: EstimateFigures | None = None
    ratios: EstimateFigures | None = None


class Instance(OpenSection):
    """``instance``: the instance's facts (RDS's, or a local run's emulated ones or its stand-in)."""

    engine: Json = None
    engine_version: Json = None
    stand_in: Json = None
    emulated: bool | None = None
    db_instance_class: Json = None
    storage_type: Json = None
    allocated_storage_gb: Json = None
    iops: Json = None
    storage_throughput: Json = None
    db_name: Json = None
    monitoring_interval: Json = None


class Target(OpenSection):
    db_instance_identifier: Json = None
    engine: Json = None


class AfterHotSet(OpenSection):
    """``warmup.concurrency.after_hot_set``: the volume given back once the hot set was warm."""

    max_concurrency: Num | None = None
    t_s: Num | None = None
    holders_then: Num | None = None
    admitted: Num | None = None
    most_holders: Num | None = None


class BlueGreen(OpenSection):
    note: str | None = None
    green: Json = None


class BenchmarkMetrics(OpenSection):
    """``benchmark.metrics``: the CloudWatch datapoints that never arrived, and whether every one did."""

    missing: list[Json] = []
    complete: Json = None


# -- the record with those parts typed -------------------------------------------------------------------------------
class ReportProbe(Probe):
    latency_us: Latency | None = None
    client_latency_us: Latency | None = None


class Probes(OpenSection):
    """``benchmark.probes``: the cold and the warm probe."""

    cold: ReportProbe | None = None
    warm: ReportProbe | None = None

    @property
    def cold_given(self) -> bool:
        return present(self.cold)

    @property
    def warm_given(self) -> bool:
        return present(self.warm)


class Crossover(OpenSection):
    """``benchmark.crossover``: the analysis' crossover, measured and predicted (``analysis.io``)."""

    measured_kb: Num | None = None
    theoretical_peak_kb: Num | None = None
    theoretical_sustained_kb: Num | None = None


class ReportPoint(SweepPoint):
    latency_us: Latency | None = None


class ReportBenchmark(BenchmarkSection):
    probes: Probes = Probes()
    crossover: Crossover | None = None
    crossover_theoretical_kb: Num | None = None
    points: list[ReportPoint] = []
    metrics: BenchmarkMetrics | None = None
    failed_points: list[ReportPoint] = []


class ReportConcurrency(Concurrency):
    after_hot_set: AfterHotSet | None = None


class ReportWarmup(WarmupSection):
    concurrency: ReportConcurrency | None = None


class ReportStorageInitialization(StorageInitialization):
    blue_green: BlueGreen | None = None


class ReportFindings(Findings):
    """``Findings`` as the report reads it (see the module)."""

    target: Target | None = None
    instance: Instance | None = None
    benchmark: ReportBenchmark | None = None
    warmup: ReportWarmup | None = None
    storage_emulation: StorageEmulation | None = None
    storage_initialization: ReportStorageInitialization | None = None
    estimate: EstimateSection | None = None



ReadIOPS, ReadThroughput = "ReadIOPS", "ReadThroughput"  # the CloudWatch metrics a point's ``cloudwatch`` holds
