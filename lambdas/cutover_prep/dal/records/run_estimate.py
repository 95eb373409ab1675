"""The run item's ``estimate`` (``RunEstimate``): ``estimate.compute.Estimate`` as Discover stored it
(``estimate.run.run_estimate``), read where the item is read.

The fields are the estimate's, none required: an estimate of an older version may lack some, and reads. A field a
newer estimate adds is kept (``extra="allow"``: its ``cost`` too, which no reader of the item reads), so the item
written back holds what it was read with (the run item dumps ``exclude_unset``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Number = int | float  # as stored: an int stays an int, a float a float


class RecordedDatabaseBytes(BaseModel):
    """``counted.by_database``'s row (``estimate.compute.DatabaseBytes``)."""

    model_config = ConfigDict(extra="allow")

    database: str | None = None
    bytes: int | None = None


class RecordedCounted(BaseModel):
    """The estimate's ``counted`` (``estimate.compute.Counted``): what its bytes are, what the census names that
    they are not."""

    model_config = ConfigDict(extra="allow")

    user_relations: int | None = None
    catalogues: int | None = None
    large_objects: int | None = None
    by_database: list[RecordedDatabaseBytes] | None = None
    excluded_by_input: int | None = None
    excluded_databases: list[str] | None = None
    excluded_database_count: int | None = None
    not_readable: int | None = None


class RunEstimate(BaseModel):
    """The run item's ``estimate`` (``estimate.compute.Estimate``'s fields, as stored)."""

    model_config = ConfigDict(extra="allow")

    engine: str | None = None
    bytes_to_read: Number | None = None
    units: int | None = None
    segments: int | None = None
    ranges: int | None = None
    counted: RecordedCounted | None = None
    concurrency: int | None = None
    assumed_mib_per_s: Number | None = None
    source: str | None = None
    source_detail: str | None = None
    range_seconds: Number | None = None
    range_detail: str | None = None
    seconds_bytes: Number | None = None
    seconds_ranges: Number | None = None
    estimated_seconds: Number | None = None
    hint: str | None = None
    advice: str | None = None
    cost_usd: Number | None = None
