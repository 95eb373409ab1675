"""PostgreSQL implementation of the benchmark driver (``engines/bench.py``'s ``BenchDriver``).

IO-size knobs depend on the server version: ``io_combine_limit`` (PostgreSQL 17+) sets
how many blocks a sequential scan's read stream combines into one read, so the sweep
runs a plain sequential scan of the target at each value. Older servers have no such
knob: the sweep is then sequential (the warm-up's read method, in 8 MiB calls) vs
random single blocks only, and the findings say so.

Counters: ``pg_stat_io`` (16+) for reads into shared buffers, plus ``pg_stat_database``
``blks_read`` everywhere. ``pg_prewarm(..., 'read')`` and ``pg_read_binary_file`` read
below shared buffers, so their IO shows in neither: the client's own count (blocks and
calls, timed) is then the measurement, and CloudWatch/Enhanced Monitoring show what the
volume did.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from cutover_prep.engines.base import ConnectionSpec, Extent, ReadRange, ShortRead
from cutover_prep.engines.bench import (
    BenchCapabilities,
    PointSpec,
    ScanResult,
    SweepOptions,
    SweepTarget,
    read_in_order,
)
from cutover_prep.engines.locators import BaseLocator, PgLocator
from cutover_prep.engines.postgres.datafiles import relation_file_base, segment_file
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.engines.postgres.session import map_error
from cutover_prep.engines.scratch import Dropped, Scratch, ScratchExists, refuse_drop

SCAN_CALL_BLOCKS = 1024  # 8 MiB per call with 8 KiB blocks
SCRATCH_TABLE = "writes"
WRITE_BATCH_ROWS = 10_000
SIZE_CHECK_EVERY = 100  # single-row updates between two size checks
# A session's statistics reach the shared counters at a transaction end at most once a second, and
# when its backend exits (before it leaves pg_stat_activity). Counters wait this long, at most, for
# the sessions the driver closed to be gone, so that a point's reads are counted in that point.
EXIT_WAIT_SECONDS = 10.0
EXITED_SQL = "SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)"

SETTINGS_SQL = """
SELECT name, setting, unit, min_val, max_val FROM pg_settings
WHERE name IN ('io_combine_limit', 'effective_io_concurrency', 'track_io_timing', 'server_version')
"""
STAT_IO_COLUMNS_SQL = """
SELECT attname FROM pg_attribute WHERE attrelid = 'pg_catalog.pg_stat_io'::regclass AND attnum > 0
"""


class PostgresBench:
    engine = "postgres"

    def __init__(self, open_engine: Callable[[], PostgresEngine], database: str) -> None:
        self._open = open_engine
        self.database = database
        self._control = open_engine()
        self._settings: dict[str, tuple[str, str | None, str | None, str | None]] | None = None
        self._stat_io_bytes: str | None = None
        self._exiting: set[int] = set()  # backends of closed readers not yet seen gone
        self._exiting_lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: ConnectionSpec, database: str, *, call_timeout_seconds: float | None = None,
                  create_extension: bool = False) -> PostgresBench:
        return cls(lambda: PostgresEngine.connect(spec, call_timeout_seconds=call_timeout_seconds,
                                                  create_extension=create_extension), database)

    @property
    def conn(self) -> psycopg.Connection:
        return self._control.connection(self.database)

    def close(self) -> None:
        self._control.close()

    # -- what this server has ----------------------------------------------------------
    def settings(self) -> dict[str, tuple[str, str | None, str | None, str | None]]:
        if self._settings is None:
            rows = self.conn.execute(SETTINGS_SQL).fetchall()
            self._settings = {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
        return self._settings

    def version_num(self) -> int:
        return self._control.capabilities(self.database).version_num

    def _stat_io_bytes_expr(self) -> str | None:
        """``pg_stat_io`` has ``op_bytes`` (16, 17) or ``read_bytes`` (18+); None before 16."""
        if self._stat_io_bytes is None and self.version_num() >= 160000:
            columns = {r[0] for r in self.conn.execute(STAT_IO_COLUMNS_SQL).fetchall()}
            if {"read_bytes", "write_bytes"} <= columns:
                self._stat_io_bytes = "sum(read_bytes), sum(write_bytes)"
            elif "op_bytes" in columns:
                self._stat_io_bytes = "sum(reads * op_bytes), sum(writes * op_bytes)"
        return self._stat_io_bytes

    def capabilities(self) -> BenchCapabilities:
        caps = self._control.capabilities(self.database)
        settings = self.settings()
        has_combine = "io_combine_limit" in settings
        notes = []
        if not has_combine:
            notes.append(f"PostgreSQL {caps.version_num // 10000} has no io_combine_limit (17+): "
                         "the IO-size sweep is sequential vs random only")
        if caps.method != "tid_range_scan":
            notes.append(f"reads use {caps.method}, below shared buffers: pg_stat_io does not count them, "
                         "so rates come from the client's timing")
        if settings.get("track_io_timing", ("off",))[0] != "on":
            notes.append("track_io_timing is off: pg_stat_io has no read times")
        return {
            "server_version": settings.get("server_version", ("?",))[0],
            "version_num": caps.version_num,
            "read_method": caps.method,
            "block_size": caps.block_size,
            "knobs": {"io_combine_limit": has_combine},
            "io_combine_limit": _combine_kb(settings["io_combine_limit"]) if has_combine else None,
            "counters": "pg_stat_io" if self._stat_io_bytes_expr() else "pg_stat_database",
            "latency_histogram": None,
            "notes": notes,
        }

    def io_size_points(self, options: SweepOptions, target: SweepTarget) -> list[PointSpec]:
        caps = self._control.capabilities(self.database)
        points = [PointSpec(point_id=f"seq-{caps.method.replace('_', '-')}", kind="sequential",
                            seconds=options.seconds_per_point)]
        combine = self.settings().get("io_combine_limit")
        if combine:
            max_kb = int(combine[3] or 32) * caps.block_size // 1024
            for kb in options.io_combine_kb_values:
                if caps.block_size // 1024 <= kb <= max_kb:
                    points.append(PointSpec(point_id=f"combine-{kb:04d}k", kind="sequential",
                                            seconds=options.seconds_per_point, io_size_kb=kb,
                                            knobs={"io_combine_limit": f"{kb}kB"}))
        return points

    # -- counters ----------------------------------------------------------------------
    def _closed(self, pids: list[int]) -> None:
        with self._exiting_lock:
            self._exiting.update(pids)

    def _await_exits(self) -> None:
        """Wait (at most EXIT_WAIT_SECONDS) until the backends of the closed readers have exited:
        their last reads are in the counters from then on."""
        with self._exiting_lock:
            pids, self._exiting = list(self._exiting), set()
        deadline = time.monotonic() + EXIT_WAIT_SECONDS
        while pids and time.monotonic() < deadline:
            pids = [r[0] for r in self.conn.execute(EXITED_SQL, (pids,)).fetchall()]
            if pids:
                time.sleep(0.02)

    def counters(self) -> dict[str, float]:
        self._await_exits()
        row = self.conn.execute(
            "SELECT sum(blks_read), sum(blks_hit) FROM pg_stat_database").fetchone()
        out = {"blks_read": float(row[0] or 0), "blks_hit": float(row[1] or 0)}
        expr = self._stat_io_bytes_expr()
        if expr:
            io = self.conn.execute(
                f"SELECT sum(reads), {expr}, sum(writes), sum(read_time) FROM pg_stat_io"  # noqa: S608 - expr is one of two constants
            ).fetchone()
            out.update(read_requests=float(io[0] or 0), read_bytes=float(io[1] or 0),
                       write_requests=float(io[3] or 0), write_bytes=float(io[2] or 0),
                       read_time_ms=float(io[4] or 0))
        return out

    def counts_reads_of(self, spec: PointSpec) -> bool:
        """pg_stat_io counts reads through shared buffers: TID range scans and the io_combine_limit
        points' sequential scans; pg_prewarm and pg_read_binary_file read below them."""
        return "io_combine_limit" in spec.knobs or self._control.capabilities(self.database).method == "tid_range_scan"

    def latency_histogram(self) -> dict[str, int] | None:
        return None

    # -- measuring ---------------------------------------------------------------------
    def scan(self, spec: PointSpec, target: SweepTarget, deadline: float) -> ScanResult:
        if "io_combine_limit" in spec.knobs:
            return self._seq_scan(spec, target, deadline)
        started = time.monotonic()
        per_block = self._control.capabilities(self.database).method != "pg_read_binary_file"
        read_bytes, calls, passes = read_in_order(  # pg_prewarm and TID scans read block by block
            self._control.read_range, target, deadline, call_blocks=SCAN_CALL_BLOCKS,
            calls_of=lambda result: result.blocks if per_block else 1)
        notes = [f"the target ({target.bytes / 2**20:,.1f} MiB) was read {passes} times"] if passes > 1 else []
        return ScanResult(bytes=read_bytes, calls=calls, seconds=time.monotonic() - started, notes=notes,
                          passes=passes, cached=passes > 1)  # shared buffers or the OS page cache


    def _seq_scan(self, spec: PointSpec, target: SweepTarget, deadline: float) -> ScanResult:
        """A plain sequential scan with ``io_combine_limit`` set for this session, cut at the deadline."""
        loc = PgLocator.of(target.locator)
        conn = self.conn
        started = time.monotonic()
        timeout_ms = max(1, int((deadline - started) * 1000))
        notes: list[str] = []
        try:
            conn.execute(sql.SQL("SET io_combine_limit = {}").format(sql.Literal(spec.knobs["io_combine_limit"])))
            conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(timeout_ms)))
            table = sql.Identifier(str(loc.schema_name), str(loc.relname))
            conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table))
            notes.append("the whole table was scanned before the point's time was up")
        except psycopg.errors.QueryCanceled:
            pass  # the deadline: this is how a point ends
        except psycopg.Error as exc:
            raise map_error(exc, f"scanning {target.segment_key}") from None
        finally:
            conn.execute("RESET io_combine_limit")
            conn.execute("RESET statement_timeout")
        return ScanResult(bytes=0, calls=1, seconds=time.monotonic() - started,
                          notes=notes + ["bytes and requests of this point come from pg_stat_io"])

    def random_reader(self) -> _BlockReader:
        return _BlockReader(self._open(), self.database, on_close=self._closed)

    def write_point(self, spec: PointSpec, deadline: float, scratch: Scratch) -> ScanResult:
        """Opt-in write test in the run's own scratch schema, capped in size, dropped afterwards.

        The schema is created with this run's marker in one transaction; a schema of that name
        without the marker is the customer's: ``ScratchExists``, and it is never touched."""
        conn = self.conn
        started = time.monotonic()
        rows = calls = 0
        rng = random.Random(0)
        wal_before = _wal_bytes(conn)
        notes: list[str] = []
        if drop_scratch(conn, scratch) is Dropped.NOT_EMPTY:  # ours, from a killed attempt of this run
            raise ScratchExists(f"scratch schema {scratch.name} of this run holds objects it did not create; "
                                "it was left as it is")
        table = sql.Identifier(scratch.name, SCRATCH_TABLE)
        try:
            _create_scratch(conn, scratch)
            while time.monotonic() < deadline:
                if (spec.kind == "write_direct" or calls % SIZE_CHECK_EVERY == 0) \
                        and _scratch_bytes(conn, scratch) >= scratch.max_bytes:
                    notes.append(f"stopped at the size cap of {scratch.max_bytes / 2**20:,.0f} MiB")
                    break
                with conn.transaction():
                    conn.execute("SET TRANSACTION READ WRITE")
                    if spec.kind == "write_direct" or rows == 0:
                        conn.execute(sql.SQL(
                            "INSERT INTO {} SELECT g, repeat('x', 200) FROM generate_series(%s::bigint, %s::bigint) g"
                        ).format(table), (rows + 1, rows + WRITE_BATCH_ROWS))
                        rows += WRITE_BATCH_ROWS
                    else:
                        conn.execute(sql.SQL("UPDATE {} SET pad = md5(random()::text) WHERE id = %s").format(table),
                                     (rng.randint(1, rows),))
                calls += 1
        except psycopg.Error as exc:
            raise map_error(exc, f"write test in schema {scratch.name}") from None
        finally:
            left = drop_scratch(conn, scratch)
            if left is Dropped.NOT_EMPTY:
                notes.append(f"scratch schema {scratch.name} was not dropped: it holds objects the run did not create")
        wal = (_wal_bytes(conn) - wal_before) if wal_before is not None else 0
        return ScanResult(bytes=wal, calls=calls, seconds=time.monotonic() - started,
                          notes=notes + [f"{calls} transactions; bytes are WAL bytes written (pg_stat_wal)"])

    def drop_scratch(self, scratch: Scratch) -> Dropped:
        return drop_scratch(self.conn, scratch)


def _create_scratch(conn: psycopg.Connection, scratch: Scratch) -> None:
    schema, table = sql.Identifier(scratch.name), sql.Identifier(scratch.name, SCRATCH_TABLE)
    try:
        with conn.transaction():
            conn.execute("SET TRANSACTION READ WRITE")
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
            conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(schema, sql.Literal(scratch.marker)))
            conn.execute(sql.SQL("CREATE TABLE {} (id bigint PRIMARY KEY, pad text)").format(table))
            conn.execute(sql.SQL("COMMENT ON TABLE {} IS {}").format(table, sql.Literal(scratch.marker)))
    except psycopg.errors.DuplicateSchema:
        raise ScratchExists(f"a schema named {scratch.name} already exists and was not created by this run; "
                            "it was left untouched (drop or rename it yourself, or use another run_id)") from None


def _scratch_bytes(conn: psycopg.Connection, scratch: Scratch) -> int:
    return int(conn.execute("SELECT COALESCE(pg_total_relation_size(to_regclass(%s)), 0)",
                            (f'"{scratch.name}"."{SCRATCH_TABLE}"',)).fetchone()[0])


def drop_scratch(conn: psycopg.Connection, scratch: Scratch) -> Dropped:
    """Drop the run's scratch schema, only if it carries the run's marker, and only what the run created."""
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()
    with conn.transaction():
        conn.execute("SET TRANSACTION READ WRITE")
        row = conn.execute("SELECT oid, obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s",
                           (scratch.name,)).fetchone()
        if (refused := refuse_drop(row is not None, row and row[1], scratch)) is not None:
            return refused
        ours = conn.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = %s AND c.relkind = 'r' "
            "AND obj_description(c.oid, 'pg_class') = %s", (row[0], scratch.marker)).fetchall()
        for (relname,) in ours:
            conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(scratch.name, relname)))
        others = conn.execute("SELECT count(*) FROM pg_class WHERE relnamespace = %s", (row[0],)).fetchone()[0]
        if others:
            return Dropped.NOT_EMPTY
        conn.execute(sql.SQL("DROP SCHEMA {} RESTRICT").format(sql.Identifier(scratch.name)))
    return Dropped.DROPPED


def _wal_bytes(conn: psycopg.Connection) -> int | None:
    try:
        return int(conn.execute("SELECT wal_bytes FROM pg_stat_wal").fetchone()[0])
    except psycopg.Error:
        return None


def _combine_kb(setting: tuple[str, str | None, str | None, str | None]) -> int:
    value, unit = int(setting[0]), setting[1]
    return value * 8 if unit == "8kB" else value


# A read timed by the server's own clock, in the statement that reads: ``t0`` is taken in the innermost
# subquery, the read is evaluated in the middle one (it needs ``t0``'s row first) and the end in the outer
# projection (it needs the read's row): the order is the data's, not the evaluator's. OFFSET 0 keeps the
# planner from flattening the subqueries (their volatile functions would keep it from that anyway).
TIMED_READ_SQL = ("SELECT r.n, extract(epoch FROM clock_timestamp() - r.t0) FROM "
                  "(SELECT a.t0, {read} AS n FROM (SELECT clock_timestamp() AS t0 OFFSET 0) a OFFSET 0) r")


def timed_read(conn: psycopg.Connection, read: sql.Composable, params: tuple[Any, ...]) -> tuple[int, float]:
    """Run ``read`` (an expression reading blocks, e.g. ``pg_prewarm(...)``) and time it on the server:
    ``(its value, the seconds the server took to evaluate it)``. What the client's clock adds (the network, the
    driver, a client process starved of CPU or its interpreter's lock) is not in it."""
    row = conn.execute(sql.SQL(TIMED_READ_SQL).format(read=read), params).fetchone()
    return int(row[0]), float(row[1])


class _BlockReader:
    """One session reading single blocks by the database's read method.

    ``read_block`` returns the seconds the server measured for the read (``timed_read``) with pg_prewarm and
    pg_read_binary_file, so a probe's latency is the database's and the storage's, not the client's; None with a
    TID range scan (an aggregate over a scan: timed by the client)."""

    def __init__(self, engine: PostgresEngine, database: str,
                 on_close: Callable[[list[int]], None] | None = None) -> None:
        self._engine = engine
        self._database = database
        self._paths: dict[tuple[str, int, str], str] = {}
        self._on_close = on_close

    def read_block(self, locator: BaseLocator, file_id: int, block: int) -> float | None:
        loc = PgLocator.of(locator)
        database = loc.database or self._database
        caps = self._engine.capabilities(database)
        method = self._engine.read_method(database)
        if method == "tid_range_scan":
            self._engine.read_range(ReadRange("random", locator, (Extent(file_id, block, 1),), caps.block_size))
            return None
        conn = self._engine.connection(database)
        try:
            if method == "pg_prewarm":
                got, seconds = timed_read(conn, *self._engine.prewarm_call(caps, loc, block, block))
                if got < 1:
                    raise ShortRead(f"reading block {block} of {loc.relname}: pg_prewarm read nothing")
                return seconds
            key = (database, int(loc.oid or 0), str(loc.fork))
            if key not in self._paths:
                self._paths[key] = relation_file_base(conn, loc)
            path, in_file = segment_file(self._paths[key], block, caps.segment_bytes // caps.block_size)
            _, seconds = timed_read(conn, sql.SQL("length(pg_read_binary_file(%s, %s, %s))"),
                                    (path, in_file * caps.block_size, caps.block_size))
            return seconds
        except psycopg.errors.InvalidParameterValue as exc:  # pg_prewarm: a block past the end
            raise ShortRead(f"reading block {block} of {loc.relname}: "
                            f"{str(exc).strip().splitlines()[0]}") from None
        except psycopg.Error as exc:
            raise map_error(exc, f"reading block {block} of {loc.relname}") from None

    def close(self) -> None:
        pids = self._engine.backend_pids()
        self._engine.close()
        if self._on_close is not None:
            self._on_close(pids)
