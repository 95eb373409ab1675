"""Oracle engine (python-oracledb, thin mode: no Instant Client).

Discovery reads DBA_SEGMENTS / DBA_EXTENTS owner by owner and page by page, and resumes from the pages it
kept (``engines.oracle.discovery``; the SQL in ``engines.oracle.sql``). Reading:
- heap table segments (and partitions, subpartitions): FULL scans of rowid ranges, one
  range per extent piece, with ``_serial_direct_read = always`` so blocks come through
  direct path reads, as in seed 002 (``full_scan_rowid_range``; splittable);
  (bigfile tablespaces: the block number spans ROWID_CREATE's file and block fields);
- indexes: INDEX_FFS of the whole index, or of the table partition at a LOCAL index partition's
  PARTITION_POSITION (``index_ffs``), by a key column found in DBA_TAB_COLS (hidden columns of
  DESC and function-based indexes); an invisible index under the session's
  OPTIMIZER_USE_INVISIBLE_INDEXES = TRUE (set for that read only) and the USE_INVISIBLE_INDEXES hint;
- an IOT's overflow segment (SYS_IOT_OVER_n, which cannot be selected from): through its IOT,
  counting every column (``iot_overflow``);
- LOB segments: every LOB value read server-side with DBMS_LOB.READ (``lob_read``; an NCLOB into
  NVARCHAR2; a LOB (sub)partition reads its table (sub)partition only); a heap table's LOB in pieces, each
  the values of a share of its table's rowid ranges, and only what its values use (``engines.oracle.lobsplit``).
  LOB indexes, clusters and nested tables are not planned: the census names them read by the datafile pass only.
Every read is confirmed by the session's V$MYSTAT counters (``confirm_read``): far fewer blocks
than planned is ``ShortRead``; the deltas are in ``ReadResult.details``. A read takes what exists
now (issue 32): before a rowid range read the table segment is looked up again (``segment_now``):
a new DATA_OBJECT_ID (TRUNCATE, MOVE) means the planned storage is gone, a shrunk segment keeps only
the planned blocks its extents still hold; what is gone is ``ReadResult.gone``, not a short read.
Nothing is written; ALTER SESSION changes only this session. ``census`` names everything on the
volume (every segment of DBA_SEGMENTS, every datafile of DBA_DATA_FILES; ``engines.oracle.census``).

Read-only guard: discovery and every read run inside ``SET TRANSACTION READ ONLY`` (any
Oracle version: DML, SELECT FOR UPDATE and PL/SQL that writes fail with ORA-01456; each
read ends with a rollback, so no read-only snapshot is held across reads), and where the
database has the session parameter ``READ_ONLY`` (23ai and later) the session is also set
``READ_ONLY = TRUE``, which refuses writes and DDL for the whole session. ``allow_writes``
lifts the session guard for the opt-in write test only.

Transport (``engines.transport``): TCPS verified against the RDS CA bundle by default
(``CUTOVER_PREP_TLS=require``); ``engine.transport`` says what was used.
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from collections.abc import Iterator, MutableMapping
from typing import Any

import oracledb

from cutover_prep.engines import transport as tls
from cutover_prep.engines.base import (
    GONE_REBUILT,
    GONE_TRUNCATED,
    CensusObject,
    ConnectionSpec,
    DatabaseUnreachable,
    DiscoveryOptions,
    Extent,
    PermanentReadError,
    ReadRange,
    ReadResult,
    Segment,
    ShortRead,
    TransientDatabaseError,
)
from cutover_prep.engines.bounds import session_bounds
from cutover_prep.engines.oracle import census, datafiles, discovery, iotsplit, lobsplit
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle import volumes as ora_volumes
from cutover_prep.engines.oracle.tls import oracle_attempts

DIRECT = "ALWAYS"  # the warm-up's sessions read by direct path (prepare_session)

# A read is confirmed when the session's counters moved by at least this share of its planned blocks
# (the rest: segment headers and space-management blocks a scan skips, recursive reads counted too).
MIN_CONFIRMED_FRACTION = 0.5
NO_PRIVILEGE_CODES = {942, 1031}
PERMANENT_CODES = {942, 1031, 8103, 1403, 904}  # no table, no privilege, object gone, no data, bad column
TRANSIENT_CODES = {54, 1555, 3113, 3114, 3135, 12170, 12541, 12514, 25408, 4068}


def map_error(exc: oracledb.Error, what: str) -> Exception:
    err = exc.args[0] if exc.args else None
    code = getattr(err, "code", 0)
    full_code = getattr(err, "full_code", "") or ""
    message = (getattr(err, "message", None) or str(exc)).strip().splitlines()[0]
    if code in TRANSIENT_CODES or full_code.startswith("DPY-4011") or full_code.startswith("DPY-4024") \
            or isinstance(exc, oracledb.OperationalError):
        return TransientDatabaseError(f"{what}: {message}")
    return PermanentReadError(f"{what}: {message}")


TCPS_HINT = ("TLS is required (CUTOVER_PREP_TLS=require): RDS for Oracle offers TCPS through the SSL option of "
             "its option group (port 2484 unless set otherwise; name another port in target.port)")


_CONNECTION_ID = re.compile(r"\s*\(CONNECTION_ID=[^)]*\)")
_HELP = re.compile(r"\s*Help: \S+")


def connect_problem(exc: BaseException) -> str:
    """One line on why a connection failed, with its cause: python-oracledb's DPY-6005 "cannot
    connect to database" says nothing alone; the socket error under it (its ``__cause__``, or the
    message's next lines) does. The per-attempt CONNECTION_ID is left out (noise in one line)."""
    if isinstance(exc, socket.gaierror):  # oracledb lets the resolver's error through
        return f"host name not resolved ({exc.strerror or exc})"
    if not isinstance(exc, oracledb.Error):
        return f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
    err = exc.args[0] if exc.args else exc
    lines = [line.strip() for line in (getattr(err, "message", None) or str(exc) or type(exc).__name__).splitlines()]
    lines = [line for line in lines if line and not line.startswith("Help:")] or [type(exc).__name__]
    head = _CONNECTION_ID.sub("", lines[0]).rstrip(". ")
    cause = exc.__cause__
    detail = (str(cause).strip() if cause is not None and str(cause).strip() else " ".join(lines[1:]))
    detail = " ".join(_HELP.sub("", detail).split())  # one line, without the troubleshooting links
    return f"{head}: {detail}" if detail and detail not in head else head


def allow_writes(conn: Any) -> None:
    """Lift the session's ``READ_ONLY`` guard (23ai+) for the opt-in write test; a no-op where there is none.

    Ends the open (read-only) transaction first; ``SET TRANSACTION READ ONLY`` is per transaction anyway."""
    conn.rollback()
    try:
        with conn.cursor() as cur:
            cur.execute(q.SESSION_READ_WRITE_SQL)
    except oracledb.DatabaseError:
        pass  # no READ_ONLY session parameter before 23ai: nothing to lift


@contextlib.contextmanager
def use_invisible_indexes(cur: Any) -> Iterator[None]:
    """The statements inside run with ``OPTIMIZER_USE_INVISIBLE_INDEXES = TRUE`` (this session only), and
    the session is set back to FALSE, the default, after (quietly when the read itself failed)."""
    cur.execute(q.USE_INVISIBLE_INDEXES_SQL)
    try:
        yield
    except BaseException:
        with contextlib.suppress(oracledb.Error):
            cur.execute(q.IGNORE_INVISIBLE_INDEXES_SQL)
        raise
    cur.execute(q.IGNORE_INVISIBLE_INDEXES_SQL)


def index_column(cur: Any, loc: dict[str, Any]) -> dict[str, Any]:
    """The key column an INDEX_FFS counts by: the first NOT NULL one (then no predicate is needed),
    else the first; a hidden one (function-based or DESC key) with the expression it stands for.
    No row at all is a named error, never a TypeError (``fetchone()`` is None)."""
    rows = [r for r in cur.execute(q.INDEX_COLUMNS_SQL, owner=loc["owner"], index_name=loc["segment"])
            if r[2] is not None]
    if not rows:
        raise PermanentReadError(f"index {loc['owner']}.{loc['segment']}: no key column found in DBA_IND_COLUMNS "
                                 "joined to DBA_TAB_COLS (dropped or rebuilt since discovery, or not a table's index)")
    position, name, nullable, hidden = next((r for r in rows if r[2] == "N"), rows[0])
    column = {"name": str(name), "hidden": hidden == "YES", "nullable": nullable == "Y"}
    if column["hidden"]:
        expression = cur.execute(q.INDEX_EXPRESSION_SQL, owner=loc["owner"], index_name=loc["segment"],
                                 position=int(position)).fetchone()
        column["expression"] = str(expression[0]) if expression and expression[0] is not None else None
    return column


def confirm_read(rng: ReadRange, method: str, before: dict[str, int] | None, after: dict[str, int] | None,
                 details: dict[str, Any]) -> None:
    """Record what the session's counters say was read, and refuse a read they do not confirm.

    Blocks read = the larger of 'physical reads' (from storage, buffered or direct) and 'session
    logical reads' (which also counts blocks that were already in the buffer cache). Far fewer than
    planned (a scan that stopped at the high-water mark, a hint the optimizer ignored) is a ShortRead."""
    if before is None or after is None:
        details["confirmed_blocks"] = None
        return
    delta = {name: max(0, after.get(name, 0) - before.get(name, 0)) for name in q.MYSTAT_NAMES}
    confirmed = max(delta["physical reads"], delta["session logical reads"])
    details.update(mystat=delta, confirmed_blocks=confirmed)
    if confirmed < rng.blocks * MIN_CONFIRMED_FRACTION:
        raise ShortRead(f"{rng.segment_key}: {method} read {confirmed} of the {rng.blocks} blocks planned "
                        f"(V$MYSTAT: physical reads +{delta['physical reads']}, session logical reads "
                        f"+{delta['session logical reads']}); the blocks were not read by this statement")


def segment_now(cur: Any, loc: dict[str, Any]) -> tuple[int | None, tuple[Extent, ...]] | None:
    """A table segment's DATA_OBJECT_ID and extents now (``sql.SEGMENT_NOW_SQL``); None when the dictionary
    does not say (then the read goes as planned and says itself what happened)."""
    rows = list(cur.execute(q.SEGMENT_NOW_SQL, owner=loc["owner"], name=loc["table"], partition=loc["partition"],
                            segment_type=loc["segment_type"]))
    if not rows:
        return None
    objd = rows[0][0]
    return (None if objd is None else int(objd)), tuple(Extent(int(f), int(b), int(n)) for _, f, b, n in rows
                                                       if f is not None)


def existing_pieces(rng: ReadRange, now: tuple[int | None, tuple[Extent, ...]] | None,
                    details: dict[str, Any]) -> tuple[tuple[Extent, ...], int]:
    """The planned blocks of ``rng`` the segment still holds, and how many planned blocks are gone (issue 32).

    A new DATA_OBJECT_ID (TRUNCATE, MOVE: a new segment) leaves nothing of the planned storage: all gone, the
    end census's catch-up pass reads the new segment. The same one (a SHRINK SPACE released extents above its
    high water mark) keeps the planned blocks its current extents hold."""
    if now is None:
        return rng.extents, 0
    objd, extents = now
    if objd != int(rng.locator["data_object_id"]):
        details.update(gone_reason=GONE_REBUILT, data_object_id_now=objd)
        return (), rng.blocks
    pieces = []
    for planned in rng.extents:
        for ext in extents:
            if ext.file_id != planned.file_id:
                continue
            first = max(planned.first_block, ext.first_block)
            end = min(planned.first_block + planned.blocks, ext.first_block + ext.blocks)
            if end > first:
                pieces.append(Extent(planned.file_id, first, end - first))
    gone = rng.blocks - sum(p.blocks for p in pieces)
    if gone:
        details["gone_reason"] = GONE_TRUNCATED
    return tuple(pieces), gone


def _named(row: tuple | None, what: str) -> str:
    if row is None or row[0] is None:
        raise PermanentReadError(f"{what}: no table partition at its position (DBA_TAB_PARTITIONS); "
                                 "dropped or merged since discovery")
    return str(row[0])


def table_partition_of(cur: Any, loc: dict[str, Any]) -> str:
    """The table partition a LOCAL index partition indexes: the one at the same PARTITION_POSITION."""
    row = cur.execute(q.INDEX_TABLE_PARTITION_SQL, owner=loc["owner"], index_name=loc["segment"],
                      partition=loc["partition"], table_owner=loc["table_owner"], table_name=loc["table"]).fetchone()
    return _named(row, f"index {loc['owner']}.{loc['segment']} partition {loc['partition']}")


class OracleEngine:
    name = "oracle"

    def __init__(self, connection: Any, transport: str = "") -> None:
        self.conn = connection
        self.transport = transport  # engines.transport.TRANSPORT_*
        self.read_only_guard = "transaction"  # or "session+transaction" where READ_ONLY=TRUE took
        self.mystat_readable = True  # False once V$MYSTAT refused us (ORA-00942/01031)

    @classmethod
    def connect(cls, spec: ConnectionSpec, *, call_timeout_seconds: float | None = None) -> OracleEngine:
        conn, transport, problems = None, "", []
        for extra, how in oracle_attempts(spec):
            try:
                conn = oracledb.connect(user=spec.user, password=spec.password, host=spec.host,
                                        service_name=spec.database, tcp_connect_timeout=10, expire_time=2, **extra)
                transport = how
                break
            except (oracledb.Error, OSError) as exc:  # OSError: an unresolvable host is socket.gaierror
                problems.append(f"{extra['protocol']} port {extra['port']}: {connect_problem(exc)}")
        if conn is None:
            hint = tls.tls_hint(spec, TCPS_HINT)
            hint = f" ({hint})" if hint else ""
            raise DatabaseUnreachable(f"cannot connect to Oracle {spec.host}/{spec.database} as {spec.user}: "
                                      f"{'; '.join(problems)}{hint}")
        # every round trip bounded (engines.bounds: the Lambda's remaining time, else the command line's bound);
        # a SELECT never waits on a row or table lock in Oracle (a consistent read), so this is its one bound
        conn.call_timeout = session_bounds(call_timeout_seconds).statement_ms
        conn.module, conn.action = "cutover-prep", "warm-up"
        engine = cls(conn, transport)
        engine.prepare_session()
        return engine

    def prepare_session(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute(q.serial_direct_read_sql(DIRECT))
        self.conn.rollback()  # READ_ONLY cannot be set with a transaction open
        try:
            with self.conn.cursor() as cur:
                cur.execute(q.SESSION_READ_ONLY_SQL)
            self.read_only_guard = "session+transaction"
        except oracledb.DatabaseError:  # before 23ai (ORA-02248): SET TRANSACTION READ ONLY per read only
            self.read_only_guard = "transaction"

    def _read_only_transaction(self, cur: Any) -> None:
        """End any open transaction and start a read-only one (it must be the transaction's first statement)."""
        self.conn.rollback()
        cur.execute(q.SET_TRANSACTION_READ_ONLY_SQL)

    def _end_transaction(self) -> None:
        try:
            self.conn.rollback()
        except oracledb.Error:
            pass  # a broken connection: the error that broke it is already on its way

    def close(self) -> None:
        try:
            self.conn.close()
        except oracledb.Error:
            pass

    def read_methods(self) -> dict[str, str]:
        return {"*": "full_scan_rowid_range + index_ffs + lob_read"}  # the datafile pass: datafiles.METHOD

    def discover_datafiles(self) -> list[Segment]:
        """Every online datafile as one splittable segment (``engines.oracle.datafiles``)."""
        try:
            with self.conn.cursor() as cur:
                self._read_only_transaction(cur)
                return datafiles.discover_datafiles(cur)
        except oracledb.Error as exc:
            raise map_error(exc, "listing the datafiles (DBA_DATA_FILES)") from None
        finally:
            self._end_transaction()

    def _validate(self, rng: ReadRange) -> ReadResult:
        """The datafile pass: RMAN validates the range, outside the read-only transaction (see ``datafiles``)."""
        try:
            self.conn.rollback()
            with self.conn.cursor() as cur:
                return datafiles.validate_range(cur, rng)
        except oracledb.Error as exc:
            raise map_error(exc, f"validating {rng.segment_key}") from None
        finally:
            self._end_transaction()

    # -- discovery ---------------------------------------------------------------------
    def system_schemas(self) -> set[str]:
        schemas = set(q.SYSTEM_SCHEMAS)
        try:
            with self.conn.cursor() as cur:
                schemas |= {row[0] for row in cur.execute(q.SYSTEM_SCHEMAS_SQL)}
        except oracledb.DatabaseError:  # 11g has no ORACLE_MAINTAINED
            pass
        return schemas

    def discover(self, options: DiscoveryOptions = DiscoveryOptions(),
                 pages: MutableMapping[str, Any] | None = None) -> list[Segment]:
        """The selected segments, owner by owner and page by page (``engines.oracle.discovery``); ``pages``
        keeps each page found, and a page already in it is not asked again (discovery resumes)."""
        with self.conn.cursor() as cur:
            self._read_only_transaction(cur)
        try:
            system = self.system_schemas()
            with self.conn.cursor() as cur:
                cur.arraysize = 10_000
                return discovery.discover(cur, options, system, pages)
        except oracledb.Error as exc:  # a lost connection is transient: retried, and resumed from ``pages``
            raise map_error(exc, "discovering the segments (DBA_SEGMENTS, DBA_EXTENTS: SELECT_CATALOG_ROLE)") \
                from None
        finally:
            self._end_transaction()

    def census(self, options: DiscoveryOptions = DiscoveryOptions()) -> list[CensusObject]:
        """Everything on the volume the database can name (``engines.oracle.census``): every segment
        in DBA_SEGMENTS and every datafile in DBA_DATA_FILES, with why what cannot be read is not."""
        try:
            with self.conn.cursor() as cur:
                self._read_only_transaction(cur)
                cur.arraysize = 10_000
                accessible = {(str(o), str(n)) for o, n in cur.execute(q.ACCESSIBLE_SQL)}
                segments = census.segment_objects(cur.execute(q.CENSUS_SEGMENTS_SQL), accessible, options)
                files = census.datafile_objects(cur.execute(q.CENSUS_DATAFILES_SQL))
        except oracledb.Error as exc:
            raise map_error(exc, "taking the census (DBA_SEGMENTS, DBA_DATA_FILES: SELECT_CATALOG_ROLE)") from None
        finally:
            self._end_transaction()
        return segments + files

    def map_volumes(self, segments: list[Segment], volume_names: tuple[str, ...]) -> list[Segment]:
        """Map each segment's files to the RDS storage volume they are on (``engines.oracle.volumes``):
        DBA_DATA_FILES' paths, then the segments of each tablespace with a file on an additional volume."""
        try:
            with self.conn.cursor() as cur:
                self._read_only_transaction(cur)
                files = ora_volumes.datafile_volumes(cur.execute(q.DATAFILE_PATHS_SQL), volume_names)
                tablespaces_of: dict[tuple[str, str, str | None], set[str]] = {}
                for tablespace in files.tablespaces:
                    for owner, name, part in cur.execute(q.TABLESPACE_SEGMENTS_SQL, tablespace_name=tablespace):
                        tablespaces_of.setdefault((owner, name, part), set()).add(tablespace)
        except oracledb.Error as exc:
            raise map_error(exc, "mapping datafiles to the RDS storage volumes (DBA_DATA_FILES, DBA_SEGMENTS)") \
                from None
        finally:
            self._end_transaction()
        return ora_volumes.annotate(segments, files, tablespaces_of)

    # -- reading -----------------------------------------------------------------------
    def read_range(self, rng: ReadRange) -> ReadResult:
        loc = rng.locator
        if loc["read"] == "datafile":
            return self._validate(rng)
        started = time.monotonic()
        details: dict[str, Any] = {}
        gone, confirming = 0, rng
        try:
            with self.conn.cursor() as cur:
                self._read_only_transaction(cur)
                before = self._session_reads(cur, details)
                if loc["read"] == "rowid_range":
                    method = "full_scan_rowid_range"
                    sql = q.rowid_range_count_sql(loc["owner"], loc["table"], loc["partition"], loc["subpartition"],
                                                  serial_direct_read=DIRECT)
                    pieces, gone = existing_pieces(rng, segment_now(cur, loc), details)
                    confirming = ReadRange(rng.segment_key, loc, pieces, rng.block_size, rng.splittable)
                    for ext in pieces:
                        cur.execute(sql, **q.rowid_range_binds(loc["data_object_id"], ext.file_id, ext.first_block,
                                                             ext.first_block + ext.blocks - 1,
                                                             bool(loc.get("bigfile"))))
                        cur.fetchone()
                elif loc["read"] == "index":
                    method = "index_ffs"
                    column = index_column(cur, loc)
                    details["index_column"] = column
                    partition = None if loc.get("whole_index") or not loc["partition"] else \
                        table_partition_of(cur, loc)
                    invisible = bool(loc.get("invisible"))
                    statement = q.index_ffs_sql(loc["table_owner"], loc["table"], loc["segment"], column["name"],
                                                column["nullable"], partition, invisible)
                    if invisible:  # the optimizer ignores it, hint included, unless the session says otherwise
                        details["optimizer_use_invisible_indexes"] = True
                        with use_invisible_indexes(cur):
                            cur.execute(statement)
                            cur.fetchone()
                    else:
                        cur.execute(statement)
                        cur.fetchone()
                elif loc["read"] == "iot_overflow":
                    method = "iot_overflow"
                    columns = [str(c) for (c,) in cur.execute(q.IOT_COLUMNS_SQL, owner=loc["owner"],
                                                              table_name=loc["table"])]
                    partition = None
                    if loc["partition"]:
                        row = cur.execute(q.OVERFLOW_IOT_PARTITION_SQL, owner=loc["owner"], overflow=loc["overflow"],
                                          partition=loc["partition"], iot_name=loc["table"]).fetchone()
                        partition = _named(row, f"{loc['owner']}.{loc['overflow']} partition {loc['partition']}")
                    if loc.get("split"):  # a slice of the IOT's key (issue 35 §3)
                        gone = iotsplit.read(cur, rng, columns, partition, details)
                        confirming = ReadRange(rng.segment_key, loc, () if gone else rng.extents, rng.block_size)
                    else:
                        cur.execute(q.iot_overflow_sql(loc["owner"], loc["table"], columns, partition))
                        cur.fetchone()
                elif loc["read"] == "lob":
                    method = "lob_read"
                    total = cur.var(oracledb.DB_TYPE_NUMBER)
                    free = lobsplit.reachable(cur, rng, details)  # blocks no DBMS_LOB read reaches (issue 35 §3)
                    if loc.get("split"):  # a slice of a heap table's LOB, by its table's rowids (issue 35 §3)
                        gone = lobsplit.read(cur, rng, total, details)
                    else:
                        cur.execute(q.lob_read_block(loc["owner"], loc["table"], loc["column"], loc["data_type"],
                                                     loc.get("table_partition"), bool(loc.get("table_subpartition"))),
                                    total=total)
                    if free and not gone:  # planned: what the values use; the rest named, never read by a query
                        gone, details["gone_reason"] = free, lobsplit.GONE_LOB_FREE
                    confirming = ReadRange(rng.segment_key, loc, lobsplit.first_blocks(rng.extents, rng.blocks - gone),
                                           rng.block_size)
                elif loc["read"] == "with_lob":
                    method = "with_lob"
                else:
                    why = f" ({loc['why']})" if loc.get("why") else ""
                    raise PermanentReadError(f"{rng.segment_key}: segment type {loc['segment_type']}{why} "
                                             "has no SQL read method; warmup.mode datafiles or both reads it")
                after = self._session_reads(cur, details) if before is not None else None
        except oracledb.Error as exc:
            raise map_error(exc, f"reading {rng.segment_key}") from None
        except ValueError as exc:  # an identifier Oracle cannot quote
            raise PermanentReadError(f"{rng.segment_key}: {exc}") from None
        finally:
            self._end_transaction()
        # a slice of a LOB's table or an overflow's key reads a proportional share, not the piece's own blocks
        # (engines.oracle.lobsplit, iotsplit): its counters are recorded, and a short one is named, not failed
        sliced = "table_blocks" in details.get("lob_slice", {}) or "from" in details.get("key_slice", {})
        if details.get("unconfirmed", "").startswith("the IOT's leading key"):
            pass  # a piece of an overflow that cannot be sliced: its first piece read it all
        elif method != "with_lob":
            try:
                confirm_read(confirming if gone else rng, method, before, after, details)
            except ShortRead as exc:
                if not sliced:
                    raise
                details["unconfirmed"] = f"a slice (a proportional share of its table or key): {exc}"
        read = rng.blocks - gone
        return ReadResult(blocks=read, bytes=read * rng.block_size, seconds=time.monotonic() - started,
                          method=method, details=details, gone=gone)

    def _session_reads(self, cur: Any, details: dict[str, Any]) -> dict[str, int] | None:
        """This session's read counters (V$MYSTAT), or None without SELECT on them (said in ``details``)."""
        if not self.mystat_readable:
            details["unconfirmed"] = "no SELECT on V$MYSTAT/V$STATNAME: the read is not confirmed by the server"
            return None
        try:
            return {str(name): int(value) for name, value in cur.execute(q.MYSTAT_SQL)}
        except oracledb.DatabaseError as exc:
            if getattr(exc.args[0] if exc.args else None, "code", 0) not in NO_PRIVILEGE_CODES:
                raise
            self.mystat_readable = False
            return self._session_reads(cur, details)
