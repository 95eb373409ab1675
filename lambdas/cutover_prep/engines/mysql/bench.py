"""MySQL / MariaDB implementation of the benchmark driver (``engines/bench.py``'s ``BenchDriver``).

- Random reads: single-row primary-key lookups, each one index dive to the first row at or
  after a value of the clustered segment's integer key, spread over its range by the sampled
  block (``block / pages`` of the way from the smallest to the largest key; the same block
  gives the same row, so the cold and warm probes read the same rows). Only clustered
  segments with an integer single-column key are sampled (``block_readable``). IOPS come from
  ``Innodb_data_reads`` (each ``Innodb_buffer_pool_reads`` miss is one such read).
- Sequential reads: the warm-up's own clustered-index walk over the target, with InnoDB's
  read-ahead counters (``Innodb_buffer_pool_read_ahead``, ``_rnd``, ``_evicted``) per point.
  MySQL has no session knob for the read size (``innodb_read_ahead_threshold`` is global and
  needs a privilege RDS's master user lacks), so the sweep is sequential vs random only.
- Counters: ``SHOW GLOBAL STATUS`` (no privilege needed), instance-wide.
- The opt-in write test: a scratch table named for the run (``scratch.name``) in the target
  database, carrying the run's marker as its table COMMENT, written to in its own read-write
  session, capped in size and dropped afterwards; a table of that name without the marker is
  the customer's (``ScratchExists``) and is never touched.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pymysql

from cutover_prep.engines.base import ConnectionSpec, PermanentReadError
from cutover_prep.engines.bench import (
    BenchCapabilities,
    PointSpec,
    ScanResult,
    SweepOptions,
    SweepTarget,
    read_in_order,
)
from cutover_prep.engines.locators import BaseLocator, MysqlLocator
from cutover_prep.engines.mysql import sql as q
from cutover_prep.engines.mysql.engine import MySQLEngine, map_error
from cutover_prep.engines.scratch import Dropped, Scratch, ScratchExists, refuse_drop

SCAN_CALL_PAGES = 512  # 8 MiB of 16 KiB pages per read_range call
WRITE_BATCH_ROWS = 1_000
ROW_BYTES = 240  # what one scratch row takes at least (id, 200-byte pad, row header)
STATUS_KEYS = {"innodb_data_reads": "read_requests", "innodb_data_read": "read_bytes",
               "innodb_data_writes": "write_requests", "innodb_data_written": "write_bytes"}
COUNTERS_SQL = ("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_data_reads', 'Innodb_data_read', "
                "'Innodb_data_writes', 'Innodb_data_written', 'Innodb_pages_read', 'Innodb_buffer_pool_reads', "
                "'Innodb_buffer_pool_read_requests', 'Innodb_buffer_pool_read_ahead', "
                "'Innodb_buffer_pool_read_ahead_rnd', 'Innodb_buffer_pool_read_ahead_evicted', "
                "'Innodb_os_log_written')")
SCRATCH_COMMENT_SQL = "SELECT TABLE_COMMENT FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s"
SCRATCH_SIZE_SQL = ("SELECT COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0) FROM INFORMATION_SCHEMA.TABLES "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s")


class MySQLBench:
    def __init__(self, open_engine: Callable[[], MySQLEngine], database: str) -> None:
        self._open = open_engine
        self.database = database
        self._control = open_engine()
        self.engine = self._control.name

    @classmethod
    def from_spec(cls, spec: ConnectionSpec, database: str, *, call_timeout_seconds: float | None = None) -> MySQLBench:
        return cls(lambda: MySQLEngine.connect(spec, call_timeout_seconds=call_timeout_seconds), database)

    def close(self) -> None:
        self._control.close()

    def capabilities(self) -> BenchCapabilities:
        return {
            "server_version": self._control.dialect.label,
            "read_method": "pk_walk",
            "block_size": self._control.page_size,
            "knobs": {},
            "counters": "SHOW GLOBAL STATUS (Innodb_data_reads, Innodb_buffer_pool_reads, read-ahead)",
            "latency_histogram": None,
            "notes": ["MySQL has no session knob for the read size (innodb_read_ahead_threshold is global): "
                      "the sweep is sequential vs random only",
                      "random reads are single-row primary-key lookups (one index dive each)"],
        }

    def io_size_points(self, options: SweepOptions, target: SweepTarget) -> list[PointSpec]:
        return [PointSpec(point_id="seq-pk-walk", kind="sequential", seconds=options.seconds_per_point)]

    def counters(self) -> dict[str, float]:
        try:
            with self._control.conn.cursor() as cur:
                cur.execute(COUNTERS_SQL)
                raw = {str(k).lower(): float(v) for k, v in cur.fetchall()}
        except pymysql.err.MySQLError as exc:
            raise map_error(exc, "reading SHOW GLOBAL STATUS") from None
        return {**raw, **{STATUS_KEYS[k]: v for k, v in raw.items() if k in STATUS_KEYS}}

    def counts_reads_of(self, spec: PointSpec) -> bool:
        return True  # Innodb_data_reads / Innodb_data_read: every read InnoDB makes of its files

    def latency_histogram(self) -> dict[str, int] | None:
        return None

    def scan(self, spec: PointSpec, target: SweepTarget, deadline: float) -> ScanResult:
        started = time.monotonic()
        read_bytes, calls, passes = read_in_order(self._control.read_range, target, deadline,
                                                  call_blocks=SCAN_CALL_PAGES)
        notes = [f"the target ({target.bytes / 2**20:,.1f} MiB) was read {passes} times; after the first pass "
                 "the buffer pool may hold it"] if passes > 1 else []
        return ScanResult(bytes=read_bytes, calls=calls, seconds=time.monotonic() - started, notes=notes,
                          passes=passes, cached=passes > 1)  # InnoDB's buffer pool or the OS cache

    def random_reader(self) -> RowReader:
        return RowReader(self._open())

    # -- the opt-in write test -------------------------------------------------------------
    def _write_conn(self) -> Any:
        """A session of its own, read-write, for the write test only (the engine's sessions stay read-only)."""
        conn = self._open().conn
        with conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION READ WRITE")
        return conn

    def _scratch_db(self) -> str:
        if not self.database or self.database.lower() in q.SYSTEM_SCHEMAS:
            raise PermanentReadError("the write test creates its scratch table in the target's database: name one "
                                     "that is not a system schema (the DSN's database or the secret's dbname)")
        return self.database

    def write_point(self, spec: PointSpec, deadline: float, scratch: Scratch) -> ScanResult:
        database = self._scratch_db()
        conn = self._write_conn()
        started = time.monotonic()
        before = self.counters().get("innodb_os_log_written", 0.0)
        rows = calls = 0
        rng = random.Random(0)
        notes: list[str] = []
        table = q.qualified(database, scratch.name)
        try:
            if _drop(conn, database, scratch) is Dropped.NOT_OURS:
                raise ScratchExists(f"a table named {database}.{scratch.name} already exists and was not created "
                                    "by this run; it was left untouched (drop or rename it yourself, or use another "
                                    "run_id)")
            with conn.cursor() as cur:
                cur.execute(f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, pad VARCHAR(255)) "
                            "ENGINE=InnoDB COMMENT = %s", (scratch.marker,))
                while time.monotonic() < deadline:
                    if max(rows * ROW_BYTES, _size(cur, database, scratch.name)) >= scratch.max_bytes:
                        notes.append(f"stopped at the size cap of {scratch.max_bytes / 2**20:,.0f} MiB")
                        break
                    if spec.kind == "write_direct" or rows == 0:
                        cur.executemany(f"INSERT INTO {table} (id, pad) VALUES (%s, %s)",  # noqa: S608 - quoted
                                        [(rows + i, "x" * 200) for i in range(1, WRITE_BATCH_ROWS + 1)])
                        rows += WRITE_BATCH_ROWS
                    else:
                        cur.execute(f"UPDATE {table} SET pad = MD5(RAND()) WHERE id = %s",  # noqa: S608 - quoted
                                    (rng.randint(1, rows),))
                    calls += 1
        except pymysql.err.MySQLError as exc:
            raise map_error(exc, f"write test in table {scratch.name}") from None
        finally:
            if _drop(conn, database, scratch) is Dropped.NOT_OURS:
                notes.append(f"table {scratch.name} was not dropped: it does not carry this run's marker")
            conn.close()
        written = self.counters().get("innodb_os_log_written", 0.0) - before
        return ScanResult(bytes=int(written), calls=calls, seconds=time.monotonic() - started,
                          notes=notes + [f"{calls} statements; bytes are redo log bytes written "
                                          "(Innodb_os_log_written, instance-wide); data pages are flushed later"])

    def drop_scratch(self, scratch: Scratch) -> Dropped:
        conn = self._write_conn()
        try:
            return _drop(conn, self._scratch_db(), scratch)
        finally:
            conn.close()


def _size(cur: Any, database: str, name: str) -> int:
    cur.execute(SCRATCH_SIZE_SQL, (database, name))
    row = cur.fetchone()
    return int(row[0]) if row else 0


def _drop(conn: Any, database: str, scratch: Scratch) -> Dropped:
    """Drop the run's scratch table only when its COMMENT is this run's marker."""
    with conn.cursor() as cur:
        cur.execute(SCRATCH_COMMENT_SQL, (database, scratch.name))
        row = cur.fetchone()
        if (refused := refuse_drop(row is not None, row and row[0], scratch)) is not None:
            return refused
        cur.execute(f"DROP TABLE {q.qualified(database, scratch.name)}")
    return Dropped.DROPPED


class RowReader:
    """One session doing single-row primary-key lookups (a sampled block -> one row)."""

    def __init__(self, engine: MySQLEngine) -> None:
        self._engine = engine
        self._ranges: dict[tuple[str, str, str | None], tuple[int, int] | None] = {}

    def _key_range(self, cur: Any, loc: MysqlLocator) -> tuple[int, int] | None:
        key = (loc.schema_name, loc.table, loc.partition)
        if key not in self._ranges:
            cur.execute(q.key_range_sql(loc))
            low, high = cur.fetchone()
            self._ranges[key] = None if low is None else (int(low), int(high))
        return self._ranges[key]

    def read_block(self, locator: BaseLocator, file_id: int, block: int) -> None:
        loc = MysqlLocator.of(locator)
        try:
            with self._engine.conn.cursor() as cur:
                bounds = self._key_range(cur, loc)
                if bounds is None:
                    return  # an empty table: nothing to look up
                low, high = bounds
                value = low + (high - low) * min(block, int(loc.pages)) // max(1, int(loc.pages))
                cur.execute(q.probe_sql(loc), (value,))
                cur.fetchall()
        except pymysql.err.MySQLError as exc:
            raise map_error(exc, f"looking up a row of {loc.table}") from None

    def close(self) -> None:
        self._engine.close()
