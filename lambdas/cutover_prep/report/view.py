"""The view model of a run's findings, shared by every renderer (HTML, Markdown, terminal).

Every figure is formatted once here (units, missing values, sources), so the page, the
summary and the terminal cannot say different things about the same run. Pure: any
section of ``findings`` may be missing or None.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cutover_prep.report import clocks, engineer
from cutover_prep.report.bench_view import benchmark_view, crossover_view, limits_view, probe_timing
from cutover_prep.report.chart_set import build_charts
from cutover_prep.report.charts import Chart, fmt_duration, num
from cutover_prep.report.formatting import DASH, MIB, _d, _l, fmt, fmt_time, fmt_value, humanize
from cutover_prep.restore.progress import progress_sentence

__all__ = ["DASH", "build_view", "eta_line", "estimate_line", "fmt", "fmt_time", "preflight_view", "probe_timing",
           "storage_emulation_line"]

MAX_SEGMENT_ROWS = 50


# ---- sections ----------------------------------------------------------------------------------

def _verdict(findings: dict[str, Any]) -> dict[str, Any]:
    verdict = _d(findings.get("verdict"))
    name = str(verdict.get("verdict") or "NO VERDICT")
    reasons = [r for r in _l(verdict.get("reasons")) if isinstance(r, dict)]
    return {"name": name, "css": {"READY": "ready", "NOT_READY": "not-ready"}.get(name, "none"),
            "failing": [r for r in reasons if not r.get("ok")],
            "passing": [{**r, "exception": engineer.exception_of(r, findings)} for r in reasons
                        if r.get("ok") and r.get("judged", True)],
            "not_judged": [r for r in reasons if r.get("ok") and not r.get("judged", True)],
            "thresholds": [(humanize(str(k)), fmt_value(v)) for k, v in _d(verdict.get("thresholds")).items()
                           if v is not None]}


def _key_figures(findings: dict[str, Any]) -> list[dict[str, str]]:
    """The headline figures, each with where it came from (``engineer.headline_figures``)."""
    return engineer.headline_figures(findings)


def _safety(findings: dict[str, Any]) -> list[tuple[str, str]]:
    """How the run reached the database and what it wrote there (the write test's scratch objects)."""
    connection = _d(_d(findings.get("plan")).get("connection"))
    rows = []
    if connection.get("transport"):
        rows.append(("connection", fmt_value(connection.get("transport"))))
        rows.append(("read-only guard", fmt_value(connection.get("read_only_guard"))))
    scratch = _d(findings.get("scratch"))
    if scratch.get("created") or scratch.get("left"):
        rows.append(("write test scratch objects",
                     f"created {fmt_value(scratch.get('created'))}; removed {fmt_value(scratch.get('removed'))}; "
                     f"left {fmt_value(scratch.get('left') or 'none')}"))
    return rows


def storage_emulation_line(findings: dict[str, Any]) -> str | None:
    """A local run's storage in one line: the emulated restored volume and what it measured, or why
    there was none; None for a run in AWS."""
    section = findings.get("storage_emulation")
    if not isinstance(section, dict):
        return None
    if not section.get("emulated"):
        return f"no emulated restored volume: {fmt_value(section.get('reason'))}"
    profile = _d(section.get("profile"))
    line = (f"emulated restored volume: {fmt_value(profile.get('storage_type'))} "
            f"{fmt(profile.get('allocated_gb'), 'GiB')} on {fmt_value(profile.get('instance_class'))} "
            f"(time scale {fmt(profile.get('time_scale'))}); {fmt(section.get('hydrated_pct'), '%')} of the "
            f"database's snapshot chunks hydrated; first touch p50 {fmt(section.get('first_touch_ms'), 'ms')}")
    scale = clocks.time_scale(findings)
    if clocks.ms(section.get("first_touch_ms"), scale):
        line += f" wall = {clocks.ms(section.get('first_touch_ms'), scale)} on the emulated clock"
    if section.get("warmup_to_ceiling") is not None:
        line += (f"; warm-up {fmt(section.get('warmup_mib_per_s'), 'MiB/s')} = "
                 f"{float(section['warmup_to_ceiling']):.2f}× the {fmt(section.get('ceiling_mib_per_s'), 'MiB/s')} "
                 "ceiling")
        emulated = (clocks.rate(section.get("warmup_mib_per_s"), scale, 1),
                    clocks.rate(section.get("ceiling_mib_per_s"), scale, 1))
        if None not in emulated:
            line += f" (emulated clock: {emulated[0]} of {emulated[1]} MiB/s)"
    line += clocks.served_text(section.get("warmup_served"), section.get("ceiling_mib_per_s"), scale)
    return line


def estimate_line(findings: dict[str, Any]) -> str | None:
    """``findings.estimate`` in one line: what the run estimated when it planned, and what happened."""
    section = findings.get("estimate")
    if not isinstance(section, dict):
        return None
    est, act, ratio = _d(section.get("estimate")), _d(section.get("actual")), _d(section.get("ratios"))
    times = f"; time ×{float(ratio['seconds']):.2f} the estimate" if ratio.get("seconds") is not None else ""
    mib = 1 / 2**20
    return (f"Estimate vs actual: {fmt(est.get('bytes_to_read'), 'MiB', scale=mib, digits=1)} in "
            f"{fmt_duration(est.get('estimated_seconds'))} at {fmt(est.get('assumed_mib_per_s'), 'MiB/s')} "
            f"({fmt_value(est.get('source'))}) estimated; {fmt(act.get('bytes_read'), 'MiB', scale=mib, digits=1)}"
            f" in {fmt_duration(act.get('warmup_seconds'))} at {fmt(act.get('mib_per_s'), 'MiB/s')} read{times}")


def eta_line(findings: dict[str, Any]) -> str | None:
    """``findings.warmup.eta`` in one line: the finish the ETA predicted at 25/50/75 % of the bytes against
    the finish that happened (``findings.eta``), or why it was not judged; None without samples."""
    warmup = _d(findings.get("warmup"))
    eta = _d(warmup.get("eta"))
    if not warmup.get("eta_samples") or not eta:
        return None
    if not eta.get("judged"):
        return f"ETA not judged: {fmt_value(eta.get('why'))}"
    parts = [f"at {a['pct']} % predicted {fmt_duration(a.get('predicted_s'))} "
             f"({float(a['error_pct']):+.0f} %)" for a in eta.get("at") or [] if a.get("error_pct") is not None]
    return (f"ETA at the measured rate vs the warm-up's actual {fmt_duration(eta.get('actual_s'))}: "
            + ("; ".join(parts) if parts else "no quarter reached with a rate"))


def preflight_view(findings: dict[str, Any]) -> dict[str, Any] | None:
    """The Preflight state's report (findings ``preflight``): a headline, then one line a check, status
    first; None for a run without one."""
    section = findings.get("preflight")
    if not isinstance(section, dict):
        return None
    if section.get("enabled") is False:
        return {"line": "preflight not run (input preflight.enabled false)", "css": "none", "rows": []}
    failed = [str(f) for f in _l(section.get("failed"))]
    took = f"in {fmt(section.get('seconds'), 's', digits=1)}"
    if not failed:
        line, css = f"preflight passed {took}", "ready"
    else:
        line, css = (f"preflight FAILED {took}: {len(failed)} check(s): {'; '.join(failed)}"
                     + (" (on_failure warn: the run went on)" if section.get("on_failure") == "warn" else "")), \
            "not-ready"
    rows = []
    for c in _l(section.get("checks")):
        if not isinstance(c, dict):
            continue
        size = f" ({fmt(c.get('bytes'), 'MiB', scale=1 / MIB, digits=1)})" if c.get("bytes") is not None else ""
        rows.append({"status": str(c.get("status") or DASH).upper(), "kind": str(c.get("kind") or DASH),
                     "name": str(c.get("name") or DASH), "detail": f"{c.get('detail') or DASH}{size}"})
    return {"line": line, "css": css, "rows": rows}


def _instance(findings: dict[str, Any]) -> list[tuple[str, str]]:
    inst, target = _d(findings.get("instance")), _d(findings.get("target"))
    if not inst:
        return []
    version = " ".join(str(x) for x in (inst.get("engine") or target.get("engine"), inst.get("engine_version")) if x)
    if inst.get("stand_in"):  # a local run without emulation: moto's instance says nothing of the database
        return [("engine", version or DASH), ("instance and storage", fmt_value(inst["stand_in"]))]
    emulated = " (emulated)" if inst.get("emulated") else ""
    return [("engine", version or DASH), (f"instance class{emulated}", fmt_value(inst.get("db_instance_class"))),
            (f"storage type{emulated}", fmt_value(inst.get("storage_type"))),
            ("allocated storage", fmt(inst.get("allocated_storage_gb"), "GiB")),
            ("provisioned IOPS", fmt(inst.get("iops"))),
            ("provisioned storage throughput", fmt(inst.get("storage_throughput"), "MiB/s")),
            *([("DB name", fmt_value(inst["db_name"]))] if inst.get("db_name") else []),
            *([("enhanced monitoring interval", fmt(inst["monitoring_interval"], "s"))]
              if inst.get("monitoring_interval") else [])]



def _warmup(findings: dict[str, Any]) -> dict[str, Any]:
    units, nbytes = _d(findings.get("units")), _d(findings.get("bytes"))
    timings = _d(findings.get("timings"))
    rows = [("status", fmt_value(findings.get("status"))),
            ("units done / total", f"{fmt(units.get('done'))} / {fmt(units.get('total'))}"),
            ("units failed", fmt(units.get("failed"))),
            ("units in progress / not started", f"{fmt(units.get('in_progress'))} / {fmt(units.get('not_started'))}"),
            ("read / planned",
             f"{fmt(nbytes.get('read'), scale=1 / MIB)} / {fmt(nbytes.get('planned'), 'MiB', scale=1 / MIB)}"),
            ("covered (planned bytes of finished units)", fmt(nbytes.get("covered"), "MiB", scale=1 / MIB)),
            ("coverage", fmt(findings.get("coverage_pct"), "%")),
            ("read amplification (blocks read / planned)", fmt(findings.get("read_amplification"), "×")),
            ("wall time", fmt_duration(timings.get("warmup_wall_seconds"))),
            *engineer.rate_rows(findings),
            *engineer.time_to_warm(findings),
            ("read methods", fmt_value(findings.get("read_methods"))),
            ("warm-up started", fmt_time(timings.get("warmup_started_at"))),
            ("warm-up finished", fmt_time(timings.get("warmup_finished_at")))]
    failed = [{"unit_id": fmt_value(u.get("unit_id")), "error": fmt_value(u.get("error")),
               "cause": fmt_value(u.get("cause"))} for u in _l(findings.get("failed_units")) if isinstance(u, dict)]
    segments = [s for s in _l(findings.get("segments")) if isinstance(s, dict)]
    not_read = [{"key": fmt_value(s.get("key")), "kind": fmt_value(s.get("kind")),
                 "size": fmt(s.get("bytes"), "MiB", scale=1 / MIB), "units": fmt_value(s.get("units")),
                 "status": engineer.STATUS_WORDS.get(str(s.get("status")), fmt_value(s.get("status")))}
                for s in segments if s.get("status") not in ("READ", None)]
    # findings.json lists at most segment_counts.listed_at_most segments, those not read first (issue 32 §8); a run
    # of before listed every one
    counts = _d(findings.get("segment_counts"))
    total = int(num(counts.get("total")) or len(segments))
    not_read_total = int(num(counts.get("not_read")) or len(not_read))
    shown = not_read[:MAX_SEGMENT_ROWS]
    # every segment is in segments.jsonl (findings.segments_evidence) since issue 32 §8; before, in findings.json
    where = "segments.jsonl (every segment)" if findings.get("segments_evidence") else "findings.json"
    return {"rows": rows, "failed": failed, "segments": total,
            "not_read": shown, "not_read_more": max(0, not_read_total - len(shown)), "not_read_where": where}


def _storage_init(findings: dict[str, Any]) -> dict[str, Any]:
    """What RDS said about the volume's initialization: one line for every rendering, and its notes."""
    section = _d(findings.get("storage_initialization"))
    notes = [str(n) for n in (_d(section.get("blue_green")).get("note"), _d(section.get("gaps")).get("note")) if n]
    samples = _l(section.get("samples"))
    return {"line": progress_sentence(section), "notes": notes, "samples": len(samples),
            "green": bool(_d(section.get("blue_green")).get("green"))}



def _version() -> str:
    try:
        from importlib.metadata import version

        return version("cutover-prep")
    except Exception:  # not installed as a distribution (the Lambda layer): no version to show
        return ""


def build_view(findings: dict[str, Any]) -> dict[str, Any]:
    """The view model of a run's findings: every figure formatted once, for every renderer."""
    target, bench = _d(findings.get("target")), _d(findings.get("benchmark"))
    local = engineer.is_local(findings)
    benchmark = benchmark_view(findings.get("benchmark"))
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
        "target": fmt_value(target.get("db_instance_identifier")),
        "engine": fmt_value(findings.get("engine") or target.get("engine")),
        "run_id": fmt_value(findings.get("run_id")),
        "status": fmt_value(findings.get("status")),
        "started": fmt_time(_d(findings.get("timings")).get("started_at")),
        "finished": fmt_time(_d(findings.get("timings")).get("finished_at")),
        "figures": _key_figures(findings),
        "instance": _instance(findings),
        "safety": _safety(findings),
        "limits": limits_view(bench.get("limits")),
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
        "schema_version": fmt_value(findings.get("schema_version")),
        "version": _version(),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
