"""Close a run: findings.json, summary.md and report.html in S3, the verdict, the completion event."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ValidationError

from cutover_prep.benchmark.scratch import scratch_summary
from cutover_prep.dal.plan_evidence import SEGMENT_FINDINGS, UNITS, plan_segments
from cutover_prep.dal.records.census import CENSUS_UNREAD, EndCensus, census_rows
from cutover_prep.dal.records.findings import Findings, PreflightReport, Scratch, UnitCounts, VerdictSection
from cutover_prep.dal.records.findings_census import EndCensusFailure
from cutover_prep.dal.records.plan import Plan, PlanSegment, PlanUnit
from cutover_prep.dal.records.run import RunItem
from cutover_prep.dal.records.section import Num
from cutover_prep.dal.store import (
    EMULATION_EVIDENCE,
    Store,
    evidence_key,
    recorded_input,
    recorded_thresholds,
)
from cutover_prep.estimate.run import estimate_section
from cutover_prep.findings.document import (
    Censuses,
    benchmark_section,
    build_record,
    preflight_section,
    warmup_section,
)
from cutover_prep.findings.emulation import instance_facts, storage_emulation
from cutover_prep.findings.eta import REPLAY_EVIDENCE, TimeModel, eta_findings, replay_record
from cutover_prep.findings.plan_pass import PlanPass
from cutover_prep.findings.storage_init import storage_initialization
from cutover_prep.findings.volumes import add_volume_findings
from cutover_prep.live.completion import completion_detail, publish, timing_of
from cutover_prep.live.names import dashboard_link
from cutover_prep.rds.answers import DbInstance
from cutover_prep.rds.instances import describe
from cutover_prep.rds.progress import sample_storage_progress
from cutover_prep.report import render_report, summary_markdown
from cutover_prep.steps.end_census import END_CENSUS
from cutover_prep.verdict import judge as verdict_of
from cutover_prep.warmup.slots import concurrency_findings


class BenchmarkCounts(BaseModel):
    """What Finalize's result says of the benchmark: its status, its points and conclusions."""

    status: str | None
    points: int
    conclusions: int


class Finalized(BaseModel):
    """Finalize's result (the execution's output): the run's status, verdict and where its findings are."""

    run_id: str
    status: str
    coverage_pct: Num | None
    units: UnitCounts  # as findings.json holds it
    findings_key: str
    findings_uri: str
    summary_uri: str
    report_uri: str
    verdict: str
    reasons: list[str]
    benchmark: BenchmarkCounts


def _described(rds: Any, identifier: str | None) -> DbInstance | None:
    """The instance as RDS describes it now; None when it cannot be (deleted, no permission, throttled)."""
    try:
        return describe(rds, identifier) if identifier else None
    except (ClientError, BotoCoreError, LookupError, TypeError, ValidationError):
        return None


def finalize(run_id: str, *, store: Store, events: Any = None, rds: Any = None) -> Finalized:
    """``rds``: sample RDS's storage progress once more, at the end of the run (``restore.progress``)."""
    record = store.get_run(run_id)
    if record is None:
        raise LookupError(f"run {run_id} has no record")
    end_instance = None
    if rds is not None:  # described once, for the sample and the zone (None: the sample records why it could not be)
        end_instance = _described(rds, record.db_instance_identifier)
        sample_storage_progress(run_id, record.db_instance_identifier, rds=rds, store=store, step="Finalize",
                                instance=end_instance)
    plan = Plan.read(store.get_json(evidence_key(run_id, "plan.json")))
    # the censuses as streams from their own objects (a run planned before issue 32 kept them in these documents)
    end_key = evidence_key(run_id, END_CENSUS)
    # the end census and its catch-up pass
    end = EndCensus.read(store.get_json(end_key)) if store.exists(end_key) else EndCensus()
    censuses = Censuses(start=census_rows(plan.census, store))
    if end.census is not None:
        censuses = censuses._replace(end=census_rows(end.census, store), catch_up=end.catch_up)
    elif record.end_census_error:  # its Catch recorded why it did not run (record_end_census_failure): the
        censuses = censuses._replace(end_failure=EndCensusFailure(  # latest word on it
            error=record.end_census_error, cause=record.end_census_cause))
    elif end.error:  # its census hit a transient error past its retries (steps/end_census.py)
        censuses = censuses._replace(end_failure=EndCensusFailure.model_validate(end.error.model_dump(
            exclude_unset=True)))
    units_key = evidence_key(run_id, UNITS)
    unit_items = {i.unit_id: i for i in store.units(run_id)}
    analysis_key, cw_key = evidence_key(run_id, "analysis.json"), evidence_key(run_id, "metrics/cloudwatch.json")
    point_items = {p.point_id: p for p in store.points(run_id)}
    benchmark = benchmark_section(
        record, store.get_json(analysis_key) if store.exists(analysis_key) else None,
        point_items, store.get_json(cw_key) if store.exists(cw_key) else None)
    unread_key = evidence_key(run_id, CENSUS_UNREAD)  # every unread object; findings.json names the largest
    segments_key = evidence_key(run_id, SEGMENT_FINDINGS)  # every planned segment; findings.json lists some
    hot_names = plan.options.hot_set.names if plan.options.hot_set else []
    # the plan's units and segments, each read once as a stream (issue 32 §8): only the units' own fields stay
    with PlanPass(unit_items, hot_names=hot_names) as plan_pass, store.json_lines_writer(segments_key) as segs, \
            store.json_lines_writer(unread_key) if censuses.start is not None else nullcontext() as unread:
        plan_pass.add_units(PlanUnit.model_validate(u) for u in store.json_array(units_key))
        plan_pass.add_segments(PlanSegment.model_validate(s) for s in plan_segments(plan.stored(), store))
        findings = build_record(record, plan, unit_items, benchmark, censuses=censuses, plan_pass=plan_pass,
                                zone_end=end_instance.availability_zone if end_instance is not None else None,
                                unread_sink=(lambda row: unread.write(row.stored())) if unread is not None else None,
                                segment_sink=lambda seg: segs.write(seg.stored()))
    units = plan_pass.units  # each unit's id, bytes, rank and range count (PlanUnit.summary)
    planned, read = findings.bytes.planned, findings.bytes.read  # type: ignore[union-attr]  (always built)
    findings.segments_evidence = segments_key
    if findings.census.taken:  # type: ignore[union-attr]
        findings.census.unread_evidence = unread_key  # type: ignore[union-attr]
    control = store.get_warmup_control(run_id)
    time_model = (TimeModel.model_validate(record.estimate, from_attributes=True)  # the estimate's
                  if record.estimate else None)
    concurrency = concurrency_findings(control)
    findings.warmup = warmup_section(concurrency, findings, eta_findings(
        unit_items, planned, read, units=units, estimate=time_model))  # eta_samples, eta
    store.put_json(evidence_key(run_id, REPLAY_EVIDENCE), replay_record(  # what the ETA was judged on, replayable
        unit_items, units, planned, read, time_model).stored())
    preflight_key = evidence_key(run_id, "preflight.json")  # the Preflight state's report (steps/preflight.py)
    findings.preflight = preflight_section(record, PreflightReport.model_validate(store.get_json(preflight_key))
                                           if store.exists(preflight_key) else None)
    emulation_key = evidence_key(run_id, EMULATION_EVIDENCE)
    emulation = storage_emulation(store.get_json(emulation_key) if store.exists(emulation_key) else None,
                                  findings.read_rate.mib_per_s_wall,
                                  (findings.timings.warmup_started_at, findings.timings.warmup_finished_at))
    if emulation is not None:
        findings.storage_emulation = emulation
        findings.instance = instance_facts(findings.instance, emulation)
    findings.storage_initialization = storage_initialization(
        store.storage_samples(run_id), list(unit_items.values()), planned, record.instance)
    # RDS additional storage volumes: the units' ranges once more, read only when the instance has such volumes
    add_volume_findings(findings, record.instance, _streamed(store, units_key), unit_items)
    findings.scratch = Scratch.model_validate(scratch_summary(list(store.scratch_objects(run_id))))
    findings.retries.benchmark_steps = sum(int(p.retries or 0) for p in point_items.values())
    findings.estimate = estimate_section(record.estimate, findings)  # the verdict ignores it
    findings.dashboard = dashboard_link()  # the live view's console link (live.names); None outside AWS
    verdict = findings.verdict = judge(record, findings, store=store)
    doc = findings.stored()
    key = store.put_json(evidence_key(run_id, "findings.json"), doc)
    reasons = [r.message for r in verdict.reasons if not r.ok]  # the failing ones
    uris = {name: f"s3://{store.bucket}/{evidence_key(run_id, name)}"
            for name in ("findings.json", "summary.md", "report.html")}
    summary = summary_markdown(doc, findings_uri=uris["findings.json"], report_uri=uris["report.html"])
    store.put_text(evidence_key(run_id, "summary.md"), summary, "text/markdown")
    store.put_text(evidence_key(run_id, "report.html"), render_report(doc), "text/html; charset=utf-8")
    store.update_run(run_id, status=findings.status, step="finished", finished_at=findings.timings.finished_at,
                     units_done=findings.units.done, units_failed=findings.units.failed,
                     coverage_pct=findings.coverage_pct, findings_key=key,
                     verdict=verdict.verdict, verdict_reasons=reasons)
    if events is not None:
        publish(events, completion_detail({**record.stored(), "coverage_pct": findings.coverage_pct},
                                          status=findings.status, verdict=verdict.verdict,
                                          reasons=reasons, bucket=store.bucket, findings_key=key,
                                          timing=timing_of(findings)))
    return Finalized(run_id=run_id, status=findings.status, coverage_pct=findings.coverage_pct,
                     units=findings.units, findings_key=key, findings_uri=uris["findings.json"],
                     summary_uri=uris["summary.md"], report_uri=uris["report.html"],
                     verdict=verdict.verdict, reasons=reasons,
                     benchmark=BenchmarkCounts(status=benchmark.status, points=len(benchmark.points),
                                               conclusions=len(benchmark.conclusions or [])))


def _streamed(store: Store, key: str) -> Iterator[PlanUnit]:
    """The units of ``units.json`` one at a time, read when first asked for."""
    yield from (PlanUnit.model_validate(u) for u in store.json_array(key))


def judge(run_item: RunItem, findings: Findings, *, store: Store) -> VerdictSection:
    """READY / NOT_READY from the run's thresholds (and its baseline run's findings, if named)."""
    recorded = recorded_input(run_item)
    thresholds = recorded_thresholds(run_item)
    baseline = None
    if thresholds.baseline_run_id:
        key = evidence_key(thresholds.baseline_run_id, "findings.json")
        baseline = Findings.read(store.get_json(key)) if store.exists(key) else None
    bench = recorded.benchmark
    return verdict_of(findings, thresholds, baseline or None, benchmark_requested=bool(bench.enabled),
                      probes_requested=int(bench.probe_blocks) > 0,
                      warmup_requested=bool(recorded.warmup.enabled))
