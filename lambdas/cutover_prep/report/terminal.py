"""The findings as terminal lines (``cutover-prep local``), from the same view model as the page.

Each line goes through ``escape.for_terminal``: a name from the database with a line feed or an
escape sequence in it is shown inside its own line, its controls written out, never sent.
"""

from __future__ import annotations

from cutover_prep.escape import for_terminal
from cutover_prep.report import clocks, engineer
from cutover_prep.report.charts import fmt_number, num
from cutover_prep.report.parts import Probes, ReportFindings, ReportPoint, ReportProbe
from cutover_prep.report.reading import Readable, findings_of
from cutover_prep.report.view import DASH, build_view
from cutover_prep.report.view_model import View

PROBE_LINE = ("reads per second", "latency p50", "latency p99")


def _coverage_lines(view: View) -> list[str]:
    """Coverage per database, the largest relations not fully read, the priority order, units not read."""
    lines = []
    cov = view["coverage"]
    if cov:
        lines.append("  coverage: " + "; ".join(f"{g['name']} {g['pct']} of {g['planned']}" for g in cov["databases"]))
        lines += [f"    {r['name']} ({r['size']}): {r['status']}, {r['pct']}" for r in cov["largest"]
                  if r["css"] != "READ"]
    if view["priority"]:
        lines.append(f"  priority order {view['priority']['line']}")
        lines += [f"    {g['pattern']}: {g['units']} units, {g['finished_text']}" for g in view["priority"]["groups"]]
    if view["census"]:
        census = view["census"]
        lines.append(f"  volume census: {census['line']}")
        lines += [f"    {r['name']} ({r['database']}, {r['kind']}, {r['size']}): {r['reason']}"
                  for r in census["rows"][:10]]
        if len(census["rows"]) > 10 or census["more"]:
            lines.append(f"    ... and {max(0, len(census['rows']) - 10) + census['more']} more objects not read: "
                         f"{census['where']}")
        lines += [f"    dropped while the run ran: {d}" for d in census["dropped"][:10]]
        if len(census["dropped"]) > 10 or census["dropped_more"]:
            lines.append(f"    ... and {max(0, len(census['dropped']) - 10) + census['dropped_more']} more dropped")
    rows = view["unread"]["rows"]
    lines += [f"  unit {u['unit_id']} not read ({u['status']}, {u['read']}): {u['cause']}" for u in rows[:10]]
    if len(rows) > 10:
        lines.append(f"  ... and {len(rows) - 10 + view['unread']['more']} more units not read: see findings.json")
    lines += [f"  {view['rates']}"] if view["rates"] else []
    lines += [f"  {label}: {value}" for label, value in view["warmup"]["rows"]
              if label.startswith(("time to", "projected"))]
    return lines


def _points(findings: ReportFindings) -> list[ReportPoint]:
    return findings.benchmark.points if findings.benchmark else []


def _emulated_probes(findings: ReportFindings, scale: float | None) -> list[str]:
    """The probes again on the emulated volume's clock (an emulated local run only: its figures are wall-clock
    on a volume slowed down by ``scale``), so they can be set against the README's and the seeds' figures."""
    if scale is None:
        return []
    probes = findings.benchmark.probes if findings.benchmark else Probes()
    cold, warm = probes.cold or ReportProbe(), probes.warm or ReportProbe()
    figures = [("reads per second", clocks.rate(cold.iops, scale, 1), clocks.rate(warm.iops, scale, 1))]
    for k in ("p50", "p99"):
        c, w = getattr(cold.latency_us, k, None), getattr(warm.latency_us, k, None)
        figures.append((f"latency {k}", clocks.ms(num(c) / 1000 if num(c) is not None else None, scale),
                        clocks.ms(num(w) / 1000 if num(w) is not None else None, scale)))
    shown = [f"{label} {c} -> {w}" for label, c, w in figures if c is not None and w is not None]
    if not shown:
        return []
    return [f"    on the emulated clock (the volume ran ×{fmt_number(scale)} slowed): " + "; ".join(shown)]


def _emulated_point(point: ReportPoint | None, scale: float | None) -> str:
    if scale is None or point is None:
        return ""
    iops = clocks.rate(point.iops, scale, 0)
    kbps = num(point.throughput_kbps)
    mib = clocks.rate(kbps / 1024 if kbps is not None else None, scale, 1)
    return f"  (emulated clock: {iops} IO/s, {mib} MiB/s)" if iops is not None and mib is not None else ""


def terminal_lines(findings: Readable) -> list[str]:
    """The benchmark and the verdict, indented under the run's own line."""
    findings = findings_of(findings)
    view = build_view(findings)
    bench, verdict = view["bench"], view["verdict"]
    lines = _coverage_lines(view)
    lines.append(f"  benchmark: {bench['status']}")
    rows = {r["label"]: r for r in bench["probe_rows"]}
    scale = clocks.time_scale(findings)
    if all(label in rows for label in PROBE_LINE):
        speedup = engineer.cold_warm_text(findings)
        lines.append("    probes cold -> warm: " + "; ".join(
            f"{label} {rows[label]['cold']} -> {rows[label]['warm']}" for label in PROBE_LINE)
            + (f" ({speedup}, by the median)" if speedup else ""))
        lines += [f"    - {bench['probe_timing']}"] if bench["probe_timing"] else []
        lines += _emulated_probes(findings, scale)
    width = max([22] + [len(p["id"]) for p in bench["points"]])  # ids whole, never cut short
    raw = {str(p.point_id): p for p in _points(findings)}
    for p in bench["points"]:
        if p["ok"]:
            lines.append(f"    {p['id']:<{width}} {p['iops']:>10} IO/s {p['mib_s']:>9} MiB/s {p['kb']:>7} KiB/IO  "
                         f"{p['bound']:<10} p99 {p['p99'] + ' ms' if p['p99'] != DASH else DASH}"
                         + _emulated_point(raw.get(p["id"]), scale))
        else:
            lines.append(f"    {p['id']:<{width}} {p['status']}: {'; '.join(p['detail'])}")
    lines += [f"    - {c}" for c in bench["cached"]]
    lines += [f"    - {sentence}" for sentence in bench["conclusions"]]
    if view["storage_emulation"]:
        lines.append(f"  {view['storage_emulation']}")
    if view["estimate"]:
        lines.append(f"  {view['estimate']}")
    lines.append(f"  {view['storage_init']['line']}")
    lines += [f"    - {note}" for note in view["storage_init"]["notes"]]
    lines.append(f"  verdict: {verdict['name']}")
    lines += [f"    - {r['message']}" for r in verdict["failing"]]
    lines += [f"    - {r['code']} not judged: {r['message']}" for r in verdict["not_judged"]
              if r["code"] == "ENGINE_INTERNAL"]  # a visible line (issue 33): READY does not hide it
    lines += [f"    - {r['code']} {r['exception']}" for r in verdict["passing"] if r["exception"]]
    lines += [f"  {label}: {value}" for label, value in view["safety"]]
    return [for_terminal(line) for line in lines]
