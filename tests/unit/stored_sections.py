"""The findings' section builders, each answering as findings.json holds the section (``.stored()`` of the records
``dal.records.findings`` they return): the tests written against the documents read them as before."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from pydantic import BaseModel

from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.records.units import Cursor
from cutover_prep.findings import coverage, document, storage_init, timeline, volumes


def as_stored(value: Any) -> Any:
    """A record as stored, and so every record in a list, tuple or dict."""
    if isinstance(value, BaseModel):
        return value.stored() if hasattr(value, "stored") else value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, list):
        return [as_stored(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_stored(v) for v in value)
    if isinstance(value, dict):
        return {k: as_stored(v) for k, v in value.items()}
    return value


def _stored(fn: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return as_stored(fn(*args, **kwargs))
    return call


warmup_section = _stored(document.warmup_section)
preflight_section = _stored(document.preflight_section)
truncated_section = _stored(document.truncated_section)
warmup_timeline = _stored(timeline.warmup_timeline)
coverage_series = _stored(timeline.coverage_series)
storage_initialization = _stored(storage_init.storage_initialization)
volumes_section = _stored(volumes.volumes_section)
hot_set_section = _stored(coverage.hot_set_section)
priority_section = _stored(coverage.priority_section)
time_to_warm = _stored(coverage.time_to_warm)
unread_units = _stored(coverage.unread_units)


def range_volume_bytes(rng: dict[str, Any], index: int, status: str, cursor: dict[str, Any] | None) -> Any:
    return volumes.range_volume_bytes(rng, index, status, Cursor.model_validate(cursor) if cursor else None)


def add_volume_findings(findings: dict[str, Any], *args: Any) -> None:
    """``volumes.add_volume_findings`` on a findings document (a dict, changed in place)."""
    record = Findings.read(findings)
    volumes.add_volume_findings(record, *args)
    versioned = "schema_version" in findings
    findings.clear()
    findings.update(record.stored())
    if not versioned:  # an excerpt of a document: as it came
        findings.pop("schema_version")
