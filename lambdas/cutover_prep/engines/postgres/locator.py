"""What a PostgreSQL segment's locator says (``PostgresEngine.discover`` writes it; the warm-up's planning adds
``cache`` to a hot-set range): the relation fork to read, typed. The plan stores the locator as JSON; the
engine reads it back through ``of``."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class PgLocator:
    """One relation fork: its ``database``, ``oid``, ``fork`` (``main``, ``fsm``, ``vm``, ``init``), ``relkind``
    and names; ``cache``: a hot-set range, prewarmed into shared buffers. A field the locator does not hold is
    its default."""

    database: str | None = None
    oid: int | None = None
    fork: str | None = None
    relkind: str | None = None
    schema: str | None = None
    relname: str | None = None
    cache: bool = False

    @classmethod
    def of(cls, locator: dict[str, Any]) -> PgLocator:
        """The locator a segment or a range carries (its JSON), typed."""
        return cls(**{k: v for k, v in locator.items() if k in FIELDS})


FIELDS = frozenset(f.name for f in fields(PgLocator))
