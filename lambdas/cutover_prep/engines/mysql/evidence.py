"""What a MySQL or MariaDB read says of itself (``MySQLEngine.read_range``): the first row of the EXPLAIN of its
statement, what it counted, and the server's counters before and after it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple


class Explained(NamedTuple):
    """The first row of an EXPLAIN: the access ``type``, the index chosen (``key``) and ``Extra``; None where the
    server gave no row or no such column."""

    type: str | None = None
    key: str | None = None
    extra: str | None = None

    @classmethod
    def of(cls, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> Explained:
        """From the EXPLAIN's column names (lower case) and rows."""
        if not rows:
            return cls()
        return cls(**{name: value for name, value in zip(names, rows[0], strict=False) if name in cls._fields})


@dataclass
class Tally:
    """What one read counted: its rows, the bytes of the columns it read, the rows walked to find a chunk's
    first key, and whether an earlier chunk had read to the key's end."""

    rows: int = 0
    bytes_read_from_columns: int = 0
    repositioned_rows: int = 0
    end_reached: bool = False

    def to_json(self) -> dict[str, int | bool]:
        """As the read's details say it (``end_reached`` only when it was)."""
        out: dict[str, int | bool] = {"rows": self.rows, "bytes_read_from_columns": self.bytes_read_from_columns,
                                      "repositioned_rows": self.repositioned_rows}
        return {**out, "end_reached": True} if self.end_reached else out


def status(cur: Any, statement: str) -> dict[str, int]:
    """The server's counters a ``SHOW ... STATUS`` statement (or its performance_schema query) lists, by name in
    lower case."""
    cur.execute(statement)
    return {str(name).lower(): int(value) for name, value in cur.fetchall() if str(value).lstrip("-").isdigit()}


def delta(before: dict[str, int], after: dict[str, int]) -> Counter[str]:
    """What each counter of ``after`` moved since ``before``; a counter not listed moved 0."""
    return Counter({k: after[k] - before.get(k, 0) for k in after})
