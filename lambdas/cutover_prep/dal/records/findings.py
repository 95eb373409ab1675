"""The findings of a run (``findings.json``; docs/findings.md): ``Findings`` and one model per section.

What Finalize writes is exactly what it wrote before these models: the same fields in the same order, a field
left out where it was left out and ``null`` where it was ``null``. So the models are read and stored by
``exclude_unset`` rather than ``Record``'s "no ``None``" rule (``Findings.stored``): a field a document does not
hold (a run of before it existed) keeps its default on reading and is not written back. The fields are declared in
the order ``findings.document`` and ``findings.finalize`` build them; numbers that are an ``int`` in one run and a
``float`` in another (a sum of DynamoDB numbers, a ``round``) are ``Num``, so neither is turned into the other.

``extra="forbid"`` on a section whose shape is fully built by the findings (counts, timings, rates, rows the
findings compute): a misspelt field fails. ``extra="allow"`` where the content is another phase's record passed
through (the plan's summary and segments' fields, the benchmark's analysis, the warm-up's control) or where a newer
writer may add a field an older reader must keep (the document itself, ``warmup``): nothing is lost on a read and
a write.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from cutover_prep.dal.records.base import Record
from cutover_prep.dal.records.findings_benchmark import BenchmarkSection
from cutover_prep.dal.records.findings_census import CensusSection
from cutover_prep.dal.records.findings_estimate import EstimateFindings
from cutover_prep.dal.records.findings_storage import StorageInitialization, VolumesSection
from cutover_prep.dal.records.run import ControlRate
from cutover_prep.dal.records.run_input import RecordedTarget
from cutover_prep.dal.records.section import Json, Num, OpenSection, Section, SegmentNames


# -- counts and times ----------------------------------------------------------------------------------------------
class Timings(Section):
    started_at: str | None = None
    warmup_started_at: str | None = None
    warmup_finished_at: str | None = None
    finished_at: str | None = None
    warmup_wall_seconds: Num | None = None
    unit_busy_seconds: Num = 0


class UnitCounts(Section):
    total: int = 0
    done: int = 0
    failed: int = 0
    in_progress: int = 0
    not_started: int = 0


class ByteCounts(Section):
    planned: int = 0
    read: int = 0
    covered: int = 0
    gone: int = 0  # planned bytes truncated while the run ran (issue 32 §5; absent before)


class BlockCounts(Section):
    planned: int = 0
    read: int = 0


class Retries(Section):
    warmup_reads: int = 0
    benchmark_steps: int = 0  # set by Finalize after the document is built


class Reconnects(Section):
    count: int = 0
    units: int = 0
    longest_outage_seconds: Num | None = None


class ServerStarts(Section):
    """``server``: when the database server last started, as it said at Discover (``started_at``) and at the end
    census (``started_at_end``); ``restarted``: they differ (None: one was not read); the instance's availability
    zone before Discover and at Finalize, as RDS said it, and ``failed_over``: they differ (None: not known);
    ``note``: what a restart or a failover means for the run."""

    started_at: str | None = None
    started_at_end: str | None = None
    restarted: bool | None = None
    availability_zone: str | None = None
    availability_zone_end: str | None = None
    failed_over: bool | None = None
    note: str | None = None


class ReadRate(Section):
    mib_per_s_wall: Num | None = None
    mib_per_s_per_worker: Num | None = None
    mib_per_s_database: Num | None = None  # the database's own rate (absent before it was measured)
    database_reading_seconds: Num | None = None


class TruncatedSegment(Section, SegmentNames):
    """``truncated[]``: a segment whose planned blocks no longer existed when its units read them."""

    bytes_planned: int = 0
    bytes_gone: int = 0
    reason: str | None = None


class FailedUnit(Section):
    unit_id: str
    error: str | None = None
    cause: str | None = None


class RatePoint(Section):
    t_s: Num
    mib_per_s: Num


class WarmupTimeline(Section):
    bucket_seconds: Num | None = None
    started_at: str | None = None
    series: list[RatePoint] = []


# -- segments and coverage -----------------------------------------------------------------------------------------
class SegmentRow(OpenSection):
    """``segments[]``: a planned segment with what was read of it (``findings.plan_pass``)."""

    key: str
    database: str | None = None
    schema_: str | None = Field(None, alias="schema")
    name: str | None = None
    kind: str | None = None
    bytes: int = 0
    blocks: int = 0
    status: str
    bytes_read: int = 0
    bytes_gone: int = 0
    gone_reason: str | None = None
    units: list[Json] = []


class SegmentCounts(Section):
    total: int = 0
    read: int = 0
    not_read: int = 0
    listed: int = 0
    listed_at_most: int = 0


class CoverageGroup(Section):
    """A row of ``coverage.by_database`` (database only) or ``coverage.by_schema`` (with schema and label)."""

    database: str | None = None
    schema_: str | None = Field(None, alias="schema")
    label: str | None = None
    segments: int = 0
    segments_read: int = 0
    bytes_planned: int = 0
    bytes_read: int = 0
    pct: Num = 100.0


class Relation(Section):
    """A row of ``coverage.largest``: a table with its indexes, TOAST and forks."""

    database: str | None = None
    schema_: str | None = Field(None, alias="schema")
    name: str | None = None
    label: str | None = None
    segments: int = 0
    bytes: int = 0
    bytes_read: int = 0
    status: str
    pct: Num = 100.0


class VolumeCoverage(Section):
    volume: str
    bytes_planned: int = 0
    bytes_read: int = 0
    bytes_unread: int = 0
    pct: Num = 100.0


class Coverage(Section):
    by_database: list[CoverageGroup] = []
    by_schema: list[CoverageGroup] = []
    largest: list[Relation] = []
    relations: int = 0
    by_volume: list[VolumeCoverage] | None = None  # only with RDS additional storage volumes


class RankGroup(Section):
    """A plan rank of ``priority.groups``: a priority pattern, the hot set, or the rest (``pattern`` None)."""

    pattern: str | None = None
    rank: int
    units: int = 0
    units_done: int = 0
    bytes: int = 0
    started_at: str | None = None
    finished_at: str | None = None
    finished_after_s: Num | None = None
    hot_set: bool | None = None


class Priority(Section):
    patterns: list[str] = []
    groups: list[RankGroup] = []
    followed: bool = True
    matched_nothing: list[str | None] = []


class HotSetSource(Section):
    order: int
    source: str
    detail: str | None = None


class HotSet(Section):
    sources: list[HotSetSource] = []
    engine: Json = None
    server: Json = None
    taken_at: Json = None
    relations: Json = None
    names: int = 0
    names_matched: int = 0
    unmatched: list[str] = []
    units: int = 0
    units_done: int = 0
    bytes: int = 0
    started_at: str | None = None
    warm_at: str | None = None
    warm_after_s: Num | None = None
    warmup_seconds: Num | None = None
    pct_of_warmup: Num | None = None
    later_units_finished_first: int | None = None
    followed: bool = True
    buffer_cache: bool = False


class UnreadUnit(Section):
    unit_id: str
    status: str
    priority: int | None = None
    bytes: int = 0
    bytes_read: int = 0
    segments: list[str] = []
    more_segments: int = 0
    cause: str | None = None


class TimeToWarm(Section):
    mib_per_s_wall: Num
    planned_bytes: int
    planned_seconds: Num
    production_bytes: int | None = None
    production_seconds: Num | None = None


class DatafilePass(Section):
    units: int = 0
    done: int = 0
    bytes: int = 0
    bytes_done: int = 0
    complete: bool = False


class OversizedSegment(OpenSection):
    """A segment too big for one work unit: the plan's entry (``warmup.modes``) and whether it was read."""

    key: str | None = None
    read_by: str | None = None
    status: str | None = None


# -- the warm-up's control and ETA ---------------------------------------------------------------------------------
class ConcurrencySample(Section):
    t_s: Num
    level: int
    mib_per_s: Num | None = None
    slots_wanted: Json = None


class Concurrency(OpenSection):
    adaptive: bool = False
    max_concurrency: int | None = None
    level: int | None = None
    settled: Json = None
    best_level: int | None = None
    best_mib_per_s: Num | None = None
    samples: list[ConcurrencySample] = []
    after_hot_set: Json = None


class EtaSample(Section):
    t_s: Num
    bytes_done: int
    eta_s: Num | None = None


class EtaAt(Section):
    pct: int
    t_s: Num
    predicted_s: Num
    actual_s: Num
    error_pct: Num | None = None


class EtaJudgement(Section):
    judged: bool = False
    actual_s: Num | None = None
    at: list[EtaAt] = []
    basis: str | None = None
    why: str | None = None


class SizingRate(ControlRate):
    """``warmup.sizing_rate``: the control item's rate, used for the first chunks (``then``), beside the rate a
    reader measured after them."""

    then: str | None = None
    measured_mib_per_s_per_reader: Num | None = None


class WarmupSection(OpenSection):
    """``warmup``: the concurrency over time, the rate the first chunks were sized from, and the ETA judged."""

    concurrency: Concurrency | None = None
    sizing_rate: SizingRate | None = None
    eta_samples: list[EtaSample] = []
    eta: EtaJudgement | None = None


# -- preflight, storage, volumes, scratch --------------------------------------------------------------------------
class PreflightCheck(Section):
    kind: Json = None
    name: Json = None
    status: Json = None
    detail: Json = None
    bytes: Json = None


class PreflightReportCheck(BaseModel):
    """A check of ``preflight.json`` (``engines.preflight.Check``) as the findings read it."""

    kind: Json = None
    name: Json = None
    status: Json = None
    detail: Json = None
    bytes: Json = None


class PreflightReport(BaseModel):
    """``preflight.json`` (the Preflight state's report, ``steps.preflight``) as the findings read it."""

    ok: bool | None = None
    seconds: Num | None = None
    on_failure: str | None = "fail"
    engine: str | None = None
    failed: list[str] | None = None
    checks: list[PreflightReportCheck] | None = None


class Preflight(Section):
    enabled: bool = True
    ok: bool | None = None
    seconds: Num | None = None
    on_failure: str | None = None
    engine: Json = None
    failed: list[Json] = []
    checks: list[PreflightCheck] = []


class Scratch(Section):
    created: list[str] = []
    removed: list[str] = []
    left: list[str] = []
    not_created: list[str] = []
    notes: list[str] = []


# -- the verdict ---------------------------------------------------------------------------------------------------
class Reason(Section):
    """One rule's answer (``verdict``): ``judged`` False only for a reason that could not be judged on the run."""

    code: str
    ok: bool
    message: str
    judged: bool | None = None


class VerdictSection(Section):
    verdict: str
    reasons: list[Reason] = []
    thresholds: dict[str, Any] = {}  # models.run_input.Thresholds as the run judged by them
    storage_initialization: str | None = None


# -- the document --------------------------------------------------------------------------------------------------
class Findings(Record):
    """``findings.json``: the fields in the order they are written (see the module). Unknown top-level fields are
    kept (a newer writer's)."""

    SCHEMA_VERSION: ClassVar[int] = 1

    run_id: str | None = None  # always written; an excerpt the verdict judges (a test's) may leave it out
    status: str | None = None
    target: RecordedTarget | None = None  # the run item's (records.run_input)
    started_by: Json = None
    instance: dict[str, Any] | None = None
    engine: str | None = None
    read_methods: list[str] = []
    read_methods_by_database: Json = None
    timings: Timings = Timings()
    units: UnitCounts = UnitCounts()
    bytes: ByteCounts | None = None
    blocks: BlockCounts = BlockCounts()
    coverage_pct: Num | None = None
    truncated: list[TruncatedSegment] = []
    truncated_segments: int | None = None  # how many (the list holds at most census.LISTED; absent before)
    read_amplification: Num | None = None
    retries: Retries = Retries()
    reconnects: Reconnects | None = None
    server: ServerStarts | None = None  # absent before 2026-11-28
    read_rate: ReadRate = ReadRate()
    plan: Json = None  # the plan's summary (the plan's record)
    failed_units: list[FailedUnit] = []
    warmup_timeline: WarmupTimeline | None = None
    benchmark: BenchmarkSection | None = None
    segments: list[SegmentRow] = []
    segment_counts: SegmentCounts | None = None
    coverage: Coverage | None = None
    priority: Priority | None = None
    hot_set: HotSet | None = None
    unread_units: list[UnreadUnit] = []
    time_to_warm: TimeToWarm | None = None
    warmup_mode: str | None = None
    datafile_pass: DatafilePass | None = None
    oversized_segments: list[OversizedSegment] = []
    census: CensusSection | None = None
    segments_evidence: str | None = None  # every planned segment (segments.jsonl)
    warmup: WarmupSection | None = None
    preflight: Preflight | None = None
    storage_emulation: dict[str, Any] | None = None  # a local run's emulated volume (its own evidence)
    storage_initialization: StorageInitialization | None = None
    volumes: VolumesSection | None = None
    scratch: Scratch | None = None
    estimate: EstimateFindings | None = None  # estimate.run.estimate_section
    dashboard: str | None = None
    verdict: VerdictSection | None = None

    def stored(self) -> dict[str, Any]:
        """The document as written: the fields it holds, ``null`` where it says ``null`` (see the module)."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)
