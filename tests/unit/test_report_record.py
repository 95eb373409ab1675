"""The report reads the typed findings record (issue 34): the same renderings as before for real findings, a
``Findings`` record renders as its stored document does, an older run's findings still render, a newer schema is
refused by name, and a value the record does not read is left out (and logged) rather than costing the page.

``report_expected/`` holds summary.md and the terminal lines of three real findings.json (``findings_docs/``: a run
of before issue 32 §8, a local MySQL run with its census and emulated volume, a workflow run with a failed unit) as
the report rendered them before it read the record; they must not change.
"""

import json
import logging
from pathlib import Path

import pytest

from cutover_prep.dal.records.findings import Findings
from cutover_prep.report import render_report, summary_markdown
from cutover_prep.report.terminal import terminal_lines

DOCS = Path(__file__).parent / "findings_docs"
EXPECTED = Path(__file__).parent / "report_expected"
URIS = {"findings_uri": "s3://bucket/runs/r/findings.json", "report_uri": "s3://bucket/runs/r/report.html"}


def _doc(name: str) -> dict:
    return json.loads((DOCS / f"{name}.json").read_text())


@pytest.mark.parametrize("name", sorted(p.stem for p in EXPECTED.glob("*.md")))
def test_real_findings_render_as_before_the_record(name: str) -> None:
    doc = _doc(name)
    assert summary_markdown(doc, **URIS) == (EXPECTED / f"{name}.md").read_text()
    assert "\n".join(terminal_lines(doc)) + "\n" == (EXPECTED / f"{name}.txt").read_text()


@pytest.mark.parametrize("name", ["before-issue-32-postgres", "local-mysql-census", "workflow-additional-volumes"])
def test_a_findings_record_renders_as_its_stored_document(name: str) -> None:
    doc = _doc(name)
    record = Findings.read(doc)
    assert summary_markdown(record, **URIS) == summary_markdown(doc, **URIS)
    assert terminal_lines(record) == terminal_lines(doc)
    page = render_report(record)
    assert "could not be laid out" not in page and f"{doc['run_id']}" in page
    assert page.count("<figure") == render_report(doc).count("<figure")


def test_findings_of_a_newer_schema_are_refused_by_name() -> None:
    doc = {**_doc("workflow-postgres-ready"), "schema_version": Findings.SCHEMA_VERSION + 1}
    page = render_report(doc)
    assert "could not be laid out (NewerRecord" in page and "upgrade cutover-prep to read it" in page


def test_a_value_the_record_does_not_read_is_left_out_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    doc = _doc("local-mysql-census")
    doc["benchmark"]["points"][0]["iops"] = "fast"
    doc["failed_units"] = [{"unit_id": 7}]
    with caplog.at_level(logging.WARNING, logger="cutover_prep.report.reading"):
        page = render_report(doc)
    assert "could not be laid out" not in page and ">fast<" not in page
    assert "benchmark.points.0.iops" in caplog.text and "failed_units.0" in caplog.text
