"""The view model of a run's findings, shared by every renderer (HTML, Markdown, terminal).

Every figure is formatted once here (units, missing values, sources), so the page, the
summary and the terminal cannot say different things about the same run. Pure: reads the
``Findings`` record (``reading.findings_of``: a stored mapping of any version reads too); any
section of it may be missing.
"""

from __future__ import annotations

from datetime import UTC, datetime

from cutover_prep.dal.records.findings import ByteCounts, Reason
from cutover_prep.rds.progress import progress_sentence
from cutover_prep.report import clocks, engineer
from cutover_prep.report.bench_view import benchmark_view, crossover_view, limits_view, probe_timing
from cutover_prep.report.chart_set import build_charts
from cutover_prep.report.charts import Chart, fmt_duration, num
from cutover_prep.report.formatting import DASH, MIB, fmt, fmt_time, fmt_value, humanize
from cutover_prep.report.parts import Connection, EstimateFigures, PlanPart, ReportFindings
from cutover_prep.report.reading import Readable, findings_of, present
from cutover_prep.report.view_model import PreflightView, ReasonView, StorageInitView, VerdictView, View, WarmupView

__all__ = ["DASH", "build_view", "eta_line", "estimate_line", "fmt", "fmt_time", "preflight_view", "probe_timing",
           "storage_emulation_line"]

MAX_SEGMENT_ROWS = 50


# ---- sections ----------------------------------------------------------------------------------

def _reason_view(r: Reason, exception: str | None = None) -> ReasonView:
    return {"code": r.code, "message": r.message, "exception": exception}


def _verdict(findings: ReportFindings) -> VerdictView:
    verdict = findings.verdict
    name = str(verdict.verdict if verdict is not None else "") or "NO VERDICT"
    reasons = verdict.reasons if verdict is not None else []
    thresholds = verdict.thresholds if verdict is not None else {}
    return {"name": name, "css": {"READY": "ready", "NOT_READY": "not-ready"}.get(name, "none"),
            "failing": [_reason_view(r) for r in reasons if not r.ok],
            "passing": [_reason_view(r, engineer.exception_of(r, findings)) for r in reasons
                        if r.ok and r.judged is not False],
            "not_judged": [_reason_view(r) for r in reasons if r.ok and r.judged is False],
            "thresholds": [(humanize(str(k)), fmt_value(v)) for k, v in thresholds.items() if v is not None]}


def _safety(findings: ReportFindings) -> list[tuple[str, str]]:
    """How the run reached the database and what it wrote there (the write test's scratch objects)."""
    # the plan's summary is the plan's record, kept as written (``Findings.plan``)
    plan = PlanPart.model_validate(findings.plan) if isinstance(findings.plan, dict) else PlanPart()
    connection = plan.connection or Connection()
    rows = []
    if connection.transport:
        rows.append(("connection", fmt_value(connection.transport)))
        rows.append(("read-only guard", fmt_value(connection.read_only_guard)))
    scratch = findings.scratch
    if scratch is not None and (scratch.created or scratch.left):
        rows.append(("write test scratch objects",
                     f"created {fmt_value(scratch.created)}; removed {fmt_value(scratch.removed)}; "
                     f"left {fmt_value(scratch.left or 'none')}"))
    return rows


def storage_emulation_line(findings: Readable) -> str | None:
    """A local run's storage in one line: the emulated restored volume and what it measured, or why
    there was none; None for a run in AWS."""
    findings = findings_of(findings)
    section = findings.storage_emulation
    if section is None:
        return None
    if not section.emulated:
        return f"no emulated restored volume: {fmt_value(section.reason)}"
    profile = section.profile
    line = (f"emulated restored volume: {fmt_value(profile.storage_type if profile else None)} "
            f"{fmt(profile.allocated_gb if profile else None, 'GiB')} on "
            f"{fmt_value(profile.instance_class if profile else None)} "
            f"(time scale {fmt(profile.time_scale if profile else None)}); {fmt(section.hydrated_pct, '%')} of the "
            f"database's snapshot chunks hydrated; first touch p50 {fmt(section.first_touch_ms, 'ms')}")
    scale = clocks.time_scale(findings)
    if clocks.ms(section.first_touch_ms, scale):
        line += f" wall = {clocks.ms(section.first_touch_ms, scale)} on the emulated clock"
    if section.warmup_to_ceiling is not None:
        line += (f"; warm-up {fmt(section.warmup_mib_per_s, 'MiB/s')} = "
                 f"{float(section.warmup_to_ceiling):.2f}× the {fmt(section.ceiling_mib_per_s, 'MiB/s')} "
                 "ceiling")
        emulated = (clocks.rate(section.warmup_mib_per_s, scale, 1), clocks.rate(section.ceiling_mib_per_s, scale, 1))
        if None not in emulated:
            line += f" (emulated clock: {emulated[0]} of {emulated[1]} MiB/s)"
    line += clocks.served_text(section.warmup_served, section.ceiling_mib_per_s, scale)
    return line


def estimate_line(findings: Readable) -> str | None:
    """``findings.estimate`` in one line: what the run estimated when it planned, and what happened."""
    section = findings_of(findings).estimate
    if section is None:
        return None
    none = EstimateFigures()
    est, act, ratio = section.estimate or none, section.actual or none, section.ratios or none
    times = f"; time ×{float(ratio.seconds):.2f} the estimate" if ratio.seconds is not None else ""
    mib = 1 / 2**20
    return (f"Estimate vs actual: {fmt(est.bytes_to_read, 'MiB', scale=mib, digits=1)} in "
            f"{fmt_duration(est.estimated_seconds)} at {fmt(est.assumed_mib_per_s, 'MiB/s')} "
            f"({fmt_value(est.source)}) estimated; {fmt(act.bytes_read, 'MiB', scale=mib, digits=1)}"
            f" in {fmt_duration(act.warmup_seconds)} at {fmt(act.mib_per_s, 'MiB/s')} read{times}")


def eta_line(findings: Readable) -> str | None:
    """``findings.warmup.eta`` in one line: the finish the ETA predicted at 25/50/75 % of the bytes against
    the finish that happened (``findings.eta``), or why it was not judged; None without samples."""
    warmup = findings_of(findings).warmup
    eta = warmup.eta if warmup is not None else None
    if warmup is None or not warmup.eta_samples or not present(eta):
        return None
    assert eta is not None
    if not eta.judged:
        return f"ETA not judged: {fmt_value(eta.why)}"
    parts = [f"at {a.pct} % predicted {fmt_duration(a.predicted_s)} "
             f"({float(a.error_pct):+.0f} %)" for a in eta.at if a.error_pct is not None]
    return (f"ETA at the measured rate vs the warm-up's actual {fmt_duration(eta.actual_s)}: "
            + ("; ".join(parts) if parts else "no quarter reached with a rate"))


def preflight_view(findings: Readable) -> PreflightView | None:
    """The Preflight state's report (findings ``preflight``): a headline, then one line a check, status
    first; None for a run without one."""
    section = findings_of(findings).preflight
    if section is None:
        return None
    if section.enabled is False:
        return {"line": "preflight not run (input preflight.enabled false)", "css": "none", "rows": []}
    failed = [str(f) for f in section.failed]
    took = f"in {fmt(section.seconds, 's', digits=1)}"
    if not failed:
        line, css = f"preflight passed {took}", "ready"
    else:
        line, css = (f"preflight FAILED {took}: {len(failed)} check(s): {'; '.join(failed)}"
                     + (" (on_failure warn: the run went on)" if section.on_failure == "warn" else "")), \
            "not-ready"
    rows = []
    for c in section.checks:
        size = f" ({fmt(c.bytes, 'MiB', scale=1 / MIB, digits=1)})" if c.bytes is not None else ""
        rows.append({"status": str(c.status or DASH).upper(), "kind": str(c.kind or DASH),
                     "name": str(c.name or DASH), "detail": f"{c.detail or DASH}{size}"})
    return {"line": line, "css": css, "rows": rows}


def _instance(findings: ReportFindings) -> list[tuple[str, str]]:
    inst = findings.instance
    if not present(inst):
        return []
    assert inst is not None
    target_engine = findings.target.engine if findings.target is not None else None
    version = " ".join(str(x) for x in (inst.engine or target_engine, inst.engine_version) if x)
    if inst.stand_in:  # a local run without emulation: moto's instance says nothing of the database
        return [("engine", version or DASH), ("instance and storage", fmt_value(inst.stand_in))]
    emulated = " (emulated)" if inst.emulated else ""
    return [("engine", version or DASH), (f"instance class{emulated}", fmt_value(inst.db_instance_class)),
            (f"storage type{emulated}", fmt_value(inst.storage_type)),
            ("allocated storage", fmt(inst.allocated_storage_gb, "GiB")),
            ("provisioned IOPS", fmt(inst.iops)),
            ("provisioned storage throughput", fmt(inst.storage_throughput, "MiB/s")),
            *([("DB name", fmt_value(inst.db_name))] if inst.db_name else []),
            *([("enhanced monitoring interval", fmt(inst.monitoring_interval, "s"))]
              if inst.monitoring_interval else [])]


def _warmup(findings: ReportFindings) -> WarmupView:
    units, timings = findings.units, findings.timings
    nbytes = findings.bytes or ByteCounts()  # a run that planned nothing (or an excerpt) has no byte counts
    rows = [("status", fmt_value(findings.status)),
            ("units done / total", f"{fmt(units.done)} / {fmt(units.total)}"),
            ("units failed", fmt(units.failed)),
            ("units in progress / not started", f"{fmt(units.in_progress)} / {fmt(units.not_started)}"),
            ("read / planned", f"{fmt(nbytes.read, scale=1 / MIB)} / {fmt(nbytes.planned, 'MiB', scale=1 / MIB)}"),
            ("covered (planned bytes of finished units)", fmt(nbytes.covered, "MiB", scale=1 / MIB)),
            ("coverage", fmt(findings.coverage_pct, "%")),
            ("read amplification (blocks read / planned)", fmt(findings.read_amplification, "×")),
            ("wall time", fmt_duration(timings.warmup_wall_seconds)),
            *engineer.rate_rows(findings),
            *engineer.time_to_warm(findings),
            ("read methods", fmt_value(findings.read_methods)),
            ("warm-up started", fmt_time(timings.warmup_started_at)),
            ("warm-up finished", fmt_time(timings.warmup_finished_at))]
    failed = [{"unit_id": fmt_value(u.unit_id), "error": fmt_value(u.error), "cause": fmt_value(u.cause)}
              for u in findings.failed_units]
    segments = findings.segments
    not_read = [{"key": fmt_value(s.key), "kind": fmt_value(s.kind),
                 "size": fmt(s.bytes, "MiB", scale=1 / MIB), "units": fmt_value(s.units),
                 "status": engineer.STATUS_WORDS.get(str(s.status), fmt_value(s.status))}
                for s in segments if s.status not in ("READ", None)]
    # findings.json lists at most segment_counts.listed_at_most segments, those not read first (issue 32 §8); a run
    # of before listed every one
    counts = findings.segment_counts
    total = int(num(counts.total if counts else None) or len(segments))
    not_read_total = int(num(counts.not_read if counts else None) or len(not_read))
    shown = not_read[:MAX_SEGMENT_ROWS]
    # every segment is in segments.jsonl (findings.segments_evidence) since issue 32 §8; before, in findings.json
    where = "segments.jsonl (every segment)" if findings.segments_evidence else "findings.json"
    return {"rows": rows, "failed": failed, "segments": total,
            "not_read": shown, "not_read_more": max(0, not_read_total - len(shown)), "not_read_where": where}


def _storage_init(findings: ReportFindings) -> StorageInitView:
    """What RDS said about the volume's initialization: one line for every rendering, and its notes."""
    section = findings.storage_initialization
    if section is None:
        return {"line": progress_sentence(None), "notes": [], "samples": 0, "green": False}
    blue_green, gaps = section.blue_green, section.gaps
    notes = [str(n) for n in (blue_green.note if blue_green else None, gaps.note if gaps else None) if n]
    return {"line": progress_sentence(section), "notes": notes, "samples": len(section.samples),
            "green": bool(blue_green.green if blue_green else None)}


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("cutover-prep")
    except Exception:  # not installed as a distribution (the Lambda layer): no version to show
        return ""


def build_view(findings: Readable) -> View:
    """The view model of a run's findings: every figure formatted once, for every renderer."""
    findings = findings_of(findings)
    target, bench = findings.target, findings.benchmark
    local = engineer.is_local(findings)
    benchmark = benchmark_view(bench)
    benchmark["conclusions"] = engineer.conclusions(findings, benchmark["conclusions"])
    benchmark["cached"] = engineer.cached_points(findings)
    benchmark["cloudwatch"] = not local  # no CloudWatch exists for a local run: no column of "missing"
    if local and benchmark["metrics"]:
        benchmark["metrics"] = "CloudWatch: none locally (moto's stand-in instance has no metrics)"
    charts = build_charts(findings)
    io_why = engineer.io_size_absent(bench)
    if io_why:
        charts = {**charts, **{cid: Chart(cid, charts[cid].caption, why=io_why)
                               for cid in ("chart-throughput", "chart-iops") if cid in charts}}
    return {
        "verdict": _verdict(findings),
        "target": fmt_value(target.db_instance_identifier if target else None),
        "engine": fmt_value(findings.engine or (target.engine if target else None)),
        "run_id": fmt_value(findings.run_id),
        "status": fmt_value(findings.status),
        "started": fmt_time(findings.timings.started_at),
        "finished": fmt_time(findings.timings.finished_at),
        "figures": engineer.headline_figures(findings),
        "instance": _instance(findings),
        "safety": _safety(findings),
        "limits": limits_view(bench.limits if bench else None),
        "crossover": crossover_view(bench),
        "warmup": _warmup(findings),
        "storage_init": _storage_init(findings),
        "storage_emulation": storage_emulation_line(findings),
        "estimate": estimate_line(findings),
        "rates": engineer.rates_line(findings),
        "eta": eta_line(findings),
        "bench": benchmark,
        "charts": charts,
        "io_size_absent": io_why,
        "local": local,
        "coverage": engineer.coverage(findings),
        "priority": engineer.priority(findings),
        "hot_set": engineer.hot_set_line(findings),
        "unread": engineer.unread(findings),
        "census": engineer.census(findings),
        "preflight": preflight_view(findings),
        "schema_version": fmt_value(findings.schema_version),
        "version": _version(),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
