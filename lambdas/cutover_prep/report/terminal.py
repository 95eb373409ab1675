"""The findings as terminal lines (``cutover-prep local``), from the same view model as the page.

Each line goes through ``escape.for_terminal``: a name from the database with a line feed or an
escape sequence in it is shown inside its own line, its controls written out, never sent.
"""

from __future__ import annotations

from typing import Any

from cutover_prep.escape import for_terminal
from cutover_prep.report.view import DASH, build_view

PROBE_LINE = ("reads per second", "latency p50", "latency p99")


def _coverage_lines(view: dict[str, Any]) -> list[str]:
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
        if len(census["rows"]) > 10:
            lines.append(f"    ... and {len(census['rows']) - 10 + census['more']} more objects not read: "
                         "see findings.json (census.unread)")
        lines += [f"    dropped while the run ran: {d}" for d in census["dropped"][:10]]
    rows = view["unread"]["rows"]
    lines += [f"  unit {u['unit_id']} not read ({u['status']}, {u['read']}): {u['cause']}" for u in rows[:10]]
    if len(rows) > 10:
        lines.append(f"  ... and {len(rows) - 10 + view['unread']['more']} more units not read: see findings.json")
    lines += [f"  {label}: {value}" for label, value in view["warmup"]["rows"]
              if label.startswith(("time to", "projected"))]
    return lines


def terminal_lines(findings: dict[str, Any]) -> list[str]:
    """The benchmark and the verdict, indented under the run's own line."""
    view = build_view(findings if isinstance(findings, dict) else {})
    bench, verdict = view["bench"], view["verdict"]
    lines = _coverage_lines(view)
    lines.append(f"  benchmark: {bench['status']}")
    rows = {r["label"]: r for r in bench["probe_rows"]}
    if all(label in rows for label in PROBE_LINE):
        lines.append("    probes cold -> warm: " + "; ".join(
            f"{label} {rows[label]['cold']} -> {rows[label]['warm']}" for label in PROBE_LINE))
    width = max([22] + [len(p["id"]) for p in bench["points"]])  # ids whole, never cut short
    for p in bench["points"]:
        if p["ok"]:
            lines.append(f"    {p['id']:<{width}} {p['iops']:>10} IO/s {p['mib_s']:>9} MiB/s {p['kb']:>7} KiB/IO  "
                         f"{p['bound']:<10} p99 {p['p99'] + ' ms' if p['p99'] != DASH else DASH}")
        else:
            lines.append(f"    {p['id']:<{width}} {p['status']}: {'; '.join(p['detail'])}")
    lines += [f"    - {c}" for c in bench["cached"]]
    lines += [f"    - {sentence}" for sentence in bench["conclusions"]]
    if view["storage_emulation"]:
        lines.append(f"  {view['storage_emulation']}")
    if view.get("estimate"):
        lines.append(f"  {view['estimate']}")
    lines.append(f"  {view['storage_init']['line']}")
    lines += [f"    - {note}" for note in view["storage_init"]["notes"]]
    lines.append(f"  verdict: {verdict['name']}")
    lines += [f"    - {r.get('message')}" for r in verdict["failing"]]
    lines += [f"    - {r.get('code')} passed by an exception of its rule: {r['exception']}"
              for r in verdict["passing"] if r.get("exception")]
    lines += [f"  {label}: {value}" for label, value in view["safety"]]
    return [for_terminal(line) for line in lines]
