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
from cutover_prep.report.formatting import DASH, fmt
from cutover_prep.report.parts import ReportFindings
from cutover_prep.report.reading import Readable, findings_of
from cutover_prep.report.storage_chart import volumes_init_chart

MIB = 2**20
SECTION_ID = "volumes"


def _progress(findings: ReportFindings) -> dict[str, str]:
    """Per volume, RDS's last word on its storage operation."""
    section = findings.storage_initialization
    if section is None:
        return {"primary": "not reported"}
    out = {}
    entries: list[tuple[str, Any, bool]] = [("primary", section.last, section.reported)]
    entries += [(v.volume, v.last, v.reported) for v in section.volumes]
    for volume, last, reported in entries:
        if last is None or not last.model_fields_set:
            text = "not reported"
        elif last.status is not None or last.percent is not None:
            text = f"{last.status or 'operation'}" + (f" {last.percent} %" if last.percent is not None else "")
        else:
            text = "done" if reported else "no operation reported"
        out[str(volume)] = text
    return out


def rows(findings: Readable) -> list[dict[str, str]]:
    """One row of text per volume (primary first)."""
    findings = findings_of(findings)
    progress = _progress(findings)
    out = []
    for v in findings.volumes.volumes if findings.volumes else []:
        storage = " ".join(p for p in (str(v.storage_type or DASH), fmt(v.allocated_gb, "GiB"),
                                       f"{fmt(v.iops)} IOPS" if v.iops else "",
                                       fmt(v.storage_throughput, "MiB/s") if v.storage_throughput else "") if p)
        ceiling = fmt(v.ceiling_mib_s, "MiB/s")
        if v.ceiling_bound_by:
            ceiling += f" ({v.ceiling_bound_by})"
        out.append({"volume": str(v.volume), "storage": storage, "rds": progress.get(str(v.volume), "not reported"),
                    "planned": fmt(v.bytes_planned, "MiB", scale=1 / MIB),
                    "read": fmt(v.bytes_read, "MiB", scale=1 / MIB),
                    "unread": fmt(v.bytes_unread, "MiB", scale=1 / MIB),
                    "pct": fmt(v.pct, "%"), "rate": fmt(v.mib_per_s_wall, "MiB/s"),
                    "ceiling": ceiling, "of_ceiling": fmt(v.pct_of_ceiling, "%"), "note": str(v.ceiling_note or "")})
    return out


COLUMNS = (("volume", "volume"), ("storage", "storage"), ("rds", "RDS initialization"), ("planned", "planned"),
           ("read", "read"), ("unread", "unread"), ("pct", "%"), ("rate", "warm-up MiB/s"),
           ("ceiling", "ceiling"), ("of_ceiling", "% of ceiling"))


FROM_RDS = ("volume", "storage", "rds")  # words RDS's API gave: code spans in Markdown; our figures as they are


def markdown_lines(findings: Readable) -> list[str]:
    """``## Storage volumes``: a table, the notes; nothing without additional volumes."""
    findings = findings_of(findings)
    table = rows(findings)
    if not table:
        return []
    lines = ["", "## Storage volumes", "", "| " + " | ".join(label for _, label in COLUMNS) + " |",
             "| --- | --- | --- |" + " ---: |" * (len(COLUMNS) - 3)]
    lines += ["| " + " | ".join((for_markdown(r[k], cell=True) or DASH) if k in FROM_RDS else r[k] for k, _ in COLUMNS)
              + " |" for r in table]
    notes = [str(n) for n in (findings.volumes.notes if findings.volumes else [])]
    notes += [f"{r['volume']}: {r['note']}" for r in table if r["note"]]
    lines += ["", *[f"- {for_markdown(n) or DASH}" for n in notes]] if notes else []
    return lines


def html_block(findings: Readable) -> Markup:
    """``<section id="volumes">``: the table, the notes and the chart; empty without additional volumes."""
    findings = findings_of(findings)
    table = rows(findings)
    if not table:
        return Markup("")
    head = "".join(f"<th>{escape(label)}</th>" for _, label in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{escape(r[k])}</td>" for k, _ in COLUMNS) + "</tr>" for r in table)
    notes = [str(n) for n in (findings.volumes.notes if findings.volumes else [])]
    notes += [f"{r['volume']}: {r['note']}" for r in table if r["note"]]
    chart = volumes_init_chart(findings.storage_initialization)
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


def with_volumes(page: str, findings: Readable) -> str:
    """``page`` with the block folded in before the benchmark's fold (or the end of the body)."""
    block = str(html_block(findings))
    if not block:
        return page
    for anchor in ('<details class="fold" id="fold-benchmark">', '<section id="benchmark">', "<footer>", "</body>"):
        if anchor in page:
            return page.replace(anchor, block + anchor, 1)
    return page + block
