"""``summary.md``: the run in a few lines of Markdown, for pasting into a change ticket (pure)."""

from __future__ import annotations

from typing import Any


def _mib(n: float | None) -> str:
    return f"{(n or 0) / 2**20:,.1f} MiB"


def summary_markdown(findings: dict[str, Any], *, findings_uri: str | None = None,
                     report_uri: str | None = None) -> str:
    verdict = findings.get("verdict") or {}
    target = findings.get("target") or {}
    units = findings.get("units") or {}
    b = findings.get("bytes") or {}
    lines = [
        f"# Cutover Prep: {verdict.get('verdict', 'NO VERDICT')} — {target.get('db_instance_identifier', '?')}",
        "",
        f"- Run `{findings.get('run_id')}` ({findings.get('engine')}), status {findings.get('status')}, "
        f"finished {(findings.get('timings') or {}).get('finished_at', '?')}",
        f"- Warm-up: {units.get('done', 0)}/{units.get('total', 0)} units, {units.get('failed', 0)} failed; "
        f"{_mib(b.get('read'))} read of {_mib(b.get('planned'))} planned; coverage {findings.get('coverage_pct')} %; "
        f"read amplification {findings.get('read_amplification') or 'n/a'}",
    ]
    failing = [r for r in verdict.get("reasons", []) if not r.get("ok")]
    passing = [r for r in verdict.get("reasons", []) if r.get("ok")]
    if failing:
        lines += ["", "## Why not ready", *[f"- {r['message']}" for r in failing]]
    if passing:
        lines += ["", "## Checks passed", *[f"- {r['message']}" for r in passing]]
    bench = findings.get("benchmark") or {}
    probes = bench.get("probes") or {}
    if bench.get("status") not in (None, "NOT_RUN", "DISABLED"):
        lines += ["", f"## Benchmark ({bench.get('status')})"]
        for phase in ("cold", "warm"):
            p = probes.get(phase) or {}
            if p.get("status") == "DONE":
                lat = p.get("latency_us") or {}
                lines.append(f"- {phase} probe: {p.get('blocks_read')} blocks, {p.get('iops', 0):,.0f} reads/s, "
                             f"median {lat.get('p50', 0) / 1000:.2f} ms, p99 {lat.get('p99', 0) / 1000:.2f} ms")
        rows = [p for p in bench.get("points") or [] if p.get("status") == "DONE"]
        if rows:
            lines += ["", "| point | IOPS | MiB/s | KiB/IO | bound |", "| --- | ---: | ---: | ---: | --- |"]
            lines += [f"| {p['point_id']} | {p.get('iops', 0):,.0f} | {p.get('throughput_kbps', 0) / 1024:,.1f} | "
                      f"{p.get('effective_io_kb') or 0:,.1f} | {p.get('bound') or ''} |" for p in rows]
        if bench.get("conclusions"):
            lines += ["", *[f"- {c}" for c in bench["conclusions"]]]
    links = ([f"- Report (charts): `{report_uri}`"] if report_uri else []) + \
        ([f"- Evidence: `{findings_uri}`"] if findings_uri else [])
    if links:
        lines += ["", *links]
    return "\n".join(lines) + "\n"
