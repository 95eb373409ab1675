"""``report.html``: the findings of a run as one self-contained page (pure).

The first screen holds the verdict, the figures that decide it, the warm-up chart and what to do
next (``first_screen``); below it every other part folds (``<details>``, no script): the checks, the
figures with their sources, the instance and its limits, the warm-up, the benchmark's charts (pygal
SVG inline, see ``charts``), the points table, the conclusions and where the evidence is. No script,
no external resource: it opens from a ticket attachment or an air-gapped laptop. Every text goes
through jinja2 with autoescape on: the names in it come from the customer's database. Any section of
``findings`` may be missing or None; the page then says what was not measured and why, and never raises.
The figures come from ``view.build_view``.
"""

from __future__ import annotations

import json
import logging
from functools import cache

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import escape

from cutover_prep.dal.records.findings import Findings
from cutover_prep.models.verdict_reasons import what_to_do
from cutover_prep.report.first_screen import first_screen
from cutover_prep.report.reading import Readable, findings_of
from cutover_prep.report.view import build_view, fmt_time
from cutover_prep.report.volumes import with_volumes

logger = logging.getLogger(__name__)


@cache
def _environment() -> Environment:
    env = Environment(loader=PackageLoader("cutover_prep.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["time"] = fmt_time
    env.filters["fix"] = what_to_do  # a verdict reason's fix, from the one table (cutover_prep.models.verdict_reasons)
    return env


def render_report(findings: Readable) -> str:
    """The report as one HTML page; on input it cannot lay out, a minimal page with the error and the raw findings."""
    try:
        record = findings_of(findings)
        view = build_view(record)
        page = _environment().get_template("report.html.j2").render(**view, first=first_screen(view))
        return with_volumes(page, record)  # RDS additional storage volumes: a block of its own (report.volumes)
    except Exception as exc:  # the report must never cost the run its evidence
        logger.exception("report.html could not be laid out")
        stored = findings.stored() if isinstance(findings, Findings) else findings if isinstance(findings, dict) else {}
        said = stored.get("verdict")  # the findings as recorded, whatever their shape: the record did not read them
        verdict = said.get("verdict", "NO VERDICT") if isinstance(said, dict) else "NO VERDICT"
        raw = json.dumps(stored, indent=1, default=str)
        return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Cutover Prep: {escape(verdict)}"
                f"</title></head><body><h1>{escape(verdict)}</h1><p>The report could not be laid out "
                f"({escape(type(exc).__name__)}: {escape(exc)}); the findings follow as recorded.</p>"
                f"<pre>{escape(raw)}</pre></body></html>")
