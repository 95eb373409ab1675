"""The report's block for an instance with RDS additional storage volumes (pure): per volume its storage,
RDS's initialization progress, the warm-up's coverage and measured rate against the volume's own
ceiling, and one chart of every volume's RDS initialization progress (``storage_chart.volumes_init_chart``).

A separate block of both renderings: ``markdown_lines`` for ``summary.md``, ``html_block`` for
``report.html`` (inserted by ``html.render_report``). Without ``findings.volumes`` both are empty.
Volume names come from RDS's API and our own words; they are escaped all the same.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from cutover_prep.escape import for_markdown
from cutover_prep.report.storage_chart import volumes_init_chart
from cutover_prep.report.formatting import DASH, fmt

MIB = 2**20
SECTION_ID = "volumes"


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _progress(findings: dict[str, Any]) -> dict[str, str]:
    """Per volume, RDS's last word on its storage operation."""
    section = _d(findings.get("storage_initialization"))
    out = {}
    entries = [{"volume": "primary", **section}, *[v for v in section.get("volumes") or [] if isinstance(v, dict)]]
    for v in entries:
        last = _d(v.get("last"))
        if not last:
            text = "not reported"
        elif last.get("status") is not None or last.get("percent") is not None:
            text = f"{last.get('status') or 'operation'}" + (f" {last['percent']} %" if last.get("percent")
                                                             is not None else "")
        else:
            text = "done" if v.get("reported") else "no operation reported"
        out[str(v.get("volume"))] = text
    return out


def rows(findings: dict[str, Any]) -> list[dict[str, str]]:
    """One row of text per volume (primary first)."""
    progress = _progress(findings)
    out = []
    for v in _d(findings.get("volumes")).get("volumes") or []:
        if not isinstance(v, dict):
            continue
        storage = " ".join(p for p in (str(v.get("storage_type") or DASH), fmt(v.get("allocated_gb"), "GiB"),
                                       f"{fmt(v.get('iops'))} IOPS" if v.get("iops") else "",
                                       fmt(v.get("storage_throughput"), "MiB/s") if v.get("storage_throughput")
                                       else "") if p)
        ceiling = fmt(v.get("ceiling_mib_s"), "MiB/s")
        if v.get("ceiling_bound_by"):
            ceiling += f" ({v['ceiling_bound_by']})"
        out.append({"volume": str(v.get("volume")), "storage": storage,
                    "rds": progress.get(str(v.get("volume")), "not reported"),
                    "planned": fmt(v.get("bytes_planned"), "MiB", scale=1 / MIB),
                    "read": fmt(v.get("bytes_read"), "MiB", scale=1 / MIB),
                    "unread": fmt(v.get("bytes_unread"), "MiB", scale=1 / MIB),
                    "pct": fmt(v.get("pct"), "%"), "rate": fmt(v.get("mib_per_s_wall"), "MiB/s"),
                    "ceiling": ceiling, "of_ceiling": fmt(v.get("pct_of_ceiling"), "%"),
                    "note": str(v.get("ceiling_note") or "")})
    return out


COLUMNS = (("volume", "volume"), ("storage", "storage"), ("rds", "RDS initialization"), ("planned", "planned"),
           ("read", "read"), ("unread", "unread"), ("pct", "%"), ("rate", "warm-up MiB/s"),
           ("ceiling", "ceiling"), ("of_ceiling", "% of ceiling"))


FROM_RDS = ("volume", "storage", "rds")  # words RDS's API gave: code spans in Markdown; our figures as they are


def markdown_lines(findings: dict[str, Any]) -> list[str]:
    """``## Storage volumes``: a table, the notes; nothing without additional volumes."""
    table = rows(findings if isinstance(findings, dict) else {})
    if not table:
        return []
    lines = ["", "## Storage volumes", "", "| " + " | ".join(label for _, label in COLUMNS) + " |",
             "| --- | --- | --- |" + " ---: |" * (len(COLUMNS) - 3)]
    lines += ["| " + " | ".join((for_markdown(r[k], cell=True) or DASH) if k in FROM_RDS else r[k] for k, _ in COLUMNS)
              + " |" for r in table]
    notes = [str(n) for n in _d(findings.get("volumes")).get("notes") or []]
    notes += [f"{r['volume']}: {r['note']}" for r in table if r["note"]]
    lines += ["", *[f"- {for_markdown(n) or DASH}" for n in notes]] if notes else []
    return lines


def html_block(findings: dict[str, Any]) -> Markup:
    """``<section id="volumes">``: the table, the notes and the chart; empty without additional volumes."""
    findings = findings if isinstance(findings, dict) else {}
    table = rows(findings)
    if not table:
        return Markup("")
    head = "".join(f"<th>{escape(label)}</th>" for _, label in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{escape(r[k])}</td>" for k, _ in COLUMNS) + "</tr>" for r in table)
    notes = [str(n) for n in _d(findings.get("volumes")).get("notes") or []]
    notes += [f"{r['volume']}: {r['note']}" for r in table if r["note"]]
    chart = volumes_init_chart(findings.get("storage_initialization"))
    figure = (f'<figure class="chart" id="{chart.chart_id}"><figcaption>{escape(chart.caption)}</figcaption>'
              f"{chart.svg}</figure>" if chart.svg else
              f'<figure class="chart absent" id="{chart.chart_id}"><figcaption>{escape(chart.caption)}'
              f'</figcaption><p class="why">not measured: {escape(chart.why)}</p></figure>')
    items = "".join(f"<li>{escape(n)}</li>" for n in notes)
    return Markup(f'<details class="fold" id="fold-{SECTION_ID}"><summary><h2>Storage volumes</h2></summary>\n'
                  f'<section id="{SECTION_ID}">\n'
                  '<div class="scroll"><table id="volumes-table">'
                  f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>\n"
                  + (f'<ul class="sentences">{items}</ul>\n' if items else "") + f"{figure}\n</section>\n</details>\n")


def with_volumes(page: str, findings: dict[str, Any]) -> str:
    """``page`` with the block folded in before the benchmark's fold (or the end of the body)."""
    block = str(html_block(findings))
    if not block:
        return page
    for anchor in ('<details class="fold" id="fold-benchmark">', '<section id="benchmark">', "<footer>", "</body>"):
        if anchor in page:
            return page.replace(anchor, block + anchor, 1)
    return page + block
