"""A fake python-oracledb connection that plays one heap table segment the way Oracle documents it
(issue 35 §1, §2). No tests here; the tests that use it cite the pages.

- Extended rowids (Concepts, "Rowid Format", https://docs.oracle.com/cd/G47991_01/cncpt/img_text/cncpt249.html:
  ``AAAPec`` data object number, ``AAF`` relative file number, ``AAAABS`` block number, ``AAA`` row number,
  each field base-64 ``A-Za-z0-9+/``) are decoded here by the fake's own decoder, not the engine's.
- A statement hinted ``ROWID(t)`` with ``t.ROWID BETWEEN :start_id AND :end_id`` (the statement
  DBMS_PARALLEL_EXECUTE documents for rowid chunks,
  https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_PARALLEL_EXECUTE.html) is a
  ``TABLE ACCESS BY ROWID RANGE``: it reads the formatted blocks of its range (below the high-water mark).
- A ``FULL(t)`` hinted one (or any statement when ``ignore_hints``) is a ``TABLE ACCESS FULL``: every block
  below the high-water mark, whatever its rowid predicate (SQL Tuning Guide, "Full Table Scans",
  https://docs.oracle.com/database/122/TGSQL/optimizer-access-paths.htm: a full scan reads all blocks under
  the high water mark).
- Each read moves the session's V$MYSTAT counters and the segment's own V$SEGMENT_STATISTICS
  ('logical reads', 'physical reads', 'physical reads direct'); ``recursive`` blocks per dictionary statement
  move the session's counters only (dictionary and recursive reads are the session's, not the segment's).
- DBMS_SPACE.UNUSED_SPACE answers the last used extent's file, first block and last used block (the
  high-water mark); V$SESSION.PREV_SQL_ID and V$SQL_PLAN name the last read's plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import oracledb

from tests.unit.oracle_cursor import FakeCursor

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def decode_rowid(rowid: str) -> tuple[int, int, int, int]:
    """(data object number, relative file number, block number, row number) of an extended rowid."""
    def num(text: str) -> int:
        value = 0
        for ch in text:
            value = value * 64 + B64.index(ch)
        return value
    assert len(rowid) == 18, rowid
    return num(rowid[:6]), num(rowid[6:9]), num(rowid[9:15]), num(rowid[15:])


def encode_rowid(objd: int, fno: int, block: int, row: int) -> str:
    """What DBMS_ROWID.ROWID_CREATE(1, objd, fno, block, row) prints (the same figure, read the other way)."""
    def text(value: int, chars: int) -> str:
        return "".join(B64[(value >> (6 * i)) & 63] for i in reversed(range(chars)))
    return text(objd, 6) + text(fno, 3) + text(block, 6) + text(row, 3)


@dataclass
class Ext:
    extent_id: int
    file_id: int
    block_id: int
    blocks: int


class Var:
    def __init__(self) -> None:
        self.value: Any = None

    def getvalue(self, pos: int = 0) -> Any:
        return self.value

    def setvalue(self, pos: int, value: Any) -> None:
        self.value = value


@dataclass
class TableFake:
    """One table segment APP.ORDERS (data object 777) with its extents and its high-water mark, given as
    (extent_id of the last used extent, blocks of it below the mark)."""

    extents: list[Ext]
    hwm: tuple[int, int]
    objd: int = 777
    ignore_hints: bool = False
    recursive: int = 0  # blocks each dictionary statement (DBA_ views, DBMS_SPACE) reads (a cold volume)
    segment_stats_move: bool = True
    unformatted: int = 0  # ASSM: the last used extent's last blocks below the mark not formatted yet (scans skip them)
    unused_space_error: Exception | None = None
    executed: list[tuple[str, Any]] = field(default_factory=list)
    mystat: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("physical reads", "physical reads direct", "physical reads cache", "session logical reads"), 5000))
    segstat: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("logical reads", "physical reads", "physical reads direct"), 300))
    last_plan: str | None = None
    call_timeout: int = 0
    module: Any = None
    action: Any = None

    def below_hwm(self, formatted_only: bool = False) -> set[tuple[int, int]]:
        last_id, used = self.hwm
        if formatted_only:
            used -= self.unformatted
        out = set()
        for e in self.extents:
            if e.extent_id < last_id:
                n = e.blocks
            elif e.extent_id == last_id:
                n = used
            else:
                n = 0
            out |= {(e.file_id, e.block_id + i) for i in range(n)}
        return out

    def total_blocks(self) -> int:
        return sum(e.blocks for e in self.extents)

    def statements(self, marker: str) -> list[tuple[str, Any]]:
        return [(s, b) for s, b in self.executed if marker in s]

    def read(self, sql: str, binds: dict[str, Any]) -> int:
        """What the server reads for one statement on the table, by its plan."""
        full = self.ignore_hints or "FULL(t)" in sql or "ROWID(t)" not in sql
        below = self.below_hwm(formatted_only=True)
        if full:
            self.last_plan = "FULL"
            return len(below)
        self.last_plan = "BY ROWID RANGE"
        objd, lo_file, lo_block, _ = decode_rowid(binds["start_id"])
        _, hi_file, hi_block, _ = decode_rowid(binds["end_id"])
        assert objd == self.objd and lo_file == hi_file
        return sum(1 for f, b in below if f == lo_file and lo_block <= b <= hi_block)

    def cursor(self) -> Cursor:
        return Cursor(self)

    def rollback(self) -> None:
        self.executed.append(("ROLLBACK", None))

    def commit(self) -> None:
        self.executed.append(("COMMIT", None))

    def close(self) -> None:
        pass


class Cursor(FakeCursor):
    def var(self, _type: Any) -> Var:
        return Var()

    def execute(self, sql: str, parameters: Any = None, **binds: Any) -> Cursor:  # noqa: C901 (one fake server)
        db = self.db
        binds = binds or parameters or {}
        db.executed.append((sql, binds))
        self._rows = []
        low = sql.lower()
        if "dba_" in low or "dbms_space" in low:  # the dictionary's blocks, through the buffer cache
            for name in ("physical reads", "physical reads cache", "session logical reads"):
                db.mystat[name] += db.recursive
        if "v$mystat" in low:
            self._rows = list(db.mystat.items())
        elif "v$segment_statistics" in low:
            if binds.get("owner") == "APP" and binds.get("name") == "ORDERS":
                self._rows = list(db.segstat.items())
        elif "dbms_space.unused_space" in low:
            if db.unused_space_error is not None:
                raise db.unused_space_error
            last_id, used = db.hwm
            last = next(e for e in db.extents if e.extent_id == last_id)
            binds["total_blocks"].setvalue(0, db.total_blocks())
            binds["unused_blocks"].setvalue(0, db.total_blocks() - len(db.below_hwm()))
            binds["last_file"].setvalue(0, last.file_id)
            binds["last_block_id"].setvalue(0, last.block_id)
            binds["last_block"].setvalue(0, used)
            for name in ("total_bytes", "unused_bytes"):
                if name in binds:
                    binds[name].setvalue(0, 0)
        elif "from dba_objects o" in low and "dba_extents e" in low:  # the segment as it is now
            if "extent_id" in low:
                self._rows = [(db.objd, e.file_id, e.block_id, e.blocks, e.extent_id) for e in db.extents]
            else:
                self._rows = [(db.objd, e.file_id, e.block_id, e.blocks) for e in db.extents]
        elif "dbms_rowid.rowid_create" in low and "from dual" in low:
            self._rows = [(encode_rowid(binds["objd"], binds["fno"], binds["block"], binds["row_number"]),)]
        elif "v$session" in low and "prev_sql_id" in low:
            self._rows = [("7xq3y0aq5v1d2", 0)]
        elif "v$sql_plan" in low:
            if binds.get("sql_id") == "7xq3y0aq5v1d2" and db.last_plan:
                self._rows = [(0, "SELECT STATEMENT", None, None, None), (1, "SORT", "AGGREGATE", None, None),
                              (2, "TABLE ACCESS", db.last_plan, "APP", "ORDERS")]
        elif "count(*)" in low and '"app"."orders"' in low:
            blocks = db.read(sql, binds)
            for name in ("physical reads", "physical reads direct", "session logical reads"):
                db.mystat[name] += blocks
            if db.segment_stats_move:
                for name in db.segstat:
                    db.segstat[name] += blocks
            self._rows = [(blocks * 10,)]
        return self


def ora_error(code: int, text: str = "boom") -> oracledb.DatabaseError:
    err = type("E", (), {"code": code, "full_code": f"ORA-{code:05d}", "message": f"ORA-{code:05d}: {text}"})()
    return oracledb.DatabaseError(err)
