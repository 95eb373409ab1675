"""dal.records.findings: findings.json as Finalize writes it reads into ``Findings`` and is written back the same.

The documents in ``findings_docs/`` are findings.json of real runs (the integration workflow tests: PostgreSQL
READY, a unit that failed, RDS additional storage volumes, a failed end census; a local MySQL run with its census and
emulated volume), their lists cut to three entries to keep them small, and one written before issue 32 §8 (no
``segments_evidence``, ``truncated_segments``, ``segment_counts``, ``read_rate.mib_per_s_database``): a report of an
older run still reads it.
"""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from cutover_prep.dal.records.base import NewerRecord
from cutover_prep.dal.records.findings import Findings

DOCS = Path(__file__).parent / "findings_docs"
TODAY = sorted(p.name for p in DOCS.glob("*.json") if not p.name.startswith("before-"))
BEFORE_32 = "before-issue-32-postgres.json"


def _doc(name: str) -> dict:
    return json.loads((DOCS / name).read_text())


def _written(doc: dict) -> str:
    """What ``Store.put_json`` writes of a document."""
    return json.dumps(doc, indent=1, default=str)


@pytest.mark.parametrize("name", [*TODAY, BEFORE_32])
def test_every_findings_document_reads_and_is_written_back_byte_for_byte(name):
    doc = _doc(name)
    findings = Findings.read(doc)
    assert findings.schema_version == 1 == doc["schema_version"]
    assert _written(findings.stored()) == _written(doc)  # the same fields, order, nulls and number types


def test_the_samples_cover_the_sections_that_come_and_go():
    docs = {name: Findings.read(_doc(name)) for name in TODAY}
    assert {f.verdict.verdict for f in docs.values()} == {"READY", "NOT_READY"}
    assert any(f.volumes and f.coverage.by_volume for f in docs.values())
    assert any(f.storage_emulation for f in docs.values())
    assert any(f.failed_units for f in docs.values())
    assert any(f.census.taken and not f.census.end_census and f.census.end_census_failure for f in docs.values())


def test_a_document_of_before_issue_32_reads_with_the_newer_fields_at_their_defaults():
    doc = _doc(BEFORE_32)
    assert "segments_evidence" not in doc and "mib_per_s_database" not in doc["read_rate"]
    findings = Findings.read(doc)
    assert findings.segments_evidence is None and findings.truncated_segments is None
    assert findings.segment_counts is None
    assert findings.read_rate.mib_per_s_database is None and findings.read_rate.mib_per_s_wall is not None
    assert findings.bytes.read == doc["bytes"]["read"]
    assert "segments_evidence" not in findings.stored()  # not written back as null


def test_a_misspelt_field_in_a_known_section_fails():
    doc = _doc(TODAY[0])
    doc["timings"]["warmup_wall_secs"] = 1.0
    with pytest.raises(ValidationError, match="warmup_wall_secs"):
        Findings.read(doc)


def test_a_newer_writers_top_level_field_is_kept():
    doc = {**_doc(TODAY[0]), "from_the_future": {"a": 1}}
    assert Findings.read(doc).stored()["from_the_future"] == {"a": 1}


def test_a_newer_schema_version_is_refused():
    with pytest.raises(NewerRecord):
        Findings.read({**_doc(TODAY[0]), "schema_version": 2})


def test_an_int_stays_an_int_and_a_float_a_float():
    doc = _doc(TODAY[0])
    doc["timings"]["unit_busy_seconds"] = 0  # a run whose units recorded no seconds: sum() of nothing
    doc["coverage_pct"] = 100.0
    stored = Findings.read(doc).stored()
    assert isinstance(stored["timings"]["unit_busy_seconds"], int) and isinstance(stored["coverage_pct"], float)
