"""The Oracle engine's reads (``OracleEngine.read_range``), one function per method:

- heap table segments (and partitions, subpartitions): ``rowid_range_scan``, the statement Oracle documents
  for rowid chunks (``read_sql.rowid_range_count_sql``: ``ROWID`` hint, ``ROWID BETWEEN :start_id AND :end_id``;
  issue 35 §1), one range per extent piece below the segment's high-water mark (``hwm_pieces``, from
  DBMS_SPACE.UNUSED_SPACE; issue 35 §2), read the way Oracle chooses (direct path or through the buffer cache: no
  session setting asks; each read says which, ``confirm.read_path``). Before it the
  segment is looked up again (``segment_now``, issue 32): a new DATA_OBJECT_ID means the planned storage is gone,
  a shrunk segment keeps only the planned blocks its extents still hold; bigfile tablespaces: the block number
  spans the rowid's file and block fields;
- indexes: INDEX_FFS of the whole index, or of the table partition at a LOCAL index partition's
  PARTITION_POSITION (``index_ffs``), by a key column found in DBA_TAB_COLS (hidden columns of DESC and
  function-based indexes); an invisible index under the session's OPTIMIZER_USE_INVISIBLE_INDEXES = TRUE (set for
  that read only) and the USE_INVISIBLE_INDEXES hint;
- an IOT's overflow segment (SYS_IOT_OVER_n, which cannot be selected from): through its IOT, counting every column;
  one larger than a unit in pieces, each the rows of a share of its key (``engines.oracle.iotsplit``, issue 35 §3);
- LOB segments: every LOB value read server-side with DBMS_LOB.READ (``lob_read``); a heap table's LOB in pieces,
  each the values of a share of its table's rowid ranges, and only what its values use (DBMS_SPACE.SPACE_USAGE;
  ``engines.oracle.lobsplit``, issue 35 §3). A slice's counters are recorded; one short or over is named
  ``unconfirmed``, not failed (its share is a proportion).

Every read is confirmed by its segment's V$SEGMENT_STATISTICS and the session's V$MYSTAT (``confirm``): short is
``ShortRead``, beyond the plan is ``OverRead``. With ``capture_plan`` (the preflight) the first statement's plan is
kept from V$SQL_PLAN in ``engine.last_plan``, also when the read then fails.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import oracledb

from cutover_prep.engines.base import (
    GONE_FREE_ABOVE_HWM,
    GONE_REBUILT,
    GONE_TRUNCATED,
    Extent,
    PermanentReadError,
    ReadRange,
    ReadResult,
)
from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.oracle import confirm, iotsplit, lobsplit
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle import rowids as rid
from cutover_prep.engines.oracle.errors import map_error

ROWID_METHOD = "rowid_range_scan"
Now = tuple[int | None, tuple[Extent, ...], dict[tuple[int, int], int]]  # objd, extents, extent_id by (file, block)


@contextlib.contextmanager
def use_invisible_indexes(cur: Any) -> Iterator[None]:
    """The statements inside run with ``OPTIMIZER_USE_INVISIBLE_INDEXES = TRUE`` (this session only), and
    the session is set back to FALSE, the default, after (quietly when the read itself failed)."""
    cur.execute(rq.USE_INVISIBLE_INDEXES_SQL)
    try:
        yield
    except BaseException:
        with contextlib.suppress(oracledb.Error):
            cur.execute(rq.IGNORE_INVISIBLE_INDEXES_SQL)
        raise
    cur.execute(rq.IGNORE_INVISIBLE_INDEXES_SQL)


class IndexColumn(NamedTuple):
    """The key column an INDEX_FFS counts by; ``expression``: what a hidden one stands for."""

    name: str
    hidden: bool
    nullable: bool
    expression: str | None = None

    def to_json(self) -> dict[str, str | bool | None]:
        """As the read's details say it: the expression of a hidden column only."""
        shown: dict[str, str | bool | None] = {"name": self.name, "hidden": self.hidden, "nullable": self.nullable}
        return {**shown, "expression": self.expression} if self.hidden else shown


def index_column(cur: Any, loc: OracleLocator) -> IndexColumn:
    """The key column an INDEX_FFS counts by: the first NOT NULL one (then no predicate is needed),
    else the first; a hidden one (function-based or DESC key) with the expression it stands for.
    No row at all is a named error, never a TypeError (``fetchone()`` is None)."""
    rows = [r for r in cur.execute(rq.INDEX_COLUMNS_SQL, owner=loc.owner, index_name=loc.segment)
            if r[2] is not None]
    if not rows:
        raise PermanentReadError(f"index {loc.owner}.{loc.segment}: no key column found in DBA_IND_COLUMNS "
                                 "joined to DBA_TAB_COLS (dropped or rebuilt since discovery, or not a table's index)")
    position, name, nullable, hidden = next((r for r in rows if r[2] == "N"), rows[0])
    if hidden != "YES":
        return IndexColumn(str(name), False, nullable == "Y")
    expression = cur.execute(rq.INDEX_EXPRESSION_SQL, owner=loc.owner, index_name=loc.segment,
                             position=int(position)).fetchone()
    return IndexColumn(str(name), True, nullable == "Y",
                       str(expression[0]) if expression and expression[0] is not None else None)


def segment_now(cur: Any, loc: OracleLocator) -> Now | None:
    """A table segment's DATA_OBJECT_ID, extents and their EXTENT_IDs now (``read_sql.SEGMENT_NOW_SQL``); None when
    the dictionary does not say (then the read goes as planned and says itself what happened)."""
    rows = list(cur.execute(rq.SEGMENT_NOW_SQL, owner=loc.owner, name=loc.table, partition=loc.partition,
                            segment_type=loc.segment_type))
    if not rows:
        return None
    objd = rows[0][0]
    extents = tuple(Extent(int(r[1]), int(r[2]), int(r[3])) for r in rows if r[1] is not None)
    ids = {(int(r[1]), int(r[2])): int(r[4]) for r in rows if r[1] is not None and len(r) > 4 and r[4] is not None}
    return (None if objd is None else int(objd)), extents, ids


def _overlap(planned: tuple[Extent, ...], ranges: list[tuple[int, int, int]]) -> tuple[Extent, ...]:
    pieces = []
    for p in planned:
        for file_id, first_block, blocks in ranges:
            if file_id != p.file_id:
                continue
            first = max(p.first_block, first_block)
            end = min(p.first_block + p.blocks, first_block + blocks)
            if end > first:
                pieces.append(Extent(p.file_id, first, end - first))
    return tuple(pieces)


def high_water_mark(cur: Any, loc: OracleLocator) -> tuple[int, int, int] | str:
    """(file, first block of the last used extent, blocks of it used) from DBMS_SPACE.UNUSED_SPACE, or why not."""
    out = {name: cur.var(oracledb.DB_TYPE_NUMBER) for name in (
        "total_blocks", "total_bytes", "unused_blocks", "unused_bytes", "last_file", "last_block_id", "last_block")}
    try:
        cur.execute(rq.UNUSED_SPACE_BLOCK, owner=loc.owner, name=loc.table, segment_type=loc.segment_type,
                    partition=loc.partition, **out)
    except oracledb.DatabaseError as exc:
        err = exc.args[0] if exc.args else exc
        text = " ".join(str(getattr(err, "message", None) or exc).split())[:160]
        return f"not known: DBMS_SPACE.UNUSED_SPACE refused ({text}; it needs ANALYZE on the table)"
    values = [out[n].getvalue() for n in ("last_file", "last_block_id", "last_block")]
    if any(v is None for v in values):
        return "not known: DBMS_SPACE.UNUSED_SPACE returned no last used extent"
    return int(values[0]), int(values[1]), int(values[2])


def hwm_pieces(pieces: tuple[Extent, ...], now: Now | None, mark: tuple[int, int, int]
               ) -> tuple[tuple[Extent, ...], int, int] | None:
    """The pieces below the high-water mark, the blocks of ``pieces`` above it and the blocks of the pieces
    below it in the mark's own extent (``confirm.floor_of``'s loose ones), or None when the mark's
    extent is not among the segment's extents now. Extents before the last used one (by EXTENT_ID) are used
    whole, the last used one up to ``last_used_block``, the later ones not at all (DBMS_SPACE.UNUSED_SPACE).
    The mark's extent is found by its first block (UNUSED_SPACE names the file by FILE_ID, DBA_EXTENTS by
    RELATIVE_FNO, which differ only in a database of more than 1023 files), by the file too if need be."""
    if now is None or not now[2]:
        return None
    file_id, block_id, used = mark
    ids = now[2]
    found = [key for key in ids if key[1] == block_id]
    if len(found) > 1:
        found = [key for key in found if key[0] == file_id]
    if len(found) != 1:
        return None
    last = ids[found[0]]
    used_ranges, last_range = [], []
    for ext in now[1]:
        eid = ids.get((ext.file_id, ext.first_block))
        if eid is None:
            return None
        blocks = ext.blocks if eid < last else min(used, ext.blocks) if eid == last else 0
        if blocks:
            used_ranges.append((ext.file_id, ext.first_block, blocks))
        if eid == last and blocks:
            last_range.append((ext.file_id, ext.first_block, blocks))
    below = _overlap(pieces, used_ranges)
    loose = sum(p.blocks for p in _overlap(below, last_range))
    return below, sum(p.blocks for p in pieces) - sum(p.blocks for p in below), loose


def _named(row: tuple | None, what: str) -> str:
    if row is None or row[0] is None:
        raise PermanentReadError(f"{what}: no table partition at its position (DBA_TAB_PARTITIONS); "
                                 "dropped or merged since discovery")
    return str(row[0])


def table_partition_of(cur: Any, loc: OracleLocator) -> str:
    """The table partition a LOCAL index partition indexes: the one at the same PARTITION_POSITION."""
    row = cur.execute(rq.INDEX_TABLE_PARTITION_SQL, owner=loc.owner, index_name=loc.segment,
                      partition=loc.partition, table_owner=loc.table_owner, table_name=loc.table).fetchone()
    return _named(row, f"index {loc.owner}.{loc.segment} partition {loc.partition}")


class StatementPlan(NamedTuple):
    """The plan a statement ran with (V$SQL_PLAN): each line ``[operation, options, object owner, object name]``;
    no ``sql_id`` when the session's previous statement is not known."""

    sql_id: str | None
    lines: list[list[str | None]]
    child_number: int | None = None


def plan_of_last_statement(cur: Any) -> StatementPlan:
    """The plan the session's previous statement ran with (V$SESSION.PREV_SQL_ID, V$SQL_PLAN)."""
    row = cur.execute(rq.PREV_SQL_SQL).fetchone()
    if row is None or row[0] is None:
        return StatementPlan(None, [])
    lines: list[list[str | None]] = [[str(op or ""), str(opt or ""), owner, name] for _, op, opt, owner, name in
                                     cur.execute(rq.SQL_PLAN_SQL, sql_id=row[0], child_number=int(row[1] or 0))]
    return StatementPlan(str(row[0]), lines, int(row[1] or 0))


class Reader:
    """One ``read_range`` call on an engine's connection (the engine opens and ends the transaction)."""

    def __init__(self, engine: Any, rng: ReadRange) -> None:
        self.engine, self.rng, self.loc = engine, rng, OracleLocator.of(rng.locator)
        self.details: dict[str, Any] = {}
        self.gone, self.planned, self.loose = 0, rng.blocks, None  # loose None: every planned block
        self.taken: confirm.Taken | None = None

    def run(self, cur: Any) -> tuple[str, confirm.Taken | None]:
        """The read; the counters before it are taken by ``_begin`` right before its data statements (after
        the dictionary look-ups it needs, whose recursive reads are not the read's), and after it here."""
        read = getattr(self, f"_{self.loc.read}", self._unsupported)
        if self.loc.read in ("unsupported", "with_lob") or read == self._unsupported:
            return read(cur), None  # no statement (with_lob: read with its LOB), or a named error
        method = read(cur)
        taken = self.taken or self._begin(cur)  # not begun: nothing left to read (all gone or above the mark)
        taken.session_after = self._session(cur) if taken.session_before is not None else None
        taken.segment_after = self._segment(cur) if taken.segment_before is not None else None
        return method, taken

    def _begin(self, cur: Any) -> confirm.Taken:
        self.taken = confirm.Taken(self._session(cur), self._segment(cur))
        return self.taken

    def _session(self, cur: Any) -> dict[str, int] | None:
        """This session's counters; without SELECT on V$MYSTAT, None, and the details say so."""
        found = self.engine.counters.session(cur)
        if found is None:
            self.details["unconfirmed"] = confirm.NO_MYSTAT
        return found

    def _segment(self, cur: Any) -> dict[str, int] | None:
        """The segment's counters; without SELECT on V$SEGMENT_STATISTICS, None, and the details say so."""
        found = self.engine.counters.segment(cur, self.loc)
        if found is None:
            self.details["segment_unconfirmed"] = confirm.NO_SEGMENT_STATISTICS
        return found

    def _existing(self, now: Now | None) -> tuple[Extent, ...]:
        """The planned blocks the segment still holds; the planned blocks gone counted in ``gone`` (issue 32).

        A new DATA_OBJECT_ID (TRUNCATE, MOVE: a new segment) leaves nothing of the planned storage: all gone, the
        end census's catch-up pass reads the new segment. The same one (a SHRINK SPACE released extents above its
        high water mark) keeps the planned blocks its current extents hold."""
        rng = self.rng
        if now is None:
            return rng.extents
        objd, extents, _ = now
        if objd != int(self.loc.data_object_id or 0):
            self.details.update(gone_reason=GONE_REBUILT, data_object_id_now=objd)
            self.gone = rng.blocks
            return ()
        pieces = _overlap(rng.extents, [(e.file_id, e.first_block, e.blocks) for e in extents])
        self.gone = rng.blocks - sum(p.blocks for p in pieces)
        if self.gone:
            self.details["gone_reason"] = GONE_TRUNCATED
        return pieces

    def record(self, found: confirm.Confirmation) -> None:
        """What the server's counters say of the read, in its details."""
        for name, delta in (("mystat", found.session), ("segment_stats", found.segment), ("read_path", found.path)):
            if delta is not None:
                self.details[name] = delta
        self.details["confirmed_blocks"] = found.confirmed
        if found.by is not None:
            self.details["confirmed_by"] = found.by

    def _capture(self, cur: Any) -> None:
        if self.engine.capture_plan and self.engine.last_plan is None:
            self.engine.last_plan = plan_of_last_statement(cur)

    def _rowid_range(self, cur: Any) -> str:
        loc, details = self.loc, self.details
        sql = rq.rowid_range_count_sql(loc.owner, loc.table, loc.partition, loc.subpartition)
        now = segment_now(cur, loc)
        pieces = self._existing(now)
        if pieces:
            mark = high_water_mark(cur, loc)
            clipped = None if isinstance(mark, str) else hwm_pieces(pieces, now, mark)
            if clipped is None:
                details["high_water_mark"] = mark if isinstance(mark, str) else \
                    "not known: the last used extent is not among the segment's extents now"
            else:
                pieces, above, self.loose = clipped
                details["high_water_mark"] = {"file": mark[0], "extent_block": mark[1], "last_used_block": mark[2]}
                if above:
                    details["free_above_hwm"] = above
                    details.setdefault("gone_reason", GONE_FREE_ABOVE_HWM)
                    self.gone += above
        self.planned = sum(p.blocks for p in pieces)
        self._begin(cur)
        for ext in pieces:
            cur.execute(sql, **rid.rowid_bounds(loc.data_object_id, ext.file_id, ext.first_block,
                                              ext.first_block + ext.blocks - 1, loc.bigfile))
            cur.fetchone()
            self._capture(cur)
        return ROWID_METHOD

    def _index(self, cur: Any) -> str:
        loc = self.loc
        column = index_column(cur, loc)
        self.details["index_column"] = column.to_json()
        partition = None if loc.whole_index or not loc.partition else table_partition_of(cur, loc)
        invisible = loc.invisible
        statement = rq.index_ffs_sql(loc.table_owner, loc.table, loc.segment, column.name, column.nullable,
                                    partition, invisible)
        self._begin(cur)
        if invisible:  # the optimizer ignores it, hint included, unless the session says otherwise
            self.details["optimizer_use_invisible_indexes"] = True
            with use_invisible_indexes(cur):
                cur.execute(statement)
                cur.fetchone()
        else:
            cur.execute(statement)
            cur.fetchone()
        self._capture(cur)
        return "index_ffs"

    def _iot_overflow(self, cur: Any) -> str:
        loc = self.loc
        columns = [str(c) for (c,) in cur.execute(rq.IOT_COLUMNS_SQL, owner=loc.owner, table_name=loc.table)]
        partition = None
        if loc.partition:
            row = cur.execute(rq.OVERFLOW_IOT_PARTITION_SQL, owner=loc.owner, overflow=loc.overflow,
                              partition=loc.partition, iot_name=loc.table).fetchone()
            partition = _named(row, f"{loc.owner}.{loc.overflow} partition {loc.partition}")
        if loc.split:  # a slice of the IOT's key (issue 35 §3, engines.oracle.iotsplit)
            self._sliced(iotsplit.read(cur, self.rng, columns, partition, begin=lambda: self._begin(cur)), "key_slice")
            self.planned = self.rng.blocks - self.gone
            return "iot_overflow"
        self._begin(cur)
        cur.execute(rq.iot_overflow_sql(loc.owner, loc.table, columns, partition))
        cur.fetchone()
        return "iot_overflow"

    def _lob(self, cur: Any) -> str:
        loc = self.loc
        total = cur.var(oracledb.DB_TYPE_NUMBER)
        free, space = lobsplit.reachable(cur, self.rng)  # blocks no DBMS_LOB read reaches (issue 35 §3)
        if space is not None:
            self.details["lob_space"] = space
        if loc.split:  # a slice of a heap table's LOB, by its table's rowids (engines.oracle.lobsplit)
            self._sliced(lobsplit.read(cur, self.rng, total, begin=lambda: self._begin(cur)), "lob_slice")
        else:
            self._begin(cur)
            cur.execute(rq.lob_read_block(loc.owner, loc.table, loc.column, loc.data_type, loc.table_partition,
                                         loc.table_subpartition), total=total)
        if free and not self.gone:  # planned: what the values use; the rest named, never read by a query
            self.gone, self.details["gone_reason"] = free, lobsplit.GONE_LOB_FREE
        self.planned = self.rng.blocks - self.gone
        return "lob_read"

    def _sliced(self, found: lobsplit.Sliced, key: str) -> None:
        """A slice's read: its planned blocks gone, and its details under ``key`` (gone: why)."""
        self.gone = found.gone
        if found.shown is None:
            self.details["gone_reason"] = GONE_TRUNCATED
        else:
            self.details[key] = found.shown
        if found.unconfirmed is not None:
            self.details["unconfirmed"] = found.unconfirmed

    def _with_lob(self, cur: Any) -> str:
        return "with_lob"

    def _unsupported(self, cur: Any) -> str:
        why = f" ({self.loc.why})" if self.loc.why else ""
        raise PermanentReadError(f"{self.rng.segment_key}: segment type {self.loc.segment_type}{why} "
                                 "has no SQL read method; warmup.mode datafiles or both reads it")


def read_range(engine: Any, rng: ReadRange) -> ReadResult:
    """Read one planned range (not the datafile pass) inside the engine's read-only transaction."""
    started = time.monotonic()
    reader = Reader(engine, rng)
    try:
        with engine.conn.cursor() as cur:
            engine._read_only_transaction(cur)
            method, taken = reader.run(cur)
    except oracledb.Error as exc:
        raise map_error(exc, f"reading {rng.segment_key}") from None
    except ValueError as exc:  # an identifier Oracle cannot quote
        raise PermanentReadError(f"{rng.segment_key}: {exc}") from None
    finally:
        engine._end_transaction()
    # a slice of a LOB's table or an overflow's key reads a proportional share, not the piece's own blocks
    # (engines.oracle.lobsplit, iotsplit): its counters are recorded and it is named unconfirmed, never failed and
    # never confirmed (``confirm.slice_unconfirmed``: no documented counter says which blocks of a segment it read)
    details = reader.details
    sliced = "table_blocks" in details.get("lob_slice", {}) or "from" in details.get("key_slice", {})
    if method != "with_lob" and not str(details.get("unconfirmed", "")).startswith("the IOT's leading key"):
        loose = reader.planned if reader.loose is None else reader.loose
        found = confirm.confirm_read(rng, reader.planned, method, taken, loose=loose)
        reader.record(found)
        if found.refused is not None and not sliced:
            raise found.refused
        if sliced:
            details["unconfirmed"] = confirm.slice_unconfirmed(method, found.confirmed, found.refused)
    read = rng.blocks - reader.gone
    return ReadResult(blocks=read, bytes=read * rng.block_size, seconds=time.monotonic() - started,
                      method=method, details=reader.details, gone=reader.gone)
