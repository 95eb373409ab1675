"""MySQL 8.0 / 8.4 and MariaDB 10.6-11 engine (PyMySQL, pure Python).

Discovery: ``engines.mysql.discovery`` (what is read, as segments). Reading:

- ``pk_walk``, the clustered index by key ranges. Chunk bounds are found by walking the
  index as percona-toolkit's NibbleIterator and gh-ost do (``FORCE INDEX``, ordered, the
  upper bound ``LIMIT 1 OFFSET n`` rows on from the lower one), never by min/max arithmetic.
  A segment's "blocks" are the pages of its ``DATA_LENGTH``; block ``b`` stands for row
  ordinal ``round(b * rows / pages)`` (``rows`` the estimate at discovery), so a chunk of
  blocks is a fixed run of rows in key order whichever invocation reads it: the bound a chunk
  ends at is memorised for the next chunk, and a chunk whose lower bound is not known (a new
  Lambda container, a resumed run, a unit holding a later piece of a big table) finds it by
  the same walk from the nearest known bound (``repositioned_rows`` says how far). The last
  chunk of a segment reads to the end of the key range, so rows beyond the estimate are read
  too. Each chunk's statement reads every off-page column (BLOB/TEXT/JSON/long VARCHAR:
  InnoDB reads their pages only when the column is read) as a sum of their lengths.
- ``index_scan``: a covering scan of one secondary index with ``FORCE INDEX``;
- ``full_scan``: tables without a key to walk (``GEN_CLUST_INDEX``, MyISAM, Aria), whole.

Every statement's plan is checked once per segment with EXPLAIN (``FORMAT=TRADITIONAL`` on
MySQL, whatever ``explain_format`` says; the intended index, and
``Using index`` for covering scans), and every read with the session's ``Handler_read_*``
counters (an index read must not scan the table: ``Handler_read_rnd_next`` stays put); a
server that would read something else is a ``PermanentReadError`` naming it. Confirmation:
the global ``Innodb_pages_read`` / ``Innodb_buffer_pool_reads`` deltas of each read (in
``ReadResult.details`` and ``confirmation``), and ``performance_schema.file_summary_by_instance``
bytes when performance_schema is on; ``read_methods()`` says which was available.

Sessions are read-only (``SET SESSION TRANSACTION READ ONLY``, each read in ``START
TRANSACTION READ ONLY``) with the bounds of ``engines.bounds``: a per-statement timeout (the
Lambda's remaining time; ``max_execution_time`` on MySQL, ``max_statement_time`` on MariaDB) and a
bound on lock waits (``lock_wait_timeout``, ``innodb_lock_wait_timeout``); a read whose wait for a
metadata lock reaches it is a ``LockWaitTimeout`` naming the table and who holds the lock
(``sql.MDL_INFO_HOLDERS_SQL`` and the next two); on MySQL 8 also
``information_schema_stats_expiry = 0`` (sizes and row counts uncached) and
``use_invisible_indexes=on`` (an INVISIBLE index is read like any other). TLS as
``engines.transport`` says (verified against the RDS CA bundle by default).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pymysql

from cutover_prep.engines import transport as tls
from cutover_prep.engines.base import (
    CensusObject,
    ConnectionLost,
    ConnectionSpec,
    DatabaseUnreachable,
    DiscoveryOptions,
    LockWaitTimeout,
    PermanentReadError,
    ReadRange,
    ReadResult,
    Segment,
    TransientDatabaseError,
)
from cutover_prep.engines.bounds import DIAGNOSIS_SECONDS, SessionBounds, session_bounds, wait_words
from cutover_prep.engines.locators import MysqlLocator
from cutover_prep.engines.mysql import census, discovery
from cutover_prep.engines.mysql import sql as q
from cutover_prep.engines.mysql.evidence import Explained, Tally, delta, status
from cutover_prep.engines.mysql.tls import mysql_params

LOCK_WAIT_TIMEOUT = 1205  # ER_LOCK_WAIT_TIMEOUT: lock_wait_timeout (metadata locks), innodb_lock_wait_timeout
TRANSIENT_CODES = {1205, 1213, 1317, 2003, 2006, 2013, 2055, 1040, 1053, 1927, 3024, 1969}
# The session is gone (server gone away, lost during the query or the handshake, shutdown in progress,
# connection killed; 0: PyMySQL's own "already closed"): the next call connects again (issue 32 §4).
LOST_CODES = {0, 2006, 2013, 2055, 1053, 1927}
# A connection that failed with these may succeed later (nothing listens yet, too many connections,
# shutting down); anything else at login (1045 access denied, 1049 unknown database ...) is a refusal.
RECONNECTABLE_CODES = {2002, 2003, 2006, 2013, 2055, 1040, 1053, 1927}
END = "end"  # a bound past the last row: the key range is read to its end


def _code(exc: Exception) -> int:
    return exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0


def map_error(exc: Exception, what: str) -> Exception:
    code = _code(exc)
    message = (str(exc.args[1] if len(exc.args) > 1 else exc).strip().splitlines() or [""])[0]
    if code in LOST_CODES and isinstance(exc, pymysql.err.OperationalError | pymysql.err.InterfaceError):
        return ConnectionLost(f"{what}: the session was dropped: ({code}) {message or 'connection closed'}")
    if code in TRANSIENT_CODES or isinstance(exc, pymysql.err.OperationalError) and code >= 2000:
        return TransientDatabaseError(f"{what}: ({code}) {message}")
    return PermanentReadError(f"{what}: ({code}) {message}")


def sessions_words(rows: list[tuple]) -> str:
    """Rows of (id, lock mode, user, host, command, seconds, state) as words, one session each."""
    out = []
    for ident, mode, user, host, command, seconds, state in rows:
        about = ", ".join(str(part) for part in (
            mode, f"user {user}" if user else "", f"host {host}" if host else "",
            f"{command} for {seconds} s" if command else "", state or "") if part)
        out.append(f"id {ident}" + (f" ({about})" if about else ""))
    return "; ".join(out)


def ordinal(block: int, loc: MysqlLocator) -> int:
    """The row ordinal (in key order) that block ``block`` of a clustered segment stands for."""
    pages = max(1, int(loc.pages))
    return round(min(block, pages) * max(0, int(loc.rows)) / pages)


class MySQLEngine:
    read_only_guard = "session+transaction"

    def __init__(self, conn: Any, dialect: q.Dialect, page_size: int, transport: str,
                 performance_schema: bool, bounds: SessionBounds | None = None) -> None:
        self.conn = conn
        self.bounds = bounds or session_bounds()
        self.dialect = dialect
        self.name = dialect.flavor
        self.page_size = page_size
        self.transport = transport
        self.performance_schema = performance_schema
        self.not_readable: list[str] = []  # system / undo tablespaces, named in read_methods()
        self.confirmation = {"pages_planned": 0, "innodb_pages_read": 0, "innodb_buffer_pool_reads": 0}
        self._bounds: dict[str, dict[int, Any]] = {}  # segment key -> {block: key tuple | END}
        self._checked: set[tuple[str, str]] = set()
        self._dropped = False  # the session was lost: the next call connects again (``_live``)
        self._reopen: Any = None  # how ``connect`` made this engine's connection

    @classmethod
    def connect(cls, spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                database: str | None = None) -> MySQLEngine:
        try:
            return cls._connect(spec, call_timeout_seconds=call_timeout_seconds, database=database)
        except (pymysql.err.OperationalError, pymysql.err.InterfaceError) as exc:
            if _code(exc) not in LOST_CODES | RECONNECTABLE_CODES:
                raise
            # the session dropped as soon as it was made (a server shutting down): it may answer again
            raise DatabaseUnreachable(f"MySQL/MariaDB {spec.host}:{spec.port} dropped the new session: "
                                      f"({_code(exc)}) {exc.args[1] if len(exc.args) > 1 else exc}",
                                      reconnectable=True) from None

    @classmethod
    def _connect(cls, spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                 database: str | None = None) -> MySQLEngine:
        bounds = session_bounds(call_timeout_seconds)  # before connecting: a bad setting is one line
        params, transport = mysql_params(spec)
        try:
            conn = pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password,
                                   database=database or spec.database or None, connect_timeout=10,
                                   autocommit=True, charset="utf8mb4", program_name="cutover-prep", **params)
        except pymysql.err.MySQLError as exc:
            reason = str(exc.args[1] if len(exc.args) > 1 else exc).strip().splitlines()[0]
            hint = "" if transport == tls.TRANSPORT_UNIX_SOCKET else tls.tls_hint(spec)
            hint = f" ({hint})" if hint else ""
            raise DatabaseUnreachable(f"cannot connect to MySQL/MariaDB {spec.host}:{spec.port}/{spec.database} "
                                      f"as {spec.user}: {reason}{hint}",
                                      reconnectable=_code(exc) in RECONNECTABLE_CODES) from None
        if not transport:  # prefer: whatever the server offered
            transport = tls.TRANSPORT_TLS_UNVERIFIED if getattr(conn, "_secure", False) else tls.TRANSPORT_PLAINTEXT
        with conn.cursor() as cur:
            cur.execute(q.SETTINGS_SQL)
            version, page_size, perf = cur.fetchone()
            dialect = q.Dialect.from_version(str(version))
            cur.execute(q.SESSION_READ_ONLY_SQL)
            cur.execute(f"SELECT {dialect.read_only_variable()}")
            if int(cur.fetchone()[0]) != 1:  # never read without the guard
                conn.close()
                raise DatabaseUnreachable(f"{dialect.label} at {spec.host}:{spec.port} did not make the session "
                                          "read-only (SET SESSION TRANSACTION READ ONLY)")
            for statement in (dialect.timeout_sql(bounds.statement_seconds),
                              q.lock_timeout_sql(bounds.lock_whole_seconds), *dialect.session_sql()):
                cur.execute(statement)
        engine = cls(conn, dialect, int(page_size), transport, bool(int(perf or 0)), bounds)
        engine._reopen = lambda: cls.connect(spec, call_timeout_seconds=call_timeout_seconds, database=database)
        return engine

    def _live(self) -> None:
        """After a dropped session (``ConnectionLost``), a fresh connection, set up as ``connect`` sets one up;
        ``DatabaseUnreachable`` while the server does not answer (the warm-up's retries wait for it)."""
        if self._dropped and self._reopen is not None:
            fresh = self._reopen()
            self.conn, self.transport, self._dropped = fresh.conn, fresh.transport, False

    def _drop(self, mapped: Exception) -> Exception:
        if isinstance(mapped, ConnectionLost):
            self.close()
            self._dropped = True
        return mapped

    def close(self) -> None:
        try:
            self.conn.close()
        except pymysql.err.Error:
            pass  # already closed or broken

    def read_methods(self) -> dict[str, str]:
        confirmation = "Innodb_pages_read and Innodb_buffer_pool_reads deltas per read"
        confirmation += (" and performance_schema.file_summary_by_instance bytes" if self.performance_schema
                         else " (performance_schema is off: no per-file bytes)")
        methods = {"*": "pk_walk (clustered index by key ranges) + index_scan (covering) + full_scan",
                   "server": self.dialect.label, "confirmation": confirmation}
        if self.not_readable:
            methods["not_readable_by_sql"] = "; ".join(self.not_readable)
        return methods

    # -- discovery ---------------------------------------------------------------------
    def discover(self, options: DiscoveryOptions = DiscoveryOptions()) -> list[Segment]:
        cat, system = self._catalogue()
        self.not_readable = [f"{name} ({int(size) / 2**20:,.1f} MiB): no SQL read path" for name, size in system]
        found = discovery.segments(cat, options)
        if options.include_system:  # asked for: the system and undo tablespaces are named as not readable
            for name, size in system:
                found.append(discovery.make_segment(
                    "(innodb)", str(name), "system_tablespace", discovery.pages_of(size, self.page_size),
                    self.page_size, {"read": "not_readable", "schema": "(innodb)", "table": str(name),
                                     "why": "the system and undo tablespaces have no SQL read path"}, None, False))
        return found

    def _catalogue(self) -> tuple[discovery.Catalogue, list[tuple]]:
        """The INFORMATION_SCHEMA rows discovery needs (one read-only transaction), and the system
        and undo tablespaces (name, bytes)."""
        self._live()
        try:
            with self.conn.cursor() as cur:
                cur.execute(q.START_READ_ONLY_SQL)
                rows = {}
                for key, statement in (("tables", q.TABLES_SQL), ("partitions", q.PARTITIONS_SQL),
                                       ("statistics", self.dialect.statistics_sql()), ("columns", q.COLUMNS_SQL),
                                       ("fulltext", self.dialect.fulltext_aux_sql()),
                                       ("system", self.dialect.system_tablespaces_sql())):
                    cur.execute(statement)
                    rows[key] = list(cur.fetchall())
                index_pages = self._index_pages(cur)
                cur.execute("COMMIT")
        except pymysql.err.MySQLError as exc:
            raise self._drop(map_error(exc, "discovering tables")) from None
        return discovery.Catalogue(
            page_size=self.page_size, tables=rows["tables"], partitions=rows["partitions"],
            statistics=rows["statistics"], columns=rows["columns"], index_pages=index_pages,
            fulltext_aux=[(str(n), int(s)) for n, s in rows["fulltext"]]), rows["system"]

    def census(self, options: DiscoveryOptions = DiscoveryOptions()) -> list[CensusObject]:
        """Everything on the volume the server can name (``engines.mysql.census``): every InnoDB
        tablespace (PROCESS shows them all, whoever may read their tables), every MyISAM/Aria table
        the user can see; what the user cannot read says why. Taken at the start and again at the
        end of the warm-up."""
        cat, _ = self._catalogue()
        try:
            with self.conn.cursor() as cur:
                cur.execute(q.DATADIR_SQL)
                datadir = str(cur.fetchone()[0] or "")
                cur.execute(self.dialect.census_tablespaces_sql())
                tablespaces = census.with_engine_files(list(cur.fetchall()), self._engine_files(cur))
                names = self._decode_file_names(cur, census.file_name_pieces(tablespaces))
                cur.execute(q.FREE_SQL)
                free = {(str(s), str(t), str(p).lower() if p else None): int(f) for s, t, p, f in cur.fetchall()}
                stats = self._table_stats(cur)
                redo = self._redo_log(cur)
        except pymysql.err.MySQLError as exc:
            what = "taking the census of the InnoDB tablespaces (the user needs PROCESS)"
            raise self._drop(map_error(exc, what)) from None
        return census.objects(census.CensusRows(
            datadir=datadir, tablespaces=tablespaces, tables=cat.tables, partitions=cat.partitions,
            segments=discovery.segments(cat, DiscoveryOptions(include_system=True)), names=names, free=free,
            stats=stats, page_size=self.page_size, frm=self.dialect.flavor == "mariadb", redo=redo), options)

    def _engine_files(self, cur: Any) -> list[tuple]:
        """MySQL 8's system and temporary tablespaces (``Dialect.engine_files_sql``); [] on MariaDB, or where the
        server will not say (then the census names what INNODB_TABLESPACES lists)."""
        statement = self.dialect.engine_files_sql()
        if statement is None:
            return []
        try:
            cur.execute(statement)
            return list(cur.fetchall())
        except pymysql.err.MySQLError:
            return []

    def _redo_log(self, cur: Any) -> list[tuple[str, int]]:
        """The redo log's file and bytes (``Dialect.redo_log_sql``); [] where the server will not say."""
        try:
            cur.execute(self.dialect.redo_log_sql())
            found = cur.fetchone()
        except pymysql.err.MySQLError:
            return []
        return [(str(found[0]), int(found[1]))] if found and found[1] is not None else []

    @staticmethod
    def _table_stats(cur: Any) -> dict[str, int]:
        """Pages per table (``db/table`` as its file is named) from the persistent statistics; {} without
        SELECT on mysql.innodb_table_stats."""
        try:
            cur.execute(q.TABLE_STATS_SQL)
        except pymysql.err.MySQLError:
            return {}
        return {f"{db}/{t}": int(pages or 0) for db, t, pages in cur.fetchall()}

    @staticmethod
    def _decode_file_names(cur: Any, pieces: set[str], batch: int = 200) -> dict[str, str]:
        """The server's own decoding of file-name encoded names (``CONVERT(... USING filename)``:
        ``@1o`` and the other two-character codes have no rule short of MySQL's table); {} where the
        server will not (then ``sql.decode_filename`` decodes what it can)."""
        ordered, out = sorted(pieces), {}
        try:
            for i in range(0, len(ordered), batch):
                chunk = ordered[i:i + batch]
                cur.execute("SELECT " + ", ".join([q.DECODE_FILENAME_SQL] * len(chunk)), chunk)
                out.update(zip(chunk, (str(v) for v in cur.fetchone()), strict=True))
        except pymysql.err.MySQLError:
            return {}
        return {k: v for k, v in out.items() if "?" not in v or "?" in k}

    def _index_pages(self, cur: Any) -> dict[tuple[str, str, str | None, str], int] | None:
        """Pages per index from the persistent statistics, or None without SELECT on mysql.innodb_index_stats.
        Keyed ``(schema, table, partition in lower case or None, index)`` whichever separator the
        server writes (``sql.stats_table_key``)."""
        try:
            cur.execute(q.INDEX_SIZES_SQL)
        except pymysql.err.MySQLError:
            return None
        return {(q.decode_filename(db), *q.stats_table_key(t), i): int(v) for db, t, i, v in cur.fetchall()}

    # -- reading -----------------------------------------------------------------------
    def read_range(self, rng: ReadRange) -> ReadResult:
        loc = MysqlLocator.of(rng.locator)
        started = time.monotonic()
        if loc.read == "not_readable":
            raise PermanentReadError(f"{rng.segment_key}: not readable by SQL: {loc.why}; "
                                     "its pages are warmed only when the database itself reads them")
        tally = Tally()
        self._live()
        try:
            with self.conn.cursor() as cur:
                innodb_before = self._server_reads(cur)
                handler_before = status(cur, q.HANDLER_SQL)
                cur.execute(q.START_READ_ONLY_SQL)
                try:
                    if loc.read == "pk_walk":
                        for ext in rng.extents:
                            self._walk(cur, rng.segment_key, loc, ext.first_block, ext.blocks, tally)
                    elif loc.read == "index_scan":
                        self._whole(cur, rng.segment_key, loc, *q.index_scan_sql(loc), tally)
                    elif loc.read == "full_scan":
                        self._whole(cur, rng.segment_key, loc, q.full_scan_sql(loc), [], tally)
                    else:
                        raise PermanentReadError(f"{rng.segment_key}: unknown read method {loc.read!r}")
                finally:
                    cur.execute("COMMIT")
                handler = delta(handler_before, status(cur, q.HANDLER_SQL))
                innodb = delta(innodb_before, self._server_reads(cur))
        except pymysql.err.MySQLError as exc:
            if exc.args and exc.args[0] == LOCK_WAIT_TIMEOUT and loc.schema_name and loc.table:
                raise self.lock_wait(f"reading {rng.segment_key}", str(loc.schema_name), str(loc.table)) from None
            raise self._drop(map_error(exc, f"reading {rng.segment_key}")) from None
        except ValueError as exc:  # an identifier MySQL cannot quote
            raise PermanentReadError(f"{rng.segment_key}: {exc}") from None
        self._check_handlers(rng.segment_key, loc, handler, tally.rows)
        self.confirmation["pages_planned"] += rng.blocks
        self.confirmation["innodb_pages_read"] += innodb["innodb_pages_read"]
        self.confirmation["innodb_buffer_pool_reads"] += innodb["innodb_buffer_pool_reads"]
        return ReadResult(blocks=rng.blocks, bytes=rng.bytes, seconds=time.monotonic() - started,
                          method=loc.read, details={**tally.to_json(), "handler": handler, "innodb": innodb})

    def lock_wait(self, what: str, schema: str, table: str) -> LockWaitTimeout:
        """``what`` waited ``lock_wait_timeout`` for a lock on ``schema.table``: the error, naming the table and
        who holds the lock as the server says (``sql.MDL_INFO_HOLDERS_SQL``, then ``PS_MDL_HOLDERS_SQL``), else
        the sessions connected to its schema, named as candidates (``SCHEMA_SESSIONS_SQL``)."""
        waited = f"waited {wait_words(self.bounds.lock_whole_seconds)} for a lock (lock_wait_timeout)"
        try:
            relation = q.qualified(schema, table)
        except ValueError:
            relation = repr(f"{schema}.{table}")
        rows: list[tuple] = []
        how = "held by"
        with self.conn.cursor() as cur:
            for statement in (q.MDL_INFO_HOLDERS_SQL, q.PS_MDL_HOLDERS_SQL, q.SCHEMA_SESSIONS_SQL):
                try:
                    cur.execute(self.dialect.bounded(statement.strip(), DIAGNOSIS_SECONDS),
                                (schema,) if statement is q.SCHEMA_SESSIONS_SQL else (schema, table))
                    rows = list(cur.fetchall())
                except pymysql.err.MySQLError:  # no plugin, no performance_schema, no PROCESS: the next way
                    continue
                if rows or statement is q.SCHEMA_SESSIONS_SQL:
                    how = ("candidates (the server names no metadata lock holder: neither the "
                           "METADATA_LOCK_INFO plugin nor performance_schema's metadata_locks)"
                           if statement is q.SCHEMA_SESSIONS_SQL else "held by")
                    break
        if not rows:
            return LockWaitTimeout(f"{what}: {waited} on {relation}; its holder could not be named "
                                   "(released since, or not visible to this user: PROCESS shows every session)")
        return LockWaitTimeout(f"{what}: {waited} on {relation}, {how}: {sessions_words(rows)}")

    def _server_reads(self, cur: Any) -> dict[str, int]:
        """The server's cumulative read counters: InnoDB's, and performance_schema's file bytes when it is on."""
        counters = status(cur, q.INNODB_READS_SQL)
        if self.performance_schema:
            counters.update(status(cur, q.FILE_SUMMARY_SQL))
        return counters

    def _check_handlers(self, key: str, loc: MysqlLocator, handler: Counter[str], rows: int) -> None:
        """A secondary index read must not have scanned the table (``Handler_read_rnd_next``; for the
        clustered index that is its own scan), and a read that counted rows must have moved some handler."""
        if loc.read == "index_scan" and handler["handler_read_rnd_next"] > 0:
            raise PermanentReadError(f"{key}: the server scanned the table ({handler['handler_read_rnd_next']} "
                                     f"Handler_read_rnd_next) instead of reading index {loc.index or loc.key_index}")
        if rows and not any(handler[k] for k in ("handler_read_first", "handler_read_next",
                                                 "handler_read_key", "handler_read_rnd_next")):
            raise PermanentReadError(f"{key}: {rows} rows counted but the session's Handler_read_* counters "
                                     "did not move: the rows did not come from the storage engine")

    def _verify(self, cur: Any, key: str, what: str, statement: str, params: list[Any], loc: MysqlLocator) -> None:
        """EXPLAIN the statement once per segment: the intended index (and ``Using index`` when covering)."""
        if (key, what) in self._checked:
            return
        cur.execute(self.dialect.explain(statement), params)
        row = Explained.of([d[0].lower() for d in cur.description], list(cur.fetchall()))
        chosen, extra, access = row.key, str(row.extra or ""), str(row.type or "")
        if what == "full_scan":
            ok = access == "ALL"
            wanted = "a full table scan"
        else:
            wanted_index = loc.index if what == "index_scan" else loc.key_index
            covering = what == "index_scan" and not loc.range_column
            ok = chosen == wanted_index and (not covering or "Using index" in extra)
            # A whole InnoDB table (no bound): its table scan is the clustered index's scan.
            ok = ok or (what == "pk_walk" and not params and access == "ALL" and loc.engine == "innodb")
            wanted = f"index {wanted_index}" + (" covering (Using index)" if covering else "")
        if not ok:
            raise PermanentReadError(f"{key}: the server would not read {wanted} (EXPLAIN: type={access}, "
                                     f"key={chosen}, Extra={extra or '-'}); this statement cannot warm it")
        self._checked.add((key, what))

    def _whole(self, cur: Any, key: str, loc: MysqlLocator, statement: str, params: list[Any], tally: Tally) -> None:
        self._verify(cur, key, loc.read, statement, params, loc)
        cur.execute(statement, params or None)
        rows, nbytes = cur.fetchone()
        tally.rows += int(rows or 0)
        tally.bytes_read_from_columns += int(nbytes or 0)

    # -- the clustered index walk --------------------------------------------------------
    def _bound_at(self, cur: Any, key: str, loc: MysqlLocator, block: int, tally: Tally) -> Any:
        """The lower bound of the chunk starting at ``block``: None (the start), a key tuple, or END."""
        if block <= 0:
            return None
        known = self._bounds.setdefault(key, {})
        if block in known:
            return known[block]
        start = max((b for b in known if b < block), default=0)
        lower = known.get(start) if start else None
        if lower == END:
            return END
        rows = ordinal(block, loc) - ordinal(start, loc)
        found = self._boundary(cur, key, loc, lower, rows)
        tally.repositioned_rows += rows
        known[block] = found
        return found

    def _boundary(self, cur: Any, key: str, loc: MysqlLocator, lower: Any, rows: int) -> Any:
        statement, params = q.boundary_sql(loc, lower, rows)
        self._verify(cur, key, "boundary", statement, params, loc)
        cur.execute(statement, params)
        row = cur.fetchone()
        return END if row is None else tuple(row)

    def _walk(self, cur: Any, key: str, loc: MysqlLocator, first: int, blocks: int, tally: Tally) -> None:
        lower = self._bound_at(cur, key, loc, first, tally)
        end_block = first + blocks
        if lower == END:  # an earlier chunk read to the end: these planned pages hold no further rows
            tally.end_reached = True
            return
        upper = None if end_block >= int(loc.pages) else \
            self._boundary(cur, key, loc, lower, ordinal(end_block, loc) - ordinal(first, loc))
        statement, params = q.chunk_sql(loc, lower, None if upper == END else upper)
        self._verify(cur, key, "pk_walk", statement, params, loc)
        cur.execute(statement, params)
        rows, nbytes = cur.fetchone()
        tally.rows += int(rows or 0)
        tally.bytes_read_from_columns += int(nbytes or 0)
        self._bounds.setdefault(key, {})[end_block] = END if upper is None else upper
