"""The benchmark's part of the view model (pure): the instance's limits and the crossover they predict, the
sweep points' rows, and the cold and warm probes side by side. The limits are the analysis' own mapping, shown
as it is (every key a row); the rest reads the record (``parts.ReportBenchmark``)."""

from __future__ import annotations

from typing import Any

from cutover_prep.report.charts import benchmark_absence, done_points, num, point_size_kb
from cutover_prep.report.formatting import DASH, MIB, _l, fmt, fmt_value, humanize
from cutover_prep.report.formatting import unique as _unique
from cutover_prep.report.parts import (
    Capabilities,
    Crossover,
    EffectiveLimits,
    LimitLevel,
    Probes,
    ReportBenchmark,
    ReportPoint,
    ReportProbe,
    Source,
    limits_of,
)
from cutover_prep.report.reading import present
from cutover_prep.report.view_model import BenchView, CrossoverView, LimitsView, PointRow, ProbeRow


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
    said = Source.model_validate(source)
    return " — ".join(str(v) for v in (said.title, said.url, said.version) if v)


def limits_view(limits: Any) -> LimitsView | None:
    if not isinstance(limits, dict) or not limits:
        return None
    eff = limits_of(limits).effective or EffectiveLimits()
    levels: list[tuple[str, LimitLevel]] = [(name, lv) for name, lv in eff.named() if lv is not None]
    if not levels and present(eff):
        levels = [("expected", eff)]
    effective = [{"level": name, "iops": fmt(lv.iops), "iops_by": fmt_value(lv.iops_label),
                  "mib_s": fmt(lv.throughput_kbps, scale=1 / 1024),
                  "tp_by": fmt_value(lv.throughput_label), "crossover": fmt(lv.crossover_kb, "KiB")}
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


def crossover_view(bench: ReportBenchmark | None) -> CrossoverView | None:
    """The IO size where reads turn from IOPS-bound to throughput-bound: measured, and predicted from the limits."""
    eff = limits_of(bench.limits if bench else None).effective or EffectiveLimits()
    detail = (bench.crossover if bench else None) or Crossover()
    measured = _first(bench.crossover_kb if bench else None, detail.measured_kb)
    peak = _first(detail.theoretical_peak_kb, bench.crossover_theoretical_kb if bench else None,
                  eff.peak.crossover_kb if eff.peak else None, eff.crossover_kb)
    sustained = _first(detail.theoretical_sustained_kb, eff.sustained.crossover_kb if eff.sustained else None)
    if benchmark_absence(bench) and peak is None:
        return None
    return {"measured": fmt(measured, "KiB") if measured is not None
            else "not found: the sequential points never went from IOPS-bound to throughput-bound",
            "peak": fmt(peak, "KiB") if peak is not None else "no limits to predict it from",
            "sustained": fmt(sustained, "KiB") if sustained is not None and eff.has_burst else None}


def _cloudwatch(point: ReportPoint, metric: str, scale: float = 1.0) -> str:
    entry = point.cloudwatch.get(metric)
    if entry is None or not entry.model_fields_set:
        return DASH
    if num(entry.mean) is not None:
        return fmt(entry.mean, scale=scale)
    return str(entry.status or DASH).replace("_", " ")


def _point_row(p: ReportPoint) -> PointRow:
    lat = p.latency_us
    detail = _unique([*[str(n) for n in _l(p.notes)], ": ".join(str(x) for x in (p.error, p.cause) if x)])
    return {"id": fmt_value(p.point_id), "kind": fmt_value(p.kind), "sessions": fmt(p.sessions),
            "iops": fmt(p.iops), "mib_s": fmt(p.throughput_kbps, scale=1 / 1024),
            "kb": fmt(point_size_kb(p)) if point_size_kb(p) is not None else DASH,
            "p50": fmt(lat.p50 if lat else None, scale=1e-3), "p99": fmt(lat.p99 if lat else None, scale=1e-3),
            "bound": fmt_value(p.bound), "source": fmt_value(p.source),
            "cw_iops": _cloudwatch(p, "ReadIOPS"), "cw_mib_s": _cloudwatch(p, "ReadThroughput", 1 / MIB),
            "status": fmt_value(p.status), "ok": p.status == "DONE", "detail": detail}


def _latency(probe: ReportProbe, percentile: str) -> Any:
    return getattr(probe.latency_us, percentile, None)


def _probe_rows(probes: Probes) -> list[ProbeRow]:
    """Cold vs warm, one row per figure; cold / warm on the median latency's row only (the verdict's figure)."""
    if not probes.cold_given and not probes.warm_given:
        return []
    cold, warm = probes.cold or ReportProbe(), probes.warm or ReportProbe()
    figures: list[tuple[str, Any, str, float]] = [
        ("blocks read", lambda p: p.blocks_read, "", 1.0), ("reads per second", lambda p: p.iops, "", 1.0),
        ("throughput", lambda p: p.throughput_kbps, "MiB/s", 1 / 1024)]
    figures += [(f"latency {k}", lambda p, k=k: _latency(p, k), "ms", 1e-3)
                for k in ("p50", "p90", "p95", "p99", "mean", "max")]
    rows = [{"label": "status", "cold": fmt_value(cold.status), "warm": fmt_value(warm.status), "ratio": ""}]
    for label, get, unit, scale in figures:
        c, w = num(get(cold)), num(get(warm))
        # one cold/warm figure (engineer.cold_warm_speedup, the verdict's): on the median's row only
        rows.append({"label": label, "cold": fmt(c, unit, scale=scale), "warm": fmt(w, unit, scale=scale),
                     "ratio": (f"{c / w:.2f}×" if c is not None and w else DASH) if label == "latency p50" else ""})
    return rows


def probe_timing(probes: Probes) -> str | None:
    """Who timed the probes' reads, when it was the database server (``measure.runner.run_probe``), with the
    client's own medians beside; None when the client timed them (the latencies are then the client's)."""
    cold, warm = probes.cold or ReportProbe(), probes.warm or ReportProbe()
    if "server" not in (cold.timed_by, warm.timed_by):
        return None
    c, w = (p.client_latency_us.p50 if p.client_latency_us else None for p in (cold, warm))
    return ("probe latencies as the database server timed each read, in the statement that read it (reads per "
            f"second are the client's); the client's own medians: {fmt(c, 'ms', scale=1e-3)} cold, "
            f"{fmt(w, 'ms', scale=1e-3)} warm")


def _probe_notes(probes: Probes) -> list[str]:
    notes = []
    for phase, probe in (("cold", probes.cold), ("warm", probes.warm)):
        if probe is None:
            continue
        if probe.cut_short:
            notes.append(f"{phase} probe: cut short by its time limit")
        notes += [f"{phase} probe: {said}" for said in (probe.sized, probe.note, probe.cause) if said]
    timing = probe_timing(probes)
    if timing:
        notes.append(timing)
    warm = probes.warm
    if warm is not None and warm.overlap_blocks is not None:
        notes.append(f"warm probe: a fresh random sample, {fmt(warm.overlap_blocks)} of its "
                     f"{fmt(warm.blocks_read)} blocks were read by the cold probe")
    return notes


def benchmark_view(bench: ReportBenchmark | None) -> BenchView:
    b = bench or ReportBenchmark(status="")
    points = list(b.points)
    known = {p.point_id for p in points}
    points += [f.model_copy(update={"status": "FAILED"}) for f in b.failed_points if f.point_id not in known]
    caps = b.capabilities if isinstance(b.capabilities, dict) else {}  # the engine's capabilities, each as it is
    capabilities = [(humanize(str(k)), fmt_value(v)) for k, v in caps.items() if k != "notes"]
    if present(b.target):
        assert b.target is not None
        capabilities.append(("sequential points read", f"{fmt_value(b.target.segment)} "
                             f"({fmt(b.target.bytes, 'MiB', scale=1 / MIB)})"))
    missing = b.metrics.missing if b.metrics else []
    probes = b.probes
    error = b.error
    return {"status": str(b.status or "NOT_RUN"), "absent": benchmark_absence(bench),
            "error": ": ".join(str(x) for x in ((error.error, error.cause) if error else ()) if x),
            "probe_rows": _probe_rows(probes), "probe_notes": _probe_notes(probes),
            "probe_timing": probe_timing(probes),
            "points": [_point_row(p) for p in points], "done": len(done_points(bench)),
            "capabilities": capabilities,
            "conclusions": _unique(_l(b.conclusions)),
            "notes": _unique(_l(b.notes) + _l(Capabilities.model_validate(caps).notes)),
            "metrics": (f"CloudWatch: {len(missing)} point/metric pairs never arrived (recorded missing, not invented)"
                        if missing else ("CloudWatch: every required datapoint arrived"
                                         if b.metrics and b.metrics.complete else None))}
