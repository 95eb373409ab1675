"""Oracle engine (python-oracledb, thin mode: no Instant Client).

Discovery reads DBA_SEGMENTS / DBA_EXTENTS owner by owner and page by page, resuming from the pages it kept
(``engines.oracle.discovery``; its SQL in ``engines.oracle.sql``, the reads' in ``engines.oracle.read_sql``); LOB
indexes, clusters and nested tables are not planned (the census names them read by the datafile pass only).
Reading: ``engines.oracle.reads`` (the statement of each read method, rowid ranges as Oracle documents them,
below the high-water mark), each read confirmed by ``engines.oracle.confirm`` (its segment's V$SEGMENT_STATISTICS
beside the session's V$MYSTAT: short is ``ShortRead``, beyond the plan ``OverRead``; which path the read took,
direct or through the buffer cache, is Oracle's choice and recorded). A read takes what exists now (issue 32).
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

import re
import socket
from collections.abc import MutableMapping
from typing import Any

import oracledb

from cutover_prep.engines import transport as tls
from cutover_prep.engines.base import (
    CensusObject,
    ConnectionSpec,
    DatabaseUnreachable,
    DiscoveryOptions,
    ReadRange,
    ReadResult,
    Segment,
)
from cutover_prep.engines.bounds import session_bounds
from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.oracle import census, confirm, datafiles, discovery, reads
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle import volumes as ora_volumes
from cutover_prep.engines.oracle.errors import PERMANENT_CODES, TRANSIENT_CODES, map_error  # noqa: F401 (re-exported)
from cutover_prep.engines.oracle.tls import oracle_attempts

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


class OracleEngine:
    name = "oracle"

    def __init__(self, connection: Any, transport: str = "") -> None:
        self.conn = connection
        self.transport = transport  # engines.transport.TRANSPORT_*
        self.read_only_guard = "transaction"  # or "session+transaction" where READ_ONLY=TRUE took
        self.counters = confirm.Counters()  # V$MYSTAT / V$SEGMENT_STATISTICS, and which we may not read
        self.capture_plan = False  # the preflight: keep the first statement's plan of each read (V$SQL_PLAN)
        self.last_plan: reads.StatementPlan | None = None

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
        """The session's read-only guard. No read-path setting: Oracle chooses direct path or buffered reads, and
        each read says which it was (``confirm.read_path``; issue 35: the documented session settings only)."""
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
        return {"*": f"{reads.ROWID_METHOD} + index_ffs + lob_read"}  # the datafile pass: datafiles.METHOD

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
                 pages: MutableMapping[str, discovery.PageDoc] | None = None) -> list[Segment]:
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
        if OracleLocator.of(rng.locator).read == "datafile":
            return self._validate(rng)
        return reads.read_range(self, rng)
