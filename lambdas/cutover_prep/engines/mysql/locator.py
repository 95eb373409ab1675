"""What a MySQL or MariaDB segment's locator says (``engines.mysql.discovery`` writes it): the read method and
the names and sizes its statements take, typed. The plan stores the locator as JSON; the engine reads it back
through ``of``."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class MysqlLocator:
    """One segment's locator. ``read``: ``pk_walk`` (the clustered index walked in key order, ``key_index`` by
    ``key_columns``; ``probe``: its integer key column, ``{"column": name}``, for single-row lookups),
    ``full_scan`` (no key to walk: every column of ``columns``, ignoring ``indexes``), ``index_scan`` (a secondary
    ``index`` read covering by ``index_columns``, or as a range over ``range_column``), ``not_readable`` (``why``
    says what it is). A field the locator does not hold is its default."""

    read: str = ""
    schema: str = ""
    table: str = ""
    engine: str | None = None
    partition: str | None = None
    key_index: str | None = None
    key_columns: tuple[str, ...] = ()
    offpage: tuple[str, ...] = ()
    rows: int = 0
    pages: int = 0
    probe: dict[str, str] | None = None
    indexes: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    index: str | None = None
    index_columns: tuple[str, ...] = ()
    range_column: str | None = None
    why: str | None = None

    @classmethod
    def of(cls, locator: dict[str, Any]) -> MysqlLocator:
        """The locator a segment or a range carries (its JSON), typed."""
        return cls(**{k: v for k, v in locator.items() if k in FIELDS})


FIELDS = frozenset(f.name for f in fields(MysqlLocator))
