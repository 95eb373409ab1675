"""A work unit's progress: the unit item (``pk=RUN#<run_id>``, ``sk=UNIT#<unit_id>``), as ``dal.store.Store`` keeps it.

``Store.commit_progress`` writes it chunk by chunk (the cursor, the counters, the chunks' ``[finished_at, bytes,
seconds]``, what was found gone), ``Store.fail_unit`` records a failure; the warm-up (``warmup.unit``,
``warmup.slots``, ``warmup.end_census``), the findings (coverage, ETA, timeline, volumes, storage initialization)
and ``local``'s progress read it through ``Store.units`` / ``Store.get_unit``.

The item is written by DynamoDB update expressions, field by field, so no ``schema_version`` is stored on it: every
unit item is version 1 (``Record.read`` reads a mapping without one as version 1). A unit not in the table yet is
``UnitProgress()``: PENDING, nothing read. Numbers come back from DynamoDB as ``int`` where whole (``Store``'s
``_plain``), so the seconds are ``int | float``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from cutover_prep.dal.records.base import Record
from cutover_prep.engines.base import GONE_TRUNCATED

UNIT_PREFIX = "UNIT#"  # the unit item's sort key prefix (dal.store)


class Cursor(BaseModel):
    """Where a unit's next chunk starts: range index, extent index within it, block offset within that."""

    model_config = ConfigDict(extra="allow")

    range: int = 0
    extent: int = 0
    offset: int = 0


class Gone(BaseModel):
    """One chunk's planned blocks that no longer existed (``ReadResult.gone``), stored as
    ``[segment, range index, blocks, bytes, reason]`` (the reason absent on a unit of before it was kept)."""

    segment: str
    range_index: int
    blocks: int
    bytes: int
    reason: str = GONE_TRUNCATED

    @classmethod
    def of(cls, entry: list[Any]) -> Gone:
        return cls(segment=str(entry[0]), range_index=int(entry[1]), blocks=int(entry[2]), bytes=int(entry[3]),
                   **({"reason": str(entry[4])} if len(entry) > 4 else {}))


class UnitProgress(Record):
    """The unit item. Unknown fields are kept (a newer writer's)."""

    pk: str | None = None
    sk: str | None = None
    status: str = "PENDING"  # models.status.UnitStatus
    seq: int = 0
    cursor: Cursor | None = None
    method: str | None = None
    updated_at: str | None = None
    bytes_planned: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    chunks: list[tuple[str, int | float, int | float]] = []  # [finished_at, bytes, seconds], the first 1,000
    gone: list[list[Any]] = []  # [segment, range index, blocks, bytes, reason]: see ``Gone``
    blocks_read: int = 0
    bytes_read: int = 0
    seconds: int | float = 0
    retries: int = 0
    gone_blocks: int = 0
    gone_bytes: int = 0
    reconnects: int = 0
    longest_outage_seconds: int | float | None = None
    error: str | None = None
    cause: str | None = None

    def stored(self) -> dict[str, Any]:
        """The item as stored (no ``schema_version``: see the module)."""
        return self.model_dump(mode="json", exclude_unset=True, exclude={"schema_version"})

    @property
    def unit_id(self) -> str:
        return str(self.sk or "").removeprefix(UNIT_PREFIX)

    def gone_entries(self) -> list[Gone]:
        return [Gone.of(g) for g in self.gone]

    @classmethod
    def of(cls, item: UnitProgress | Mapping[str, Any] | None) -> Self:
        """The record of a unit item as stored (a mapping), or the record itself; ``None``: a unit not started."""
        if isinstance(item, cls):
            return item
        return cls.read(item or {})


def progress_by_unit(items: Mapping[str, UnitProgress | Mapping[str, Any]] | None) -> dict[str, UnitProgress]:
    """Unit id -> ``UnitProgress`` of unit items given as records or as stored mappings."""
    return {str(uid): UnitProgress.of(item) for uid, item in (items or {}).items()}


def progress_list(items: Iterable[UnitProgress | Mapping[str, Any]]) -> list[UnitProgress]:
    return [UnitProgress.of(item) for item in items]
