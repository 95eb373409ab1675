"""A fake python-oracledb connection for the Oracle findings of issue 22 (no tests here).

It answers like the real driver where that matters: ``fetchone()`` is ``None`` when the query
returned no row (python-oracledb, "Cursor.fetchone": "None is returned when no more rows are
available"), every statement and its binds are recorded, and the session's V$MYSTAT counters
move only as much as the test says the server read (``reads``: blocks per statement marker)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import oracledb

from tests.unit.oracle_cursor import FakeCursor

MYSTAT_NAMES = ("physical reads", "physical reads direct", "physical reads cache", "session logical reads")


def ora_error(code: int, text: str = "boom") -> oracledb.DatabaseError:
    err = type("E", (), {"code": code, "full_code": f"ORA-{code:05d}", "message": f"ORA-{code:05d}: {text}"})()
    return oracledb.DatabaseError(err)


class Cursor(FakeCursor):
    def execute(self, sql: str, parameters: Any = None, **binds: Any) -> Cursor:
        db = self.db
        db.executed.append((sql, binds or parameters))
        for marker, exc in db.fail.items():
            if marker in sql:
                raise exc
        if "v$mystat" in sql:
            self._rows = [(name, value) for name, value in db.mystat.items()]
            return self
        if sql.startswith("SELECT statistic_name, SUM(value) FROM v$segment_statistics"):  # the segment read
            self._rows = [(name, value) for name, value in db.segstat.items()]
            return self
        for marker, blocks in db.reads.items():  # what the server read for this statement
            if marker in sql:
                db.read(blocks)
        markers = [m for m in db.answers if m in sql]  # the most specific marker answers
        rows: Any = db.answers[max(markers, key=len)] if markers else []
        self._rows = list(rows(sql, binds) if callable(rows) else rows)
        return self

    def var(self, _type: Any) -> Any:  # an out bind nothing sets (DBMS_SPACE.UNUSED_SPACE here: no mark known)
        return type("Var", (), {"getvalue": lambda self, pos=0: None, "setvalue": lambda self, pos, v: None})()


class OracleFake:
    def __init__(self, answers: dict[str, Any] | None = None, *, reads: dict[str, int] | None = None,
                 fail: dict[str, Exception] | None = None) -> None:
        self.answers: dict[str, list | Callable] = answers or {}
        self.reads = reads or {}
        self.fail = fail or {}
        self.executed: list[tuple[str, Any]] = []
        self.direct = True  # the server's choice for the reads below: direct path, or through the buffer cache
        self.mystat = dict.fromkeys(MYSTAT_NAMES, 1000)
        self.segstat = dict.fromkeys(("logical reads", "physical reads", "physical reads direct"), 300)
        self.call_timeout, self.module, self.action = 0, None, None

    def cursor(self) -> Cursor:
        return Cursor(self)

    def read(self, blocks: int, *, direct: bool | None = None) -> None:
        """The server read ``blocks`` of the segment: the session's V$MYSTAT and the segment's
        V$SEGMENT_STATISTICS move alike (direct path, or through the buffer cache: ``self.direct``, the server's
        own choice, which no documented session setting makes for it)."""
        direct = self.direct if direct is None else direct
        kind = "direct" if direct else "cache"
        for name in ("physical reads", f"physical reads {kind}", "session logical reads"):
            self.mystat[name] += blocks
        for name in ("physical reads", "logical reads") + (("physical reads direct",) if direct else ()):
            self.segstat[name] += blocks

    def rollback(self) -> None:
        self.executed.append(("ROLLBACK", None))

    def commit(self) -> None:
        self.executed.append(("COMMIT", None))

    def close(self) -> None:
        pass

    def statements(self, marker: str) -> list[tuple[str, Any]]:
        return [(sql, binds) for sql, binds in self.executed if marker in sql]


UNDERSCORE_PARAMETER = re.compile(r"\bALTER\s+(SESSION|SYSTEM)\s+SET\s+\"?_", re.IGNORECASE)


class DocumentedOracle(OracleFake):
    """A server that knows the parameters its documentation describes, and no other (issue 35: "the documented
    session settings only"): an ``ALTER SESSION``/``ALTER SYSTEM`` of an underscore (hidden) parameter, which no
    Database Reference page describes, is refused as Oracle refuses an unknown option (ORA-02248), after it is
    recorded in ``executed`` like every statement."""

    def cursor(self) -> Cursor:
        cur = super().cursor()
        execute = cur.execute

        def documented_only(sql: str, parameters: Any = None, **binds: Any) -> Cursor:
            if UNDERSCORE_PARAMETER.search(sql):
                self.executed.append((sql, binds or parameters))
                raise ora_error(2248, "invalid option for ALTER SESSION")
            return execute(sql, parameters, **binds)

        cur.execute = documented_only  # type: ignore[method-assign]
        return cur
