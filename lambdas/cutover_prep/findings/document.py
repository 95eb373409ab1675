"""The findings document of a run (``findings.json``, schema_version 1; see docs/findings.md), pure.

``build_record`` combines the plan, the unit items and the run item;
``benchmark_section`` the probes, the sweep points and the analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

from cutover_prep.dal.records.census import CatchUp, CensusObjectJson
from cutover_prep.dal.records.findings import (
    BlockCounts,
    ByteCounts,
    Coverage,
    FailedUnit,
    Findings,
    Preflight,
    PreflightCheck,
    PreflightReport,
    ReadRate,
    Reconnects,
    Retries,
    SegmentCounts,
    SegmentRow,
    Timings,
    TruncatedSegment,
    UnitCounts,
    WarmupSection,
)
from cutover_prep.dal.records.findings_benchmark import (
    AnalysisEvidence,
    BenchmarkError,
    BenchmarkSection,
    BenchmarkTarget,
    CloudWatchEvidence,
    CloudWatchMean,
    Probe,
    SweepPoint,
)
from cutover_prep.dal.records.findings_census import EndCensusFailure, UnreadObject
from cutover_prep.dal.records.plan import Plan, PlanUnit
from cutover_prep.dal.records.run import PointItem, RunItem
from cutover_prep.dal.records.units import UnitProgress, progress_by_unit
from cutover_prep.dal.store import now_iso
from cutover_prep.engines.base import GONE_TRUNCATED
from cutover_prep.findings.census import LISTED, census_section
from cutover_prep.findings.coverage import (
    NOT_STARTED,
    READ,
    Groups,
    Items,
    hot_set_section,
    priority_section,
    time_to_warm,
)
from cutover_prep.findings.eta import EtaFindings
from cutover_prep.findings.modes import findings_fields
from cutover_prep.findings.plan_pass import PlanPass
from cutover_prep.findings.server import server_section
from cutover_prep.findings.timeline import database_reading, warmup_timeline, warmup_wall
from cutover_prep.models.status import BenchmarkStatus, RunStatus, UnitStatus

SCHEMA_VERSION = Findings.SCHEMA_VERSION
PROBE_FIELDS = tuple(Probe.model_fields)  # a probe's point item fields the findings keep, when set
POINT_FIELDS = tuple(f for f in SweepPoint.model_fields if f not in ("bound", "cloudwatch"))  # a sweep point's
ANALYSIS_KEYS = ("capabilities", "target", "crossover_kb", "limits", "measured", "burst", "cold_warm",
                 "conclusions", "notes", "metrics", "failed_points")  # analysis.json's, kept as it wrote them


def _set(item: PointItem, fields: tuple[str, ...], unset: tuple[object, ...]) -> dict[str, object]:
    """The point item's ``fields`` that it holds with a value not in ``unset``."""
    stored = item.stored()
    return {k: stored[k] for k in fields if k in stored and stored[k] not in unset}


def benchmark_section(run: RunItem, analysis: dict[str, Any] | None, point_items: Mapping[str, PointItem],
                      cloudwatch: dict[str, Any] | None) -> BenchmarkSection:
    """Pure: the probes, the sweep points (with their CloudWatch means) and the analysis (``analysis.json`` and
    ``metrics/cloudwatch.json``, open documents of the benchmark: the findings keep some of their keys as written)."""
    options = run.recorded_input().benchmark_options()
    status = run.benchmark_status or (BenchmarkStatus.DISABLED if options.enabled is False
                                      else BenchmarkStatus.NOT_RUN)
    error = ({"error": BenchmarkError(error=run.benchmark_error, cause=run.benchmark_cause)}
             if run.benchmark_error else {})
    probes = {phase: Probe.model_validate(_set(item, PROBE_FIELDS, (None,)))
              for phase in ("cold", "warm") if (item := point_items.get(f"probe-{phase}"))}
    read = AnalysisEvidence.model_validate(analysis or {})
    by_id = {p.point_id: p for p in read.points or []}
    windows = CloudWatchEvidence.model_validate(cloudwatch or {}).windows or {}
    points = []
    for pid, item in sorted(point_items.items()):
        if pid.startswith("probe-"):
            continue
        row = SweepPoint.model_validate(_set(item, POINT_FIELDS, (None, [], {})))
        if pid in by_id:
            row.bound = by_id[pid].bound
        metrics = (window.metrics if (window := windows.get(pid)) else None) or {}
        row.cloudwatch = {name: CloudWatchMean(mean=m.mean, max=m.max, status=m.status) for name, m in metrics.items()}
        points.append(row)
    kept = {k: analysis[k] for k in ANALYSIS_KEYS if k in analysis} if analysis else {}
    if "target" in kept and kept["target"] and read.target is not None:
        target = read.target
        kept["target"] = BenchmarkTarget(segment=target.segment,
                                         bytes=sum(e[2] for e in target.extents) * target.block_size)
    return BenchmarkSection.model_validate({"status": status, **error, "probes": probes, "points": points, **kept})


def warmup_section(concurrency: dict[str, Any], findings: Findings, eta: EtaFindings | None = None) -> WarmupSection:
    """Pure: ``warmup.concurrency`` (the level over time and where it settled; ``warmup.slots.concurrency_findings``)
    and ``warmup.sizing_rate`` (the rate the first chunks were sized from and its source; after them each unit used
    its own); ``eta``: ``eta_samples`` and ``eta`` (``findings.eta.eta_findings``)."""
    section = dict(concurrency)  # the slots' own account of the level over time
    if section["sizing_rate"] is not None:
        section["sizing_rate"] = {**section["sizing_rate"], "then": "first_chunks",
                                  "measured_mib_per_s_per_reader": findings.read_rate.mib_per_s_per_worker}
    warmup = WarmupSection.model_validate(section)
    if eta is not None:
        warmup.eta_samples, warmup.eta = eta.samples, eta.judgement
    return warmup


def preflight_section(run: RunItem, report: PreflightReport | None) -> Preflight | None:
    """Pure: the Preflight state's report (evidence ``preflight.json``, ``preflight.step``), one entry a check;
    ``{"enabled": false}`` when the run's input turned it off, None when the run has no preflight (a run
    started before it existed)."""
    if run.preflight is not None and run.preflight.enabled is False:
        return Preflight(enabled=False)
    if report is None:
        return None
    return Preflight(enabled=True, ok=bool(report.ok), seconds=report.seconds, on_failure=report.on_failure,
                     engine=report.engine, failed=list(report.failed or []),
                     checks=[PreflightCheck(**c.model_dump()) for c in report.checks or []])


TRUNCATED = GONE_TRUNCATED  # or GONE_REBUILT: an Oracle segment replaced by a new one (TRUNCATE, MOVE)


def truncated_row(s: SegmentRow) -> TruncatedSegment:
    """One entry of ``truncated``: a segment whose planned blocks no longer existed when its units read them (a
    VACUUM gave a table's empty tail back, a rebuild gave it new storage), with the bytes gone: out of the coverage's
    denominator, never counted as read."""
    return TruncatedSegment(key=s.key, database=s.database, schema=s.schema_, name=s.name, kind=s.kind,
                            bytes_planned=s.bytes, bytes_gone=s.bytes_gone, reason=s.gone_reason or TRUNCATED)


def truncated_section(segments: list[SegmentRow]) -> list[TruncatedSegment]:
    """``truncated``: every segment of ``segments`` with bytes gone, most bytes gone first (``truncated_row``)."""
    return [truncated_row(s) for s in sorted(segments, key=lambda s: (-s.bytes_gone, str(s.key))) if s.bytes_gone]


def reconnects_section(unit_items: Iterable[UnitProgress]) -> Reconnects:
    """Pure: the outages the warm-up rode out (issue 32 §4: a restart, a failover): how many, in how many
    units, and the longest, from each unit's ``reconnects`` and ``longest_outage_seconds`` (``retry.Retries``)."""
    hit = [i for i in unit_items if i.reconnects]
    longest = max((float(i.longest_outage_seconds or 0) for i in hit), default=None)
    return Reconnects(count=sum(i.reconnects for i in hit), units=len(hit),
                      longest_outage_seconds=None if longest is None else round(longest, 1))


class Censuses(NamedTuple):
    """The run's censuses as the findings take them (``findings.census``): the start census (the plan's) and the
    end census (census-end.json's), each streamed or listed in key order; the end census's catch-up reads, and why
    the end census did not run (its step's error) when it did not."""

    start: Iterable[CensusObjectJson] | None = None
    end: Iterable[CensusObjectJson] | None = None
    catch_up: list[CatchUp] | None = None
    end_failure: EndCensusFailure | None = None


def build_record(run: RunItem, plan: Plan, unit_items: Items, benchmark: BenchmarkSection | None = None, *,
                 units: Iterable[PlanUnit] = (), censuses: Censuses = Censuses(),
                 unread_sink: Callable[[UnreadObject], None] | None = None,
                 segment_sink: Callable[[SegmentRow], None] | None = None,
                 plan_pass: PlanPass | None = None, listed: int | None = None,
                 zone_end: str | None = None) -> Findings:
    """Pure: combine the plan, the unit items and the run item into the findings document. ``censuses``: the
    censuses in key order (``Censuses``); ``unread_sink`` is given every unread object of the census,
    ``segment_sink`` every planned segment with what was read of it.

    ``plan_pass``: the plan's units and segments already taken in (``findings.plan_pass``, what Finalize does, from
    streams); without it, ``units`` and the plan's listed segments (a plan of before issue 32, a test's) are taken in
    here. Either way the document holds bounded lists: at most ``listed`` segments (those not read first), truncated
    segments and units not read; the counts say how many there are (issue 32 §8). ``zone_end``: the instance's
    availability zone as RDS said it at Finalize (``findings.server``)."""
    listed = LISTED if listed is None else listed
    options = plan.options
    if plan_pass is None:
        with PlanPass(unit_items, hot_names=options.hot_set.names if options.hot_set else (), listed=listed) as made:
            made.add_units(units)
            made.add_segments(plan.listed_segments())
            return build_record(run, plan, unit_items, benchmark, censuses=censuses, unread_sink=unread_sink,
                                segment_sink=segment_sink, plan_pass=made, listed=listed, zone_end=zone_end)
    summaries = plan_pass.units  # each unit without its ranges (PlanUnit.summary)
    progress = progress_by_unit(unit_items)
    items = list(progress.values())
    status_of = {u.unit_id: (progress.get(u.unit_id) or NOT_STARTED).status for u in summaries}
    counts = {s: 0 for s in UnitStatus}
    for status in status_of.values():
        counts[status] = counts.get(status, 0) + 1
    planned_bytes = sum(u.bytes for u in summaries)
    planned_blocks = sum(u.blocks for u in summaries)
    # planned bytes a unit found gone (truncated while the run ran) leave the denominator, as a dropped object
    # leaves the census's: neither read nor unread
    gone_bytes = sum(i.gone_bytes for i in items)
    covered_bytes = sum(u.bytes - (progress.get(u.unit_id) or NOT_STARTED).gone_bytes
                        for u in summaries if status_of[u.unit_id] == UnitStatus.DONE)
    read_bytes = sum(i.bytes_read for i in items)
    read_blocks = sum(i.blocks_read for i in items)
    busy_seconds = sum(i.seconds for i in items)
    retries = sum(i.retries for i in items)
    starts = sorted(i.started_at for i in items if i.started_at)
    ends = sorted(i.finished_at for i in items if i.finished_at)
    wall, _ = warmup_wall(items)  # the one definition of the warm-up's time

    seen = _SegmentsSeen(listed)
    for seg in plan_pass.segments():
        seen.add(seg)
        if segment_sink is not None:
            segment_sink(seg)
    largest, relations = plan_pass.relations()
    segment_done = plan_pass.segment_done(o.key for o in plan.oversized_segments)
    failed = [FailedUnit(unit_id=uid, error=progress[uid].error, cause=progress[uid].cause)
              for uid, st in status_of.items() if st == UnitStatus.FAILED][:listed]
    # warmup.enabled false asks for no unit to be read: the run is complete without them (its verdict says why
    # it is not ready)
    warmup_off = run.recorded_input().warmup_options().enabled is False
    complete = counts[UnitStatus.DONE] == len(summaries) or warmup_off
    wall_rate = round(read_bytes / wall / 2**20, 3) if wall else None
    reading_seconds, reading_bytes = database_reading(items)
    mode = findings_fields(plan, summaries, status_of, segment_done)
    summary = plan.summary
    # the hot set's names the plan's segments answer to (the names the planner matched them by, their "labels")
    hot_set = hot_set_section(options.hot_set, list(options.priority), plan_pass.hot_matched, summaries, progress)
    return Findings.new(
        run_id=run.run_id,
        status=RunStatus.SUCCEEDED if complete else RunStatus.INCOMPLETE,
        target=run.target,
        started_by=run.started_by,  # the comparison execution that started this run, if any
        instance=run.instance,
        engine=plan.engine,
        read_methods=sorted({i.method for i in items if i.method}),
        read_methods_by_database=summary.read_methods if "read_methods" in summary.model_fields_set else {},
        timings=Timings(started_at=run.started_at, warmup_started_at=starts[0] if starts else None,
                        warmup_finished_at=ends[-1] if ends else None, finished_at=now_iso(),
                        warmup_wall_seconds=wall, unit_busy_seconds=round(busy_seconds, 3)),
        units=UnitCounts(total=len(summaries), done=counts[UnitStatus.DONE], failed=counts[UnitStatus.FAILED],
                         in_progress=counts[UnitStatus.RUNNING], not_started=counts[UnitStatus.PENDING]),
        bytes=ByteCounts(planned=planned_bytes, read=read_bytes, covered=covered_bytes, gone=gone_bytes),
        blocks=BlockCounts(planned=planned_blocks, read=read_blocks),
        coverage_pct=(round(100.0 * covered_bytes / (planned_bytes - gone_bytes), 3)
                      if planned_bytes > gone_bytes else 100.0),
        truncated=seen.truncated.first(),
        truncated_segments=seen.truncated.count,
        read_amplification=round(read_blocks / planned_blocks, 4) if planned_blocks else None,
        retries=Retries(warmup_reads=retries),
        reconnects=reconnects_section(items),
        server=server_section(run, hot_set, zone_end),
        read_rate=ReadRate(
            mib_per_s_wall=wall_rate,
            mib_per_s_per_worker=round(read_bytes / busy_seconds / 2**20, 3) if busy_seconds else None,
            # the database's own rate: the bytes of the recorded chunks over the time a reader was reading
            mib_per_s_database=round(reading_bytes / reading_seconds / 2**20, 3) if reading_seconds else None,
            database_reading_seconds=round(reading_seconds, 3),
        ),
        plan=summary.model_dump(mode="json", exclude_unset=True),
        failed_units=failed,
        warmup_timeline=warmup_timeline(items),
        benchmark=benchmark or BenchmarkSection(status=BenchmarkStatus.NOT_RUN),
        segments=seen.listed(),
        segment_counts=SegmentCounts(total=seen.total, read=seen.read, not_read=seen.total - seen.read,
                                     listed=len(seen.listed()), listed_at_most=listed),
        coverage=Coverage(by_database=seen.by_database.rows(), by_schema=seen.by_schema.rows(),
                          largest=largest, relations=relations),
        priority=priority_section(list(options.priority), summaries, progress, hot_set=bool(options.hot_set)),
        hot_set=hot_set,
        unread_units=plan_pass.unread_units[:listed],
        time_to_warm=time_to_warm(planned_bytes, wall_rate, options.production_size_gb),
        warmup_mode=mode.warmup_mode,
        **({"datafile_pass": mode.datafile_pass} if mode.datafile_pass is not None else {}),
        oversized_segments=mode.oversized_segments,
        census=census_section(censuses.start, plan_pass.reads(), censuses.end, censuses.catch_up,
                              datafile_pass_complete=bool(mode.datafile_pass and mode.datafile_pass.complete),
                              end_failure=censuses.end_failure, unread_sink=unread_sink),
    )


Row = TypeVar("Row")


class Bounded(Generic[Row]):  # noqa: UP046  (Python 3.11: no type parameter syntax)
    """The first ``limit`` rows of a stream in ``order``, holding at most twice as many, and how many there were."""

    def __init__(self, limit: int, order: Callable[[Row], Any]) -> None:
        self.limit, self.order, self.rows, self.count = limit, order, [], 0

    def add(self, row: Row) -> None:
        self.count += 1
        self.rows.append(row)
        if len(self.rows) >= 2 * self.limit:
            self.rows = sorted(self.rows, key=self.order)[:self.limit]

    def first(self) -> list[Row]:
        return sorted(self.rows, key=self.order)[:self.limit]


class _SegmentsSeen:
    """What findings.json keeps of the segments, given one at a time in plan order: counts, the coverage groups, the
    truncated ones (most bytes gone first) and the ``limit`` listed (those not read first, then in plan order)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total, self.read = limit, 0, 0
        self.not_read_rows: list[tuple[int, SegmentRow]] = []
        self.read_rows: list[tuple[int, SegmentRow]] = []
        self.by_database, self.by_schema = Groups(by_schema=False), Groups(by_schema=True)
        self.truncated: Bounded[TruncatedSegment] = Bounded(limit, lambda t: (-t.bytes_gone, str(t.key)))

    def add(self, seg: SegmentRow) -> None:
        self.by_database.add(seg)
        self.by_schema.add(seg)
        if seg.bytes_gone:
            self.truncated.add(truncated_row(seg))
        rows = self.read_rows if seg.status == READ else self.not_read_rows
        if len(rows) < self.limit:
            rows.append((self.total, seg))
        self.total += 1
        self.read += seg.status == READ

    def listed(self) -> list[SegmentRow]:
        chosen = self.not_read_rows[:self.limit] + self.read_rows[:max(0, self.limit - len(self.not_read_rows))]
        return [seg for _, seg in sorted(chosen, key=lambda r: r[0])]
