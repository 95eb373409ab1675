"""What an Oracle segment's locator says (``engines.oracle.discovery.classify`` writes it, the datafile pass's
``datafiles.datafile_segment`` and ``volumes.map_volumes`` add to it): the read method and the names its
statements take, typed. The plan stores the locator as JSON; the engine reads it back through ``of``."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class OracleLocator:
    """One segment's locator. ``read``: ``rowid_range`` (a heap table segment), ``index``, ``iot_overflow``,
    ``lob``, ``datafile`` (the datafile pass), ``unsupported`` (``why`` says what it is). A field the locator
    does not hold is its default."""

    read: str = ""
    owner: str | None = None
    segment: str | None = None
    partition: str | None = None
    segment_type: str | None = None
    table: str | None = None
    table_owner: str | None = None
    data_object_id: int | None = None
    subpartition: bool = False
    bigfile: bool = False
    whole_index: bool = False
    invisible: bool = False
    overflow: str | None = None
    split: str | None = None  # a slice per call: "key_range" (an IOT's overflow), "table_rowid" (a heap table's LOB)
    whole_pieces: bool = False
    column: str | None = None
    data_type: str | None = None
    table_partition: str | None = None
    table_subpartition: bool = False
    table_segment_type: str | None = None
    why: str | None = None
    file_id: int | None = None
    tablespace: str | None = None
    chunk_bytes: int | None = None
    file_volumes: dict[str, str] = field(default_factory=dict)
    file_volumes_ambiguous: bool = False

    @classmethod
    def of(cls, locator: dict[str, Any]) -> OracleLocator:
        """The locator a segment or a range carries (its JSON), typed."""
        return cls(**{k: v for k, v in locator.items() if k in FIELDS})


FIELDS = frozenset(f.name for f in fields(OracleLocator))
