"""What the report reads of the parts of ``Findings`` that the record keeps as another phase wrote them (pure).

``dal.records.findings`` keeps some parts as written (``Json``: the instance's facts, a local run's emulated volume,
the estimate, a probe's latency percentiles ...): their writers are elsewhere, and the record writes them back
byte for byte. The report only reads, so it reads them typed: ``ReportFindings`` is ``Findings`` with those parts as
the small open models below (every field optional, unknown fields kept). A ``Findings`` is read into it through its
stored mapping (``reading.findings_of``); it is never written.
"""

from __future__ import annotations

from pydantic import BaseModel, field_validator

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


def _mapping_or_none(value: Json) -> Json:
    """A part that is not a mapping reads as not there (as the report has always read it)."""
    return value if isinstance(value, dict) else None


class LimitLevel(OpenSection):
    """One level of the analysis' effective limits (``analysis.limits``): its IOPS and throughput, what set each,
    and the crossover they predict."""

    iops: Json = None
    iops_label: Json = None
    throughput_kbps: Json = None
    throughput_label: Json = None
    crossover_kb: Json = None


class EffectiveLimits(LimitLevel):
    """``benchmark.limits.effective``: a peak and a sustained level where the volume bursts, else one level (its own
    fields)."""

    peak: LimitLevel | None = None
    sustained: LimitLevel | None = None
    has_burst: Json = None

    _levels = field_validator("peak", "sustained", mode="before")(_mapping_or_none)

    def named(self) -> list[tuple[str, LimitLevel | None]]:
        """The peak and the sustained level, by name (None: not there)."""
        return [("peak", self.peak), ("sustained", self.sustained)]


class Limits(OpenSection):
    """``benchmark.limits``: the analysis' own mapping (``analysis.limits.expected_limits``), shown key by key; the
    report reads its effective levels."""

    effective: EffectiveLimits | None = None

    _effective = field_validator("effective", mode="before")(_mapping_or_none)


def limits_of(limits: Json) -> Limits:
    """The analysis' limits as the report reads them (none: not a mapping)."""
    return Limits.model_validate(limits) if isinstance(limits, dict) else Limits()


class Source(OpenSection):
    """A source the analysis' limits cite: its title, address and version."""

    title: Json = None
    url: Json = None
    version: Json = None


class Capabilities(OpenSection):
    """``benchmark.capabilities``: the engine's benchmark capabilities, each shown as it is; the report reads its
    notes and its IO-size knobs."""

    notes: Json = None
    knobs: Json = None


class YieldSample(OpenSection):
    """One decision of the yield controller (``warmup.slots.yielding_findings``)."""

    t_s: Json = None
    level: Json = None
    app_reads_per_s: Json = None
    app_ms_per_read: Json = None
    decision: Json = None


class YieldingSection(OpenSection):
    """``warmup.concurrency.yielding``: the yield controller's decisions, one sample a window."""

    samples: list[YieldSample] = []

    _samples = field_validator("samples", mode="before")(
        lambda value: [s for s in value if isinstance(s, dict)] if isinstance(value, list) else [])


class JudgedThresholds(OpenSection):
    """``verdict.thresholds``: the thresholds the run was judged by (``models.run_input.Thresholds``), as recorded;
    the report reads those a passed check's allowance names."""

    fast_read_ms: Json = None
    min_warm_speedup: Json = None
    min_coverage_pct: Json = None
    tolerance_pct: Json = None


class Connection(OpenSection):
    """``plan.connection``: how the run's reads reached the database (``warmup.discovery.Connection``)."""

    transport: Json = None
    read_only_guard: Json = None


class PlanPart(OpenSection):
    """``plan``: the plan's summary, kept as written; the report reads its connection."""

    connection: Connection | None = None

    _connection = field_validator("connection", mode="before")(_mapping_or_none)


class BlueGreen(OpenSection):
    note: str | None = None
    green: Json = None


class BenchmarkMetrics(OpenSection):
    """``benchmark.metrics``: the CloudWatch datapoints that never arrived, and whether every one did."""

    missing: list[Json] = []
    complete: Json = None


# -- the record with those parts typed -------------------------------------------------------------------------------
Histogram = dict[str, Num]  # ``latency_hist_us``: reads per latency bucket (``measure.model.histogram``)


class ReportProbe(Probe):
    latency_us: Latency | None = None
    latency_hist_us: Histogram | None = None
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
    latency_hist_us: Histogram | None = None


class ReportBenchmark(BenchmarkSection):
    probes: Probes = Probes()
    crossover: Crossover | None = None
    crossover_theoretical_kb: Num | None = None
    points: list[ReportPoint] = []
    metrics: BenchmarkMetrics | None = None
    failed_points: list[ReportPoint] = []


class ReportConcurrency(Concurrency):
    after_hot_set: AfterHotSet | None = None
    yielding: YieldingSection | None = None

    _yielding = field_validator("yielding", mode="before")(_mapping_or_none)


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
