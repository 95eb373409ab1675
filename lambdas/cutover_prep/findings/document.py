"""The findings document of a run (``findings.json``, schema_version 1; see docs/findings.md), pure.

``build_findings`` combines the plan, the unit items and the run item;
``benchmark_section`` the probes, the sweep points and the analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, Generic, TypeVar

from cutover_prep.dal.records.findings import (
    BlockCounts,
    ByteCounts,
    Coverage,
    CoverageGroup,
    FailedUnit,
    Findings,
    Preflight,
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
from cutover_prep.dal.records.findings_benchmark import BenchmarkSection
from cutover_prep.dal.records.units import UnitProgress, progress_by_unit
from cutover_prep.dal.store import now_iso, recorded_input
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
from cutover_prep.findings.modes import findings_fields
from cutover_prep.findings.plan_pass import PlanPass
from cutover_prep.findings.timeline import database_reading, warmup_timeline, warmup_wall
from cutover_prep.models.status import BenchmarkStatus, RunStatus, UnitStatus

SCHEMA_VERSION = Findings.SCHEMA_VERSION


def _seconds_between(first: str | None, last: str | None) -> float | None:
    if not first or not last:
        return None
    return max(0.0, (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds())


def benchmark_section(run_item: dict[str, Any], analysis: dict[str, Any] | None,
                      point_items: dict[str, dict[str, Any]], cloudwatch: dict[str, Any] | None) -> BenchmarkSection:
    """Pure: the probes, the sweep points (with their CloudWatch means) and the analysis."""
    options = recorded_input(run_item)["benchmark"]
    status = run_item.get("benchmark_status") or (BenchmarkStatus.DISABLED if options["enabled"] is False
                                                  else BenchmarkStatus.NOT_RUN)
    section: dict[str, Any] = {"status": status}
    if run_item.get("benchmark_error"):
        section["error"] = {"error": run_item["benchmark_error"], "cause": run_item.get("benchmark_cause")}
    probes = {}
    for phase in ("cold", "warm"):
        item = point_items.get(f"probe-{phase}")
        if item:
            probes[phase] = {k: item.get(k) for k in ("status", "blocks_planned", "blocks_read", "overlap_blocks",
                                                       "cold_sample_blocks", "iops", "throughput_kbps", "latency_us",
                                                       "latency_hist_us", "timed_by", "client_latency_us",
                                                       "started_at", "finished_at", "cut_short",
                                                       "note", "sized", "cause") if item.get(k) is not None}
    section["probes"] = probes
    cw_windows = (cloudwatch or {}).get("windows") or {}
    by_id = {p.get("point_id"): p for p in (analysis or {}).get("points") or []}
    points = []
    for pid, item in sorted(point_items.items()):
        if pid.startswith("probe-"):
            continue
        row = {k: item.get(k) for k in ("point_id", "status", "kind", "sessions", "io_size_kb", "effective_io_kb",
                                         "iops", "throughput_kbps", "latency_us", "latency_hist_us", "source",
                                         "knobs_applied", "started_at", "finished_at", "seconds", "notes", "error",
                                         "cause") if item.get(k) not in (None, [], {})}
        if pid in by_id:
            row["bound"] = by_id[pid].get("bound")
        metrics = (cw_windows.get(pid) or {}).get("metrics") or {}
        row["cloudwatch"] = {name: {"mean": m.get("mean"), "max": m.get("max"), "status": m.get("status")}
                             for name, m in metrics.items()}
        points.append(row)
    section["points"] = points
    if analysis:
        for key in ("capabilities", "target", "crossover_kb", "limits", "measured", "burst", "cold_warm",
                    "conclusions", "notes", "metrics", "failed_points"):
            if key in analysis:
                section[key] = analysis[key]
        if section.get("target"):
            section["target"] = {"segment": section["target"].get("segment"),
                                 "bytes": sum(e[2] for e in section["target"]["extents"])
                                 * section["target"]["block_size"]}
    return BenchmarkSection.model_validate(section)


def warmup_section(concurrency: dict[str, Any], findings: Findings | dict[str, Any],
                   eta: dict[str, Any] | None = None) -> WarmupSection:
    """Pure: ``warmup.concurrency`` (the level over time and where it settled) and ``warmup.sizing_rate``
    (the rate the first chunks were sized from and its source; after them each unit used its own); ``eta``:
    ``eta_samples`` and ``eta`` (``findings.eta.eta_findings``)."""
    findings = findings if isinstance(findings, Findings) else Findings.read(findings)
    section = dict(concurrency)  # the slots' own account of the level over time (warmup.slots.concurrency_findings)
    if section["sizing_rate"] is not None:
        section["sizing_rate"] = {**section["sizing_rate"], "then": "first_chunks",
                                  "measured_mib_per_s_per_reader": findings.read_rate.mib_per_s_per_worker}
    return WarmupSection.model_validate({**section, **(eta or {})})


PREFLIGHT_CHECK_FIELDS = ("kind", "name", "status", "detail", "bytes")


def preflight_section(run_item: dict[str, Any], report: dict[str, Any] | None) -> Preflight | None:
    """Pure: the Preflight state's report (evidence ``preflight.json``, ``preflight.step``), one entry a check;
    ``{"enabled": false}`` when the run's input turned it off, None when the run has no preflight (a run
    started before it existed)."""
    if (run_item.get("preflight") or {}).get("enabled") is False:
        return Preflight(enabled=False)
    if not isinstance(report, dict):
        return None
    return Preflight.model_validate(
        {"enabled": True, "ok": bool(report.get("ok")), "seconds": report.get("seconds"),
         "on_failure": report.get("on_failure", "fail"), "engine": report.get("engine"),
         "failed": list(report.get("failed") or []),
         "checks": [{k: c.get(k) for k in PREFLIGHT_CHECK_FIELDS} for c in report.get("checks") or []
                    if isinstance(c, dict)]})


TRUNCATED = GONE_TRUNCATED  # or GONE_REBUILT: an Oracle segment replaced by a new one (TRUNCATE, MOVE)


def truncated_row(s: dict[str, Any]) -> TruncatedSegment:
    """One entry of ``truncated``: a segment whose planned blocks no longer existed when its units read them (a
    VACUUM gave a table's empty tail back, a rebuild gave it new storage), with the bytes gone: out of the coverage's
    denominator, never counted as read."""
    return TruncatedSegment(**{k: s.get(k) for k in ("key", "database", "schema", "name", "kind")},
                            bytes_planned=s["bytes"], bytes_gone=s["bytes_gone"],
                            reason=s.get("gone_reason") or TRUNCATED)


def truncated_section(segments: list[dict[str, Any]]) -> list[TruncatedSegment]:
    """``truncated``: every segment of ``segments`` with bytes gone, most bytes gone first (``truncated_row``)."""
    return [truncated_row(s) for s in sorted(segments, key=lambda s: (-s.get("bytes_gone", 0), str(s["key"])))
            if s.get("bytes_gone")]


def reconnects_section(unit_items: Iterable[UnitProgress]) -> Reconnects:
    """Pure: the outages the warm-up rode out (issue 32 §4: a restart, a failover): how many, in how many
    units, and the longest, from each unit's ``reconnects`` and ``longest_outage_seconds`` (``retry.Retries``)."""
    hit = [i for i in unit_items if i.reconnects]
    longest = max((float(i.longest_outage_seconds or 0) for i in hit), default=None)
    return Reconnects(count=sum(i.reconnects for i in hit), units=len(hit),
                      longest_outage_seconds=None if longest is None else round(longest, 1))


def build_findings(run_item: dict[str, Any], plan: dict[str, Any], units: Iterable[dict[str, Any]],
                   unit_items: Items, benchmark: BenchmarkSection | dict[str, Any] | None = None, *,
                   unread_sink: Callable[[dict[str, Any]], None] | None = None,
                   segment_sink: Callable[[dict[str, Any]], None] | None = None,
                   plan_pass: PlanPass | None = None, listed: int | None = None) -> dict[str, Any]:
    """``build_record``'s document, as findings.json holds it."""
    return build_record(run_item, plan, units, unit_items, benchmark, unread_sink=unread_sink,
                        segment_sink=segment_sink, plan_pass=plan_pass, listed=listed).stored()


def build_record(run_item: dict[str, Any], plan: dict[str, Any], units: Iterable[dict[str, Any]],
                 unit_items: Items, benchmark: BenchmarkSection | dict[str, Any] | None = None, *,
                 unread_sink: Callable[[dict[str, Any]], None] | None = None,
                 segment_sink: Callable[[dict[str, Any]], None] | None = None,
                 plan_pass: PlanPass | None = None, listed: int | None = None) -> Findings:
    """Pure: combine the plan, the unit items and the run item into the findings document. The plan's ``census``
    and ``census_end`` are lists or streams in key order (``findings.census``); ``unread_sink`` is given every
    unread object of the census, ``segment_sink`` every planned segment with what was read of it.

    ``plan_pass``: the plan's units and segments already taken in (``findings.plan_pass``, what Finalize does, from
    streams); without it, ``units`` and the plan's ``segments`` (lists) are taken in here. Either way the document
    holds bounded lists: at most ``listed`` segments (those not read first), truncated segments and units not read;
    the counts say how many there are (issue 32 §8)."""
    listed = LISTED if listed is None else listed
    if plan_pass is None:
        with PlanPass(unit_items, hot_names=_hot_names(plan), listed=listed) as made:
            made.add_units(units)
            made.add_segments(plan.get("segments") or [])
            return build_record(run_item, plan, made.units, unit_items, benchmark, unread_sink=unread_sink,
                                segment_sink=segment_sink, plan_pass=made, listed=listed)
    units = plan_pass.units  # each unit without its ranges (plan_pass.slim_unit)
    progress = progress_by_unit(unit_items)
    items = list(progress.values())
    status_of = {u["unit_id"]: (progress.get(u["unit_id"]) or NOT_STARTED).status for u in units}
    counts = {s: 0 for s in UnitStatus}
    for status in status_of.values():
        counts[status] = counts.get(status, 0) + 1
    planned_bytes = sum(u["bytes"] for u in units)
    planned_blocks = sum(u["blocks"] for u in units)
    # planned bytes a unit found gone (truncated while the run ran) leave the denominator, as a dropped object
    # leaves the census's: neither read nor unread
    gone_bytes = sum(i.gone_bytes for i in items)
    covered_bytes = sum(u["bytes"] - (progress.get(u["unit_id"]) or NOT_STARTED).gone_bytes
                        for u in units if status_of[u["unit_id"]] == UnitStatus.DONE)
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
    segment_done = plan_pass.segment_done(str(o["key"]) for o in plan.get("oversized_segments") or [])
    failed = [FailedUnit(unit_id=uid, error=progress[uid].error, cause=progress[uid].cause)
              for uid, st in status_of.items() if st == UnitStatus.FAILED][:listed]
    # warmup.enabled false asks for no unit to be read: the run is complete without them (its verdict says why
    # it is not ready)
    warmup_off = recorded_input(run_item)["warmup"]["enabled"] is False
    complete = counts[UnitStatus.DONE] == len(units) or warmup_off
    options = plan.get("options") or {}
    wall_rate = round(read_bytes / wall / 2**20, 3) if wall else None
    reading_seconds, reading_bytes = database_reading(items)
    mode_fields = findings_fields(plan, units, status_of, segment_done)
    return Findings.new(
        run_id=run_item["run_id"],
        status=RunStatus.SUCCEEDED if complete else RunStatus.INCOMPLETE,
        target=run_item["target"],
        started_by=run_item.get("started_by"),  # the comparison execution that started this run, if any
        instance=run_item.get("instance"),
        engine=plan["engine"],
        read_methods=sorted({i.method for i in items if i.method}),
        read_methods_by_database=plan["summary"].get("read_methods", {}),
        timings=Timings(started_at=run_item["started_at"], warmup_started_at=starts[0] if starts else None,
                        warmup_finished_at=ends[-1] if ends else None, finished_at=now_iso(),
                        warmup_wall_seconds=wall, unit_busy_seconds=round(busy_seconds, 3)),
        units=UnitCounts(total=len(units), done=counts[UnitStatus.DONE], failed=counts[UnitStatus.FAILED],
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
        read_rate=ReadRate(
            mib_per_s_wall=wall_rate,
            mib_per_s_per_worker=round(read_bytes / busy_seconds / 2**20, 3) if busy_seconds else None,
            # the database's own rate: the bytes of the recorded chunks over the time a reader was reading
            mib_per_s_database=round(reading_bytes / reading_seconds / 2**20, 3) if reading_seconds else None,
            database_reading_seconds=round(reading_seconds, 3),
        ),
        plan=plan["summary"],
        failed_units=failed,
        warmup_timeline=warmup_timeline(items),
        benchmark=benchmark or BenchmarkSection(status=BenchmarkStatus.NOT_RUN),
        segments=[SegmentRow.model_validate(seg) for seg in seen.listed()],
        segment_counts=SegmentCounts(total=seen.total, read=seen.read, not_read=seen.total - seen.read,
                                     listed=len(seen.listed()), listed_at_most=listed),
        coverage=Coverage(by_database=_groups(seen.by_database), by_schema=_groups(seen.by_schema),
                          largest=largest, relations=relations),
        priority=priority_section(list(options.get("priority") or []), units, progress,
                                  hot_set=bool(options.get("hot_set"))),
        # the hot set's names the plan's segments carry (the names the planner matched them by, their "labels")
        hot_set=hot_set_section(options.get("hot_set"), list(options.get("priority") or []),
                                [{"labels": sorted(plan_pass.hot_matched)}] if plan_pass.hot_matched else [],
                                units, progress),
        unread_units=plan_pass.unread_units[:listed],
        time_to_warm=time_to_warm(planned_bytes, wall_rate, options.get("production_size_gb")),
        **mode_fields,  # warmup_mode, datafile_pass, oversized_segments
        census=census_section(plan.get("census"), plan_pass.reads(), plan.get("census_end"), plan.get("catch_up"),
                              datafile_pass_complete=bool((mode_fields.get("datafile_pass") or {}).get("complete")),
                              end_failure=plan.get("census_end_failure"),
                              unread_sink=unread_sink),
    )


def _groups(groups: Groups) -> list[CoverageGroup]:
    return [CoverageGroup.model_validate(row) for row in groups.rows()]


def _hot_names(plan: dict[str, Any]) -> list[str]:
    return list(((plan.get("options") or {}).get("hot_set") or {}).get("names") or [])


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
        self.not_read_rows: list[tuple[int, dict[str, Any]]] = []
        self.read_rows: list[tuple[int, dict[str, Any]]] = []
        self.by_database, self.by_schema = Groups(("database",)), Groups(("database", "schema"))
        self.truncated: Bounded[TruncatedSegment] = Bounded(limit, lambda t: (-t.bytes_gone, str(t.key)))

    def add(self, seg: dict[str, Any]) -> None:
        self.by_database.add(seg)
        self.by_schema.add(seg)
        if seg.get("bytes_gone"):
            self.truncated.add(truncated_row(seg))
        rows = self.read_rows if seg["status"] == READ else self.not_read_rows
        if len(rows) < self.limit:
            rows.append((self.total, seg))
        self.total += 1
        self.read += seg["status"] == READ

    def listed(self) -> list[dict[str, Any]]:
        chosen = self.not_read_rows[:self.limit] + self.read_rows[:max(0, self.limit - len(self.not_read_rows))]
        return [seg for _, seg in sorted(chosen, key=lambda r: r[0])]
