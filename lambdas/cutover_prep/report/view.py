"""The view model of a run's findings, shared by every renderer (HTML, Markdown, terminal).

Every figure is formatted once here (units, missing values, sources), so the page, the
summary and the terminal cannot say different things about the same run. Pure: any
section of ``findings`` may be missing or None.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cutover_prep.report import clocks, engineer
from cutover_prep.report.chart_set import build_charts
from cutover_prep.report.charts import (
    Chart,
    benchmark_absence,
    done_points,
    fmt_duration,
    fmt_number,
    num,
    point_size_kb,
)
from cutover_prep.restore.progress import progress_sentence

DASH = "—"
MIB = 2**20
MAX_SEGMENT_ROWS = 50
UNIT_SUFFIXES = (("_mib_s", "MiB/s"), ("_mb_s", "MiB/s"), ("_kbps", "KiB/s"), ("_mbps", "Mbps"), ("_gb", "GiB"),
                 ("_kb", "KiB"), ("_pct", "%"), ("_minutes", "min"), ("_seconds", "s"))
KEY_LABELS = {"throughput_mbps": "storage throughput given (MiB/s)", "iops": "IOPS", "ebs_optimized": "EBS-optimized"}
WORDS = {"iops": "IOPS", "ebs": "EBS", "gp2": "gp2", "db": "DB"}


# ---- formatting ------------------------------------------------------------------------------

def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def fmt(value: Any, unit: str = "", *, scale: float = 1.0, digits: int | None = None) -> str:
    """A number for people: thousands separators, a few significant digits, DASH when absent."""
    number = num(value)
    if number is None:
        return DASH if value in (None, "") or isinstance(value, int | float) else str(value)
    number *= scale
    text = f"{number:,.{digits}f}" if digits is not None else fmt_number(number)
    return f"{text} {unit}".strip()


def fmt_time(value: Any) -> str:
    if not value:
        return DASH
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo else "")


def humanize(key: str) -> str:
    if key in KEY_LABELS:
        return KEY_LABELS[key]
    unit = ""
    for suffix, name in UNIT_SUFFIXES:
        if key.endswith(suffix):
            key, unit = key[: -len(suffix)], f" ({name})"
            break
    words = [WORDS.get(w, w) for w in str(key).split("_") if w]
    return " ".join(words) + unit


def fmt_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return DASH
    if isinstance(value, int | float):
        return fmt(value)
    if isinstance(value, list):
        return ", ".join(fmt_value(v) for v in value) or DASH
    if isinstance(value, dict):
        return "; ".join(f"{humanize(str(k))}: {fmt_value(v)}" for k, v in value.items()) or DASH
    return str(value)


def _unique(items: list[Any]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item not in (None, ""):
            seen.setdefault(str(item), None)
    return list(seen)


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


def _flat_rows(data: dict[str, Any], notes: list[Any], sources: list[Any], prefix: str = "") -> list[tuple[str, str]]:
    rows = []
    for key, value in data.items():
        if key == "notes" and isinstance(value, list):
            notes += value
        elif key == "sources" and isinstance(value, list | dict):
            sources += value if isinstance(value, list) else [s for v in value.values() for s in _l(v)]
        elif isinstance(value, dict):
            rows += _flat_rows(value, notes, sources, prefix=f"{prefix}{humanize(str(key))} · ")
        else:
            rows.append((prefix + humanize(str(key)), fmt_value(value)))
    return rows


def _source_text(source: Any) -> str:
    if not isinstance(source, dict):
        return str(source)
    return " — ".join(str(source[k]) for k in ("title", "url", "version") if source.get(k))


def _limits(limits: Any) -> dict[str, Any] | None:
    if not isinstance(limits, dict) or not limits:
        return None
    eff = _d(limits.get("effective"))
    levels = [(name, _d(eff.get(name))) for name in ("peak", "sustained") if isinstance(eff.get(name), dict)]
    if not levels and eff:
        levels = [("expected", eff)]
    effective = [{"level": name, "iops": fmt(lv.get("iops")), "iops_by": fmt_value(lv.get("iops_label")),
                  "mib_s": fmt(lv.get("throughput_kbps"), scale=1 / 1024),
                  "tp_by": fmt_value(lv.get("throughput_label")), "crossover": fmt(lv.get("crossover_kb"), "KiB")}
                 for name, lv in levels]
    notes: list[Any] = []
    sources: list[Any] = []
    general, tables = [], []
    for key, value in limits.items():
        if key == "effective" and isinstance(value, dict):
            continue
        if isinstance(value, dict) and key != "sources":
            tables.append((humanize(str(key)), _flat_rows(value, notes, sources)))
        else:
            general += _flat_rows({key: value}, notes, sources)
    if general:
        tables.insert(0, ("inputs", general))
    return {"effective": effective, "tables": [t for t in tables if t[1]], "notes": _unique(notes),
            "sources": _unique([_source_text(s) for s in sources])}


def _first(*values: Any) -> float | None:
    return next((num(v) for v in values if num(v) is not None), None)


def _crossover(bench: dict[str, Any]) -> dict[str, str | None] | None:
    """The IO size where reads turn from IOPS-bound to throughput-bound: measured, and predicted from the limits."""
    eff = _d(_d(bench.get("limits")).get("effective"))
    detail = _d(bench.get("crossover"))
    measured = _first(bench.get("crossover_kb"), detail.get("measured_kb"))
    peak = _first(detail.get("theoretical_peak_kb"), bench.get("crossover_theoretical_kb"),
                  _d(eff.get("peak")).get("crossover_kb"), eff.get("crossover_kb"))
    sustained = _first(detail.get("theoretical_sustained_kb"), _d(eff.get("sustained")).get("crossover_kb"))
    if benchmark_absence(bench) and peak is None:
        return None
    return {"measured": fmt(measured, "KiB") if measured is not None
            else "not found: the sequential points never went from IOPS-bound to throughput-bound",
            "peak": fmt(peak, "KiB") if peak is not None else "no limits to predict it from",
            "sustained": fmt(sustained, "KiB") if sustained is not None and eff.get("has_burst") else None}


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


def _cloudwatch(point: dict[str, Any], metric: str, scale: float = 1.0) -> str:
    entry = _d(_d(point.get("cloudwatch")).get(metric))
    if not entry:
        return DASH
    if num(entry.get("mean")) is not None:
        return fmt(entry.get("mean"), scale=scale)
    return str(entry.get("status") or DASH).replace("_", " ")


def _point_row(p: dict[str, Any]) -> dict[str, Any]:
    lat = _d(p.get("latency_us"))
    detail = _unique([*[str(n) for n in _l(p.get("notes"))],
                      ": ".join(str(x) for x in (p.get("error"), p.get("cause")) if x)])
    return {"id": fmt_value(p.get("point_id")), "kind": fmt_value(p.get("kind")), "sessions": fmt(p.get("sessions")),
            "iops": fmt(p.get("iops")), "mib_s": fmt(p.get("throughput_kbps"), scale=1 / 1024),
            "kb": fmt(point_size_kb(p)) if point_size_kb(p) is not None else DASH,
            "p50": fmt(lat.get("p50"), scale=1e-3), "p99": fmt(lat.get("p99"), scale=1e-3),
            "bound": fmt_value(p.get("bound")), "source": fmt_value(p.get("source")),
            "cw_iops": _cloudwatch(p, "ReadIOPS"), "cw_mib_s": _cloudwatch(p, "ReadThroughput", 1 / MIB),
            "status": fmt_value(p.get("status")), "ok": p.get("status") == "DONE", "detail": detail}


def _probe_rows(probes: dict[str, Any]) -> list[dict[str, str]]:
    """Cold vs warm, one row per figure; cold / warm on the median latency's row only (the verdict's figure)."""
    cold, warm = _d(probes.get("cold")), _d(probes.get("warm"))
    if not cold and not warm:
        return []
    figures = [("blocks read", lambda p: p.get("blocks_read"), "", 1.0),
               ("reads per second", lambda p: p.get("iops"), "", 1.0),
               ("throughput", lambda p: p.get("throughput_kbps"), "MiB/s", 1 / 1024)]
    figures += [(f"latency {k}", lambda p, k=k: _d(p.get("latency_us")).get(k), "ms", 1e-3)
                for k in ("p50", "p90", "p95", "p99", "mean", "max")]
    rows = [{"label": "status", "cold": fmt_value(cold.get("status")), "warm": fmt_value(warm.get("status")),
             "ratio": ""}]
    for label, get, unit, scale in figures:
        c, w = num(get(cold)), num(get(warm))
        # one cold/warm figure (engineer.cold_warm_speedup, the verdict's): on the median's row only
        rows.append({"label": label, "cold": fmt(c, unit, scale=scale), "warm": fmt(w, unit, scale=scale),
                     "ratio": (f"{c / w:.2f}×" if c is not None and w else DASH) if label == "latency p50" else ""})
    return rows


def probe_timing(probes: dict[str, Any]) -> str | None:
    """Who timed the probes' reads, when it was the database server (``measure.runner.run_probe``), with the
    client's own medians beside; None when the client timed them (the latencies are then the client's)."""
    cold, warm = _d(probes.get("cold")), _d(probes.get("warm"))
    if "server" not in (cold.get("timed_by"), warm.get("timed_by")):
        return None
    c, w = (_d(p.get("client_latency_us")).get("p50") for p in (cold, warm))
    return ("probe latencies as the database server timed each read, in the statement that read it (reads per "
            f"second are the client's); the client's own medians: {fmt(c, 'ms', scale=1e-3)} cold, "
            f"{fmt(w, 'ms', scale=1e-3)} warm")


def _probe_notes(probes: dict[str, Any]) -> list[str]:
    notes = []
    for phase in ("cold", "warm"):
        probe = _d(probes.get(phase))
        if probe.get("cut_short"):
            notes.append(f"{phase} probe: cut short by its time limit")
        for key in ("sized", "note", "cause"):
            if probe.get(key):
                notes.append(f"{phase} probe: {probe[key]}")
    timing = probe_timing(probes)
    if timing:
        notes.append(timing)
    warm = _d(probes.get("warm"))
    if warm.get("overlap_blocks") is not None:
        notes.append(f"warm probe: a fresh random sample, {fmt(warm.get('overlap_blocks'))} of its "
                     f"{fmt(warm.get('blocks_read'))} blocks were read by the cold probe")
    return notes


def _benchmark(bench: Any) -> dict[str, Any]:
    b = _d(bench)
    error = _d(b.get("error"))
    probes = _d(b.get("probes"))
    points = [p for p in _l(b.get("points")) if isinstance(p, dict)]
    known = {p.get("point_id") for p in points}
    points += [{**f, "status": "FAILED"} for f in _l(b.get("failed_points"))
               if isinstance(f, dict) and f.get("point_id") not in known]
    caps = _d(b.get("capabilities"))
    capabilities = [(humanize(str(k)), fmt_value(v)) for k, v in caps.items() if k != "notes"]
    target = _d(b.get("target"))
    if target:
        capabilities.append(("sequential points read", f"{fmt_value(target.get('segment'))} "
                             f"({fmt(target.get('bytes'), 'MiB', scale=1 / MIB)})"))
    metrics = _d(b.get("metrics"))
    missing = _l(metrics.get("missing"))
    return {"status": str(b.get("status") or "NOT_RUN"), "absent": benchmark_absence(bench),
            "error": ": ".join(str(x) for x in (error.get("error"), error.get("cause")) if x),
            "probe_rows": _probe_rows(probes), "probe_notes": _probe_notes(probes),
            "probe_timing": probe_timing(probes),
            "points": [_point_row(p) for p in points], "done": len(done_points(b)),
            "capabilities": capabilities,
            "conclusions": _unique(_l(b.get("conclusions"))),
            "notes": _unique(_l(b.get("notes")) + _l(caps.get("notes"))),
            "metrics": (f"CloudWatch: {len(missing)} point/metric pairs never arrived (recorded missing, not invented)"
                        if missing else ("CloudWatch: every required datapoint arrived" if metrics.get("complete")
                                         else None))}


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
    benchmark = _benchmark(findings.get("benchmark"))
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
        "limits": _limits(bench.get("limits")),
        "crossover": _crossover(bench),
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


