"""``summary.md``: the run in a few lines of Markdown, for pasting into a change ticket (pure).

Every figure comes from the same view model as ``report.html`` (``view.build_view``): the
ticket and the page cannot disagree about a run. Every text that may hold a name or a message from
the database or the run's input (names, ids, patterns, reasons, causes, notes, conclusions) is a
code span made by ``escape.for_markdown``: nothing in it becomes a heading, a link, an image or
HTML, and no control character gets through (the summary is also printed by ``cutover-prep report``
and appended to a CI job's summary page). Figures and our own words are written as they are.
"""

from __future__ import annotations

from cutover_prep.escape import for_markdown
from cutover_prep.live.names import is_dashboard_url
from cutover_prep.report.reading import Readable, findings_of
from cutover_prep.report.view import DASH, build_view
from cutover_prep.report.view_model import View
from cutover_prep.report.volumes import markdown_lines as volume_lines

PROBE_FIGURES = ("status", "blocks read", "reads per second", "latency p50", "latency p99")
VERDICTS = ("READY", "NOT_READY", "NO VERDICT")


def _md(text: object) -> str:
    return for_markdown(text) or DASH


def _cell(text: object) -> str:
    return for_markdown(text, cell=True) or DASH


def _coverage_lines(view: View) -> list[str]:
    """Coverage per database, the largest relations not fully read, the priority order, the units not read."""
    lines: list[str] = []
    cov = view["coverage"]
    if cov:
        lines += ["", "## Coverage", "", "| database | planned | read | % |", "| --- | ---: | ---: | ---: |"]
        lines += [f"| {_cell(g['name'])} | {g['planned']} | {g['read']} | {g['pct']} |" for g in cov["databases"]]
        partial = [r for r in cov["largest"] if r["css"] != "READ"]
        if partial:
            lines += ["", "Largest relations not fully read:",
                      *[f"- {_md(r['name'])} ({_md(r['database'])}, {r['size']}): {r['status']}, {r['pct']}"
                        for r in partial]]
    if view["priority"]:
        lines += ["", f"Priority order {view['priority']['line']}",
                  *[f"- {_md(g['pattern'])}: {g['units']} units, {g['finished_text']}"
                    for g in view["priority"]["groups"]]]
    warm = [(label, value) for label, value in view["warmup"]["rows"] if label.startswith(("time to", "projected"))]
    if warm:
        lines += ["", *[f"- {label}: {value}" for label, value in warm]]
    census = view["census"]
    if census:
        lines += ["", "## Volume census", "", census["line"]]
        if census["rows"]:
            lines += ["", "Not read on the volume:",
                      *[f"- {_md(r['name'])} ({_md(r['database'])}, {_md(r['kind'])}, {r['size']}): {_md(r['reason'])}"
                        for r in census["rows"]]]
            if census["more"]:
                lines.append(f"- ... and {census['more']} more ({census['more_size']}): {census['where']}")
        if census["dropped"]:
            lines += ["", "Dropped while the run ran:", *[f"- {_md(d)}" for d in census["dropped"]]]
            if census["dropped_more"]:
                lines.append(f"- ... and {census['dropped_more']} more")
        if census["truncated"]:
            lines += ["", "Truncated or rebuilt while the run ran (no longer on the volume, not counted as read):",
                      *[f"- {_md(t)}" for t in census["truncated"]]]
            if census["truncated_more"]:
                lines.append(f"- ... and {census['truncated_more']} more (every segment: segments.jsonl)")
    if view["unread"]["rows"]:
        lines += ["", "## Units not read", *[f"- {_md(u['unit_id'])} ({u['status']}, {u['read']}): {_md(u['cause'])}"
                                             for u in view["unread"]["rows"]]]
    return lines


def _preflight_lines(view: View) -> list[str]:
    """The Preflight state's report: its headline, then one line a check, status first."""
    pre = view["preflight"]
    if not pre:
        return []
    return ["", "## Preflight", "", _md(pre["line"]),
            *([""] if pre["rows"] else []),
            *[f"- {r['status']} {_md(r['kind'] + ': ' + r['name'])}: {_md(r['detail'])}" for r in pre["rows"]]]


def summary_markdown(findings: Readable, *, findings_uri: str | None = None,
                     report_uri: str | None = None) -> str:
    findings = findings_of(findings)
    view = build_view(findings)
    verdict, warmup, bench = view["verdict"], dict(view["warmup"]["rows"]), view["bench"]
    name = verdict["name"] if verdict["name"] in VERDICTS else _md(verdict["name"])
    lines = [
        f"# Cutover Prep: {name} — {_md(view['target'])}",
        "",
        f"- Run {_md(view['run_id'])} ({view['engine']}), status {view['status']}, finished {view['finished']}",
        f"- Warm-up: units {warmup['units done / total']}, {warmup['units failed']} failed; "
        f"read / planned {warmup['read / planned']}; coverage {warmup['coverage']}; "
        f"read amplification {warmup['read amplification (blocks read / planned)']}",
        *([f"- {view['rates']}"] if view["rates"] else []),
        *([f"- {_md(view['storage_emulation'])}"] if view["storage_emulation"] else []),
        *([f"- {view['estimate']}"] if view["estimate"] else []),
        *([f"- {view['eta']}"] if view["eta"] else []),
        *([f"- {_md(view['hot_set'])}"] if view["hot_set"] else []),
        *([f"- Live view: <{findings.dashboard}> (CloudWatch dashboard: choose run {_md(view['run_id'])})"]
          if is_dashboard_url(findings.dashboard) else []),
        f"- {view['storage_init']['line']}",
        *[f"- {note}" for note in view["storage_init"]["notes"]],
        *[f"- {f['label']}: {f['value']} ({_md(f['source'])})" for f in view["figures"] if f["label"] != "coverage"],
        *[f"- {label}: {_md(value)}" for label, value in view["safety"]],
    ]
    if verdict["failing"]:
        lines += ["", "## Why not ready", *[f"- {_md(r['message'])}" for r in verdict["failing"]]]
    if verdict["passing"]:
        lines += ["", "## Checks passed", *[f"- {_md(r['message'])}" + (f" — **{r['exception']}**" if r[
            "exception"] else "") for r in verdict["passing"]]]
    lines += _preflight_lines(view)
    lines += _coverage_lines(view)
    lines += volume_lines(findings)  # RDS additional storage volumes
    if verdict["not_judged"]:
        lines += ["", "## Not judged", *[f"- {_md(r['message'])}" for r in verdict["not_judged"]]]
    if bench["status"] not in ("NOT_RUN", "DISABLED"):
        lines += ["", f"## Benchmark ({bench['status']})"]
        probes = [r for r in bench["probe_rows"] if r["label"] in PROBE_FIGURES]
        if probes:
            lines += ["", "| probe | cold | warm | cold / warm |", "| --- | ---: | ---: | ---: |"]
            lines += [f"| {r['label']} | {r['cold']} | {r['warm']} | {r['ratio'] or DASH} |" for r in probes]
            lines += ["", f"- {_md(bench['probe_timing'])}"] if bench["probe_timing"] else []
        rows = [p for p in bench["points"] if p["ok"]]
        if rows:
            lines += ["", "| point | IOPS | MiB/s | KiB/IO | bound |", "| --- | ---: | ---: | ---: | --- |"]
            lines += [f"| {_cell(p['id'])} | {p['iops']} | {p['mib_s']} | {p['kb']} | {p['bound']} |" for p in rows]
        failed = [p for p in bench["points"] if not p["ok"]]
        if failed:
            lines += ["", *[f"- point {_md(p['id'])} {p['status']}: {_md('; '.join(p['detail']))}" for p in failed]]
        if bench["conclusions"]:
            lines += ["", *[f"- {_md(c)}" for c in bench["conclusions"]]]
    if view["local"]:  # the local run's bucket is moto's: its files are in the run's folder, not in S3
        report_uri = "report.html" if report_uri else None
        findings_uri = "findings.json" if findings_uri else None
    links = ([f"- Report (charts): {_md(report_uri)}"] if report_uri else []) + \
        ([f"- Evidence: {_md(findings_uri)}"] if findings_uri else [])
    if links:
        lines += ["", *links]
    return "\n".join(lines) + "\n"
