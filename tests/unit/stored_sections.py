"""The findings' section builders, each answering as findings.json holds the section (``.stored()`` of the records
``dal.records.findings`` they return): the tests written against the documents read them as before. Each takes what
it reads as the run stores it (the run item, the plan, its units and segments, unit items, samples: mappings) and
hands the builder the records (``dal.records``) those mappings read as."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from pydantic import BaseModel

from cutover_prep.dal.records.census import CatchUp, CensusEntry
from cutover_prep.dal.records.findings import EtaJudgement, EtaSample, Findings, PreflightReport, SegmentRow
from cutover_prep.dal.records.findings_census import EndCensusFailure
from cutover_prep.dal.records.plan import Plan, PlanRange, PlanSegment, PlanUnit, UnitSummary
from cutover_prep.dal.records.run import RunItem, StorageSample
from cutover_prep.dal.records.units import Cursor, UnitProgress
from cutover_prep.findings import census, coverage, document, eta, storage_init, timeline, volumes
from cutover_prep.findings.document import Censuses
from cutover_prep.models.warmup import HotSet, Warmup


def as_stored(value: Any) -> Any:
    """A record as stored, and so every record in a list, tuple or dict."""
    if isinstance(value, BaseModel):
        return value.stored() if hasattr(value, "stored") else value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, list):
        return [as_stored(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_stored(v) for v in value)
    if isinstance(value, dict):
        return {k: as_stored(v) for k, v in value.items()}
    return value


def _stored(fn: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return as_stored(fn(*args, **kwargs))
    return call


def plan_units(units: Any) -> list[PlanUnit]:
    """Units of units.json (mappings, or records) as ``PlanUnit``."""
    return [u if isinstance(u, PlanUnit) else PlanUnit.model_validate(u) for u in units]


def unit_summaries(units: Any) -> list[UnitSummary]:
    return [u.summary() for u in plan_units(units)]


def samples_of(samples: Any) -> list[StorageSample]:
    return [s if isinstance(s, StorageSample) else StorageSample.model_validate(s) for s in samples]


def segment_rows(segments: Any) -> list[SegmentRow]:
    return [s if isinstance(s, SegmentRow) else SegmentRow.model_validate({"key": "", **s}) for s in segments]


def run_item(run: dict[str, Any]) -> RunItem:
    """A run item as a test writes it (its ``run_id`` may be left out)."""
    return RunItem.read({"run_id": "r", **run})


def hot_set(hot: Any) -> HotSet | None:
    return hot if hot is None or isinstance(hot, HotSet) else HotSet.model_validate(hot)


def _catch_up(rows: Any) -> list[CatchUp] | None:
    return None if rows is None else [c if isinstance(c, CatchUp) else CatchUp.model_validate(c) for c in rows]


def _time(estimate: dict[str, Any] | None) -> eta.TimeModel | None:
    return eta.TimeModel.model_validate(estimate) if estimate else None


def _replayed_items(items: Any) -> dict[str, UnitProgress]:
    """Unit items of a replay: one without a status is DONE."""
    return {uid: i if isinstance(i, UnitProgress) else UnitProgress.read({"status": "DONE", **i})
            for uid, i in items.items()}


def warmup_section(concurrency: dict[str, Any], findings: Any, found: Any = None) -> Any:
    record = findings if isinstance(findings, Findings) else Findings.read(findings)
    if isinstance(found, dict):
        found = eta.EtaFindings([EtaSample.model_validate(r) for r in found["eta_samples"]],
                                EtaJudgement.model_validate(found["eta"]))
    return as_stored(document.warmup_section(concurrency, record, found))


def preflight_section(run: dict[str, Any], report: dict[str, Any] | None) -> Any:
    return as_stored(document.preflight_section(
        run_item(run), None if report is None else PreflightReport.model_validate(report)))


def truncated_section(segments: Any) -> Any:
    return as_stored(document.truncated_section(segment_rows(segments)))


def coverage_section(segments: Any) -> Any:
    return as_stored(coverage.coverage_section(segment_rows(segments)))


def segment_reads(units: Any, items: Any) -> Any:
    return coverage.segment_reads(plan_units(units), items)


warmup_timeline = _stored(timeline.warmup_timeline)
coverage_series = _stored(timeline.coverage_series)
time_to_warm = _stored(coverage.time_to_warm)


def storage_initialization(samples: Any, unit_items: Any, planned_bytes: int, instance: Any = None) -> Any:
    return as_stored(storage_init.storage_initialization(samples_of(samples), unit_items, planned_bytes, instance))


def initialized_pct_series(samples: Any) -> Any:
    return as_stored(storage_init.initialized_pct_series(samples_of(samples)))


def etas_of_samples(samples: Any, **kwargs: Any) -> Any:
    return storage_init.etas_of_samples(samples_of(samples), **kwargs)


def volumes_section(instance: Any, units: Any, unit_items: Any, engine: str | None = None) -> Any:
    return as_stored(volumes.volumes_section(instance, plan_units(units), unit_items, engine))


def hot_set_section(hot: Any, patterns: list[str], segments: Any, units: Any, unit_items: Any) -> Any:
    """``segments``: the plan's (mappings), whose names the hot set is matched against."""
    known = {n for s in segments for n in PlanSegment.model_validate({"key": "", **s}).names()}
    return as_stored(coverage.hot_set_section(hot_set(hot), patterns, known, unit_summaries(units),
                                              coverage.progress_by_unit(unit_items)))


def priority_section(patterns: list[str], units: Any, unit_items: Any, *, hot_set: bool = False) -> Any:
    return as_stored(coverage.priority_section(patterns, unit_summaries(units), coverage.progress_by_unit(unit_items),
                                               hot_set=hot_set))


def unread_units(units: Any, unit_items: Any) -> Any:
    return as_stored(coverage.unread_units(plan_units(units), unit_items))


def census_section(start: Any, reads: Any, end: Any = None, catch_up: Any = None, *, unread_sink: Any = None,
                   end_failure: Any = None, **kwargs: Any) -> Any:
    sink = (lambda row: unread_sink(row.stored())) if unread_sink is not None else None
    failure = EndCensusFailure.model_validate(end_failure) if isinstance(end_failure, dict) else end_failure
    return as_stored(census.census_section(start, reads, end, _catch_up(catch_up), unread_sink=sink,
                                           end_failure=failure, **kwargs))


def unread_of(obj: Any, reads: Any, by_datafiles: bool = False, end_census: bool = False) -> Any:
    return census._unread_of(CensusEntry.of(obj), reads, by_datafiles, end_census)


def catch_up_reads(catch_up: Any) -> Any:
    return census.catch_up_reads(_catch_up(catch_up))


def eta_findings(unit_items: Any, planned_bytes: int, read_bytes: int, *, units: Any = None,
                 estimate: dict[str, Any] | None = None) -> dict[str, Any]:
    """``eta.eta_findings`` as ``findings.warmup`` holds it: ``{"eta_samples": [...], "eta": {...}}``."""
    found = eta.eta_findings(_replayed_items(unit_items), planned_bytes, read_bytes,
                             units=None if units is None else unit_summaries(units), estimate=_time(estimate))
    return {"eta_samples": as_stored(found.samples), "eta": found.judgement.stored()}


def replay_record(unit_items: Any, units: Any, planned_bytes: int, read_bytes: int, estimate: Any) -> Any:
    return eta.replay_record(_replayed_items(unit_items), unit_summaries(units), planned_bytes, read_bytes,
                             _time(estimate)).stored()


def replayed(record: dict[str, Any]) -> dict[str, Any]:
    """The findings a stored ``eta_replay.json`` replays to (as ``eta_findings`` here gives them)."""
    found = eta.EtaReplay.model_validate(record).replay()
    return {"eta_samples": as_stored(found.samples), "eta": found.judgement.stored()}


def build_findings(run: dict[str, Any], plan: dict[str, Any], units: Any, unit_items: Any, benchmark: Any = None,
                   *, unread_sink: Any = None, segment_sink: Any = None, listed: int | None = None) -> dict[str, Any]:
    """``document.build_record``'s document, as findings.json holds it, of the stored documents (the run item, the
    plan with its segments and censuses in the document itself, as a plan of before issue 32 kept them, and
    ``census_end``, ``catch_up`` and ``census_end_failure`` beside them)."""
    record = run_item(run)
    kept = {k: v for k, v in plan.items() if k not in ("census_end", "catch_up", "census_end_failure")}
    # the options as the test wrote them, unchecked (a hostile name the run input would refuse reaches the report)
    options = Warmup.model_construct(**kept.pop("options", {}))
    target = record.target.model_dump(mode="json", exclude_unset=True) if record.target else {}
    plan_record = Plan.read({"run_id": record.run_id, "target": target, **kept, "options": options})
    failure = plan.get("census_end_failure")
    censuses = Censuses(start=plan.get("census"), end=plan.get("census_end"), catch_up=_catch_up(plan.get("catch_up")),
                        end_failure=EndCensusFailure.model_validate(failure) if failure else None)
    bench = benchmark if benchmark is None or not isinstance(benchmark, dict) else \
        document.BenchmarkSection.model_validate(benchmark)
    return document.build_record(
        record, plan_record, coverage.progress_by_unit(unit_items), bench, units=plan_units(units), censuses=censuses,
        unread_sink=(lambda row: unread_sink(row.stored())) if unread_sink is not None else None,
        segment_sink=(lambda seg: segment_sink(seg.stored())) if segment_sink is not None else None,
        listed=listed).stored()


def range_volume_bytes(rng: dict[str, Any], index: int, status: str, cursor: dict[str, Any] | None) -> Any:
    return volumes.range_volume_bytes(PlanRange.model_validate(rng), index, status,
                                      Cursor.model_validate(cursor) if cursor else None)


def add_volume_findings(findings: dict[str, Any], instance: Any, units: Any, unit_items: Any) -> None:
    """``volumes.add_volume_findings`` on a findings document (a dict, changed in place)."""
    record = Findings.read(findings)
    volumes.add_volume_findings(record, instance, plan_units(units), unit_items)
    versioned = "schema_version" in findings
    findings.clear()
    findings.update(record.stored())
    if not versioned:  # an excerpt of a document: as it came
        findings.pop("schema_version")
