"""The benchmark's part of the view model (pure): the instance's limits and the crossover they predict, the
sweep points' rows, and the cold and warm probes side by side."""

from __future__ import annotations

from typing import Any

from cutover_prep.report.charts import benchmark_absence, done_points, num, point_size_kb
from cutover_prep.report.formatting import DASH, MIB, _d, _l, fmt, fmt_value, humanize
from cutover_prep.report.formatting import unique as _unique


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


def limits_view(limits: Any) -> dict[str, Any] | None:
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


def crossover_view(bench: dict[str, Any]) -> dict[str, str | None] | None:
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


def benchmark_view(bench: Any) -> dict[str, Any]:
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
