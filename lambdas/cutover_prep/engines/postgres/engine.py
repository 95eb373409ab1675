"""PostgreSQL engine (psycopg 3).

Discovery lists every relation with storage in each selected database: tables,
partitions, indexes, TOAST tables and their indexes, materialized views and sequences,
each fork (main, fsm, vm, init) as its own segment. Relations in ``pg_toast`` and
indexes are attributed to the schema of the table they belong to, so schema filters
keep a table together with its TOAST data and indexes.

Reading, per database, the first method available wins; the findings name it:

- ``pg_prewarm``: ``pg_prewarm(oid, 'read', fork, first, last)``, synchronous reads of an
  exact block range of any fork (needs the extension in that database; creating it is
  a write and happens only with ``create_extension``); a range whose locator says ``cache``
  (the hot set, when it fits ``planning.HOT_SET_CACHE_SHARE`` of ``cache_bytes()``, shared_buffers)
  is read with mode ``'buffer'``: into shared buffers, so the application finds it there;
- ``pg_read_binary_file``: reads the relation's files through the server, every fork, every
  block; needs EXECUTE on ``pg_read_binary_file(text, bigint, bigint)`` (superusers have it;
  membership in ``pg_read_server_files`` alone does not grant it, PostgreSQL 15 here);
- ``tid_range_scan``: ``ctid`` range scans of heap main forks only; other forks and
  indexes cannot be read this way and fail with a named error, so coverage says so.

Every block count is what the server confirmed (pg_prewarm's return value, the length
pg_read_binary_file returned, the relation's size when a TID range scan ran). A read takes what
exists now: each range is clamped to the fork's current size (``pg_relation_size``), and the
planned blocks past it are ``gone`` (a VACUUM truncates a table's empty tail; pg_prewarm rejects
the whole call for one block past the end); fewer blocks than exist raises ``ShortRead``, so the
unit is not DONE.

Every session is read-only (``SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY``, which
is ``default_transaction_read_only``), named ``cutover-prep``. The only writes are opt-in and
each in its own explicit ``READ WRITE`` transaction: ``create_extension`` here, the write
test in ``engines.postgres.bench``. Every session starts with the bounds of ``engines.bounds``
(``statement_timeout``, ``lock_timeout``, ``idle_in_transaction_session_timeout``: ``session_options``) as
its connection options, so they are the session's defaults
(a ``RESET`` returns to them); a lock wait that reaches ``lock_timeout`` is a ``LockWaitTimeout`` naming
the relation and the sessions holding or queued for the lock that blocks ours. Connections use TLS
as ``engines.transport`` says (verified against the RDS CA bundle by default); ``transport`` names
what was used.

A session dropped under a call (a restart, a failover) raises ``ConnectionLost`` and the next call
connects again; a failed connection says whether the server may answer later (``PQping``), which the
warm-up's retries wait for (``retry.Retries``, issue 32 §4).

Beside it: ``session.py`` (the session's bounds, the lock holders named, psycopg's errors mapped),
``datafiles.py`` (the files ``pg_read_binary_file`` reads), ``census.py`` (what the catalogue names).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql

from cutover_prep.engines import keys
from cutover_prep.engines import transport as tls
from cutover_prep.engines.base import (
    CensusObject,
    ConnectionSpec,
    DatabaseUnreachable,
    DiscoveryOptions,
    Extent,
    LockWaitTimeout,
    PermanentReadError,
    ReadRange,
    ReadResult,
    Segment,
    ShortRead,
    TransientDatabaseError,
)
from cutover_prep.engines.bounds import DIAGNOSIS_SECONDS, session_bounds, wait_words
from cutover_prep.engines.locators import PgLocator
from cutover_prep.engines.postgres import census
from cutover_prep.engines.postgres.datafiles import read_files
from cutover_prep.engines.postgres.session import LOCK_HOLDERS_SQL, holders_words, map_error, session_options
from cutover_prep.engines.postgres.tls import postgres_params

FORKS = ("main", "fsm", "vm", "init")
READ_METHODS = ("pg_prewarm", "pg_read_binary_file", "tid_range_scan")  # in the order they are preferred
PREWARM_MODES = ("read", "prefetch", "buffer")  # pg_prewarm's modes; the warm-up uses "read"
TRUNCATED_AGAIN_ATTEMPTS = 3  # a relation that shrank between its size and the read: measured again, at most this

CAPABILITIES_SQL = """
SELECT current_setting('block_size')::int AS block_size,
       (SELECT setting::bigint FROM pg_settings WHERE name = 'segment_size') AS segment_blocks,
       (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_prewarm'),
       has_function_privilege('pg_catalog.pg_read_binary_file(text, bigint, bigint)', 'EXECUTE')
         AS can_read_files,
       current_setting('server_version_num')::int AS version_num
"""


@dataclass(frozen=True)
class Capabilities:
    block_size: int
    segment_bytes: int
    prewarm_schema: str | None
    can_read_files: bool
    version_num: int

    @property
    def method(self) -> str:
        if self.prewarm_schema:
            return "pg_prewarm"
        if self.can_read_files:
            return "pg_read_binary_file"
        return "tid_range_scan"



class PostgresEngine:
    name = "postgres"
    # libpq's connect_timeout, seconds, of every connection and of the ping that follows a failed one (libpq
    # counts it per host attempt and takes at least 2)
    connect_timeout_seconds = 10

    def __init__(self, spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                 create_extension: bool = False, read_method: str | None = None, prewarm_mode: str = "read") -> None:
        if read_method not in (None, *READ_METHODS) or prewarm_mode not in PREWARM_MODES:
            raise ValueError(f"read_method must be one of {READ_METHODS}, prewarm_mode one of {PREWARM_MODES}")
        self._read_method, self._prewarm_mode = read_method, prewarm_mode
        self._spec = spec
        self.bounds = session_bounds(call_timeout_seconds)  # before connecting: a bad setting is one line
        self._create_extension = create_extension
        self._conns: dict[str, psycopg.Connection] = {}
        self._caps: dict[str, Capabilities] = {}
        self.transport = ""  # how the last connection is protected (engines.transport.TRANSPORT_*)

    @classmethod
    def connect(cls, spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                create_extension: bool = False, **method: str) -> PostgresEngine:
        """``method``: ``read_method`` and ``prewarm_mode`` to force one way of reading (benchmarks)."""
        engine = cls(spec, call_timeout_seconds=call_timeout_seconds, create_extension=create_extension, **method)
        engine.connection(spec.database)  # fail fast on a bad target
        return engine

    # -- connections -------------------------------------------------------------------
    def connection(self, database: str) -> psycopg.Connection:
        conn = self._conns.get(database)
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        params, transport = postgres_params(self._spec)
        conn = self._open(database, params, transport)
        if not transport:  # prefer: whatever the server offered
            transport = tls.TRANSPORT_TLS_UNVERIFIED if conn.pgconn.ssl_in_use else tls.TRANSPORT_PLAINTEXT
        self.transport = transport
        try:
            conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            conn.execute("SET default_transaction_read_only = on")
            conn.execute("SET max_parallel_workers_per_gather = 0")
        except psycopg.OperationalError as exc:  # dropped as soon as it was made (a server shutting down)
            conn.close()
            raise DatabaseUnreachable(f"PostgreSQL {self._spec.host}:{self._spec.port}/{database} dropped the new "
                                      f"session: {str(exc).strip()}", reconnectable=True) from None
        self._conns[database] = conn
        return conn

    def _open(self, database: str, params: dict[str, str], transport: str) -> psycopg.Connection:
        """A new session, or ``DatabaseUnreachable``. A refused connection is tried once more when the server
        accepts connections by the time it is pinged: a restart's "the database system is starting up" may
        have ended between the two (seen in CI), and only a second refusal from a server that is up is the
        login's or the database's (not reconnectable)."""
        try:
            return self._session(database, params)
        except psycopg.Error as exc:
            if self._may_answer_again(database, params):
                raise self._unreachable(database, transport, exc, reconnectable=True) from None
        try:
            return self._session(database, params)
        except psycopg.Error as exc:
            raise self._unreachable(database, transport, exc,
                                    reconnectable=self._may_answer_again(database, params)) from None

    def _session(self, database: str, params: dict[str, str]) -> psycopg.Connection:
        return psycopg.connect(
            host=self._spec.host, port=self._spec.port, dbname=database,
            user=self._spec.user, password=self._spec.password,
            connect_timeout=self.connect_timeout_seconds, application_name="cutover-prep", autocommit=True,
            options=session_options(self.bounds), **params,
        )

    def _unreachable(self, database: str, transport: str, exc: psycopg.Error, *,
                     reconnectable: bool) -> DatabaseUnreachable:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = "" if transport == tls.TRANSPORT_UNIX_SOCKET else tls.tls_hint(self._spec)
        hint = f" ({hint})" if hint else ""
        return DatabaseUnreachable(f"cannot connect to PostgreSQL {self._spec.host}:{self._spec.port}/{database} "
                                   f"as {self._spec.user}: {first_line}{hint}", reconnectable=reconnectable)

    def lock_wait(self, database: str, what: str, oid: int | None = None) -> LockWaitTimeout:
        """``what`` waited ``lock_timeout`` for a lock (on relation ``oid``, or any of ``database``'s): the
        error, naming the relation and the sessions that hold it, as the server says now."""
        waited = f"waited {wait_words(self.bounds.lock_seconds)} for a lock (lock_timeout)"
        try:
            conn = self.connection(database)
            with conn.transaction():
                conn.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(DIAGNOSIS_SECONDS * 1000)))
                rows = conn.execute(LOCK_HOLDERS_SQL, {"oid": oid}).fetchall()
        except (psycopg.Error, DatabaseUnreachable) as exc:
            return LockWaitTimeout(f"{what}: {waited}; who holds it could not be asked: "
                                   f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}")
        if not rows:
            return LockWaitTimeout(f"{what}: {waited}; its holder released it before it could be named")
        return LockWaitTimeout(f"{what}: {waited} on {holders_words(rows)}")

    @contextmanager
    def _waits_named(self, database: str, what: str, oid: int | None = None) -> Iterator[None]:
        try:
            yield
        except psycopg.errors.LockNotAvailable:
            raise self.lock_wait(database, what, oid) from None
        except psycopg.Error as exc:  # statement_timeout, a lost connection: named, retried if transient
            raise map_error(exc, what, lost=self._lost(database)) from None

    def _may_answer_again(self, database: str, params: dict[str, str]) -> bool:
        """Whether a failed connection may succeed later (a restart, a failover), by libpq's ``PQping``:
        REJECT (starting up, shutting down, in recovery) or NO_RESPONSE (nothing answered) may pass; a server
        that accepts connections and refused this one refused the login or the database. (The message is
        the server's, in its language; libpq gives no SQLSTATE for a failed connection.) The ping waits as long
        as the connection did (``connect_timeout_seconds``), not a bound of its own: a failed connect costs at
        most twice the one setting, and PQping holds the GIL while it waits (psycopg's binary build), so every
        other thread of the process (an in-process server too) stands still until it returns."""
        conninfo = psycopg.conninfo.make_conninfo(
            host=self._spec.host, port=self._spec.port, dbname=database, user=self._spec.user,
            connect_timeout=self.connect_timeout_seconds,
            **{k: v for k, v in params.items() if isinstance(v, str | int)})
        return psycopg.pq.PGconn.ping(conninfo.encode()) in (psycopg.pq.Ping.REJECT, psycopg.pq.Ping.NO_RESPONSE)

    def capabilities(self, database: str) -> Capabilities:
        if database not in self._caps:
            conn = self.connection(database)
            if self._create_extension:
                self._install_prewarm(database)
            row = conn.execute(CAPABILITIES_SQL).fetchone()
            self._caps[database] = Capabilities(
                block_size=row[0], segment_bytes=row[1] * row[0], prewarm_schema=row[2],
                can_read_files=bool(row[3]), version_num=row[4],
            )
        return self._caps[database]

    def _install_prewarm(self, database: str) -> None:
        """Opt-in write: CREATE EXTENSION pg_prewarm in its own read-write transaction."""
        conn = self.connection(database)
        with conn.transaction():
            conn.execute("SET TRANSACTION READ WRITE")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")

    def cache_bytes(self) -> int:
        """shared_buffers in bytes (the buffer cache pg_prewarm's 'buffer' mode loads)."""
        try:
            row = self.connection(self._spec.database).execute(
                "SELECT pg_size_bytes(current_setting('shared_buffers'))").fetchone()
        except psycopg.Error as exc:
            raise map_error(exc, "reading shared_buffers") from None
        return int(row[0])

    def read_methods(self) -> dict[str, str]:
        """The read method of each database seen so far (for the findings)."""
        return {db: caps.method for db, caps in self._caps.items()}

    def backend_pids(self) -> list[int]:
        """The server processes of this engine's open connections."""
        return [c.info.backend_pid for c in self._conns.values() if not c.closed]

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    # -- discovery and census ---------------------------------------------------------
    def _database_rows(self) -> list[tuple]:
        """``census.DATABASES_SQL``: the run's own database first (it holds the shared catalogues)."""
        rows = self.connection(self._spec.database).execute(census.DATABASES_SQL).fetchall()
        return sorted(rows, key=lambda r: (r[0] != self._spec.database, r[0]))

    def databases(self, patterns: tuple[str, ...] = ()) -> list[str]:
        """The databases to read: selected by ``patterns`` (none: all but the templates), connectable."""
        options = DiscoveryOptions(databases=patterns)
        return [name for name, is_template, allow, may_connect, _ in self._database_rows()
                if allow and may_connect and census.database_selected(name, is_template, options)]

    def census(self, options: DiscoveryOptions = DiscoveryOptions()) -> list[CensusObject]:
        """Everything on the volume the server can name (``engines.postgres.census``)."""
        out: list[CensusObject] = []
        first = True
        for name, is_template, allow, may_connect, size in self._database_rows():
            selected = census.database_selected(name, is_template, options)
            if not (allow and may_connect):
                reason = "excluded by input" if not selected else (
                    "not readable by SQL" if not allow else "no privilege")
                out.append(census.database_object(name, size, reason, readable=False))
                continue
            if not selected:
                out.append(census.database_object(name, size, "excluded by input", readable=True))
                continue
            try:
                with self._waits_named(name, f"taking the census of database {name}"):
                    rows = census.relation_rows(self.connection(name), with_shared=first)
            except DatabaseUnreachable:  # dropped or closed to us since it was listed
                out.append(census.database_object(name, size, "no privilege", readable=False))
                continue
            first = False
            caps = self.capabilities(name)
            out += census.relation_objects(name, rows, options, method=self._read_method or caps.method,
                                           can_read_files=caps.can_read_files)
        return out

    def discover(self, options: DiscoveryOptions = DiscoveryOptions()) -> list[Segment]:
        """The census's relation forks the run can read and the input selects, as segments."""
        segments: list[Segment] = []
        for i, database in enumerate(self.databases(options.databases)):
            caps = self.capabilities(database)
            with self._waits_named(database, f"discovering the relations of database {database}"):
                rows = census.relation_rows(self.connection(database), with_shared=i == 0)
            for row in rows:
                schema, name, kind = census.segment_name(row)
                if not census.schema_selected(schema, options):
                    continue
                if census.unreadable_because(row, self._read_method or caps.method, caps.can_read_files):
                    continue  # the census names it, with why
                segments.append(Segment(
                    schema=schema, name=name, kind=kind, bytes=row.bytes, block_size=caps.block_size,
                    extents=(Extent(0, 0, row.bytes // caps.block_size),),
                    locator=PgLocator(database=database, oid=row.oid, fork=row.fork, relkind=row.relkind,
                                      schema=row.schema, relname=row.relname),
                    database=database, splittable=True,
                ))
        return segments

    # -- reading -----------------------------------------------------------------------
    def read_range(self, rng: ReadRange) -> ReadResult:
        """Read the planned blocks that exist now: each extent clamped to the fork's current size
        (``pg_relation_size``), the planned blocks past it counted as ``gone`` (a VACUUM truncated the
        table's empty tail since the plan: they no longer exist, so no read can reach them)."""
        loc = PgLocator.of(rng.locator)
        if loc.database is None:
            raise PermanentReadError(f"{rng.segment_key}: its locator names no database")
        database = loc.database
        started = time.monotonic()
        blocks = gone = 0
        try:
            caps = self.capabilities(database)  # a new session's first query: it may find the server gone
            method = self._method(caps)
            for extent in rng.extents:
                got, missing = self._read_extent(database, caps, method, loc, extent, rng.segment_key)
                blocks += got
                gone += missing
        except (TransientDatabaseError, PermanentReadError):
            raise
        except psycopg.errors.LockNotAvailable:
            raise self.lock_wait(database, f"reading {rng.segment_key}", loc.oid) from None
        except psycopg.Error as exc:
            raise map_error(exc, f"reading {rng.segment_key}", lost=self._lost(database)) from None
        return ReadResult(blocks=blocks, bytes=blocks * caps.block_size, seconds=time.monotonic() - started,
                          method=method, details={"gone_blocks": gone} if gone else {}, gone=gone)

    def _read_extent(self, database: str, caps: Capabilities, method: str, loc: PgLocator, extent: Extent,
                     key: str) -> tuple[int, int]:
        """(blocks read, planned blocks gone) of one extent. The fork's size is taken first and the extent
        clamped to it: pg_prewarm rejects the whole call for one block past the end. A relation that shrank
        again between the size and the read is measured again (``TRUNCATED_AGAIN_ATTEMPTS``); blocks that
        exist but were not read are a ``ShortRead``."""
        first, planned_last = extent.first_block, extent.first_block + extent.blocks - 1
        for attempt in range(TRUNCATED_AGAIN_ATTEMPTS):
            last = min(planned_last, self._blocks_now(database, caps, loc, key) - 1)
            if last < first:
                return 0, extent.blocks
            try:
                if method == "pg_prewarm":
                    got = self._prewarm(database, caps, loc, first, last)
                elif method == "pg_read_binary_file":
                    got = read_files(self.connection(database), loc, first, last, block_size=caps.block_size,
                                     segment_bytes=caps.segment_bytes)
                else:
                    got = self._tid_scan(database, loc, first, last)
            except psycopg.errors.InvalidParameterValue as exc:  # pg_prewarm: past the end it saw
                if attempt + 1 < TRUNCATED_AGAIN_ATTEMPTS:
                    continue
                raise ShortRead(f"reading {key}: {str(exc).strip().splitlines()[0]} (the relation kept "
                                f"shrinking: {TRUNCATED_AGAIN_ATTEMPTS} reads of blocks {first}-{last})") from None
            want = last - first + 1
            if got < want and first + got < self._blocks_now(database, caps, loc, key):
                raise ShortRead(f"reading {key}: {method} read {got} of the {want} blocks {first}-{last} "
                                "that exist (the relation was not truncated under the read: the read stopped short)")
            return got, extent.blocks - got
        raise AssertionError("unreachable")  # pragma: no cover

    def _blocks_now(self, database: str, caps: Capabilities, loc: PgLocator, key: str) -> int:
        """The fork's current size in blocks; a relation that no longer exists is a named error."""
        row = self.connection(database).execute("SELECT pg_relation_size(%s::oid, %s)",
                                                (loc.oid, loc.fork)).fetchone()
        if row is None or row[0] is None:
            raise PermanentReadError(f"reading {key}: relation {loc.oid} no longer exists (dropped since "
                                     "discovery)")
        return int(row[0]) // caps.block_size

    def _lost(self, database: str) -> bool:
        """The session of ``database`` is gone (psycopg marks it broken when the server or the network dropped
        it): ``connection`` opens a fresh one on the next call."""
        conn = self._conns.get(database)
        return conn is None or conn.closed or conn.broken

    def read_method(self, database: str) -> str:
        """The method ``read_range`` uses in ``database``."""
        return self._method(self.capabilities(database))

    def _method(self, caps: Capabilities) -> str:
        """The first method available, or the one forced at construction (if the database offers it)."""
        forced = self._read_method
        if forced is None:
            return caps.method
        if (forced == "pg_prewarm" and not caps.prewarm_schema) or (
                forced == "pg_read_binary_file" and not caps.can_read_files):
            raise PermanentReadError(f"{forced} was asked for but this database does not offer it")
        return forced

    def prewarm_call(self, caps: Capabilities, loc: PgLocator, first: int, last: int) -> tuple[sql.Composed, tuple]:
        """The ``pg_prewarm(...)`` expression reading blocks ``first..last`` of ``loc`` and its parameters."""
        call = sql.SQL("{}.pg_prewarm(%s::oid::regclass, %s, %s, %s, %s)").format(sql.Identifier(caps.prewarm_schema))
        # a hot-set range (locator "cache") into shared buffers, unless a benchmark forced another mode
        mode = "buffer" if loc.cache and self._prewarm_mode == "read" else self._prewarm_mode
        return call, (loc.oid, mode, loc.fork, first, last)

    def _prewarm(self, database: str, caps: Capabilities, loc: PgLocator, first: int, last: int) -> int:
        call, params = self.prewarm_call(caps, loc, first, last)
        row = self.connection(database).execute(sql.SQL("SELECT {}").format(call), params).fetchone()
        return int(row[0])


    def _tid_scan(self, database: str, loc: PgLocator, first: int, last: int) -> int:
        if loc.fork != "main" or loc.relkind not in ("r", "m", "t"):
            raise PermanentReadError(
                f"{keys.label((str(loc.schema_name), str(loc.relname)))} ({loc.fork} fork, relkind {loc.relkind}) "
                "cannot be read without pg_prewarm or EXECUTE on pg_read_binary_file; "
                "install pg_prewarm in this database or pass create_extension"
            )
        # The scan reads blocks first..last that exist; the relation's size, taken in the same
        # statement, says how far that was (a relation truncated since discovery ends sooner).
        query = sql.SQL(
            "SELECT count(*), pg_relation_size(%s::oid) / current_setting('block_size')::bigint "
            "FROM {} WHERE ctid >= %s::tid AND ctid < %s::tid"
        ).format(sql.Identifier(str(loc.schema_name), str(loc.relname)))
        _, nblocks = self.connection(database).execute(
            query, (loc.oid, f"({first},0)", f"({last + 1},0)")).fetchone()
        return max(0, min(last, int(nblocks) - 1) - first + 1)

