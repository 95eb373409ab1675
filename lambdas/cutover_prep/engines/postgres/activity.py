"""The application's reads on PostgreSQL (the warm-up's yield signal, ``engines.activity``).

- 16 and later: ``pg_stat_io``, client backends' relation reads and read time (autovacuum, the
  checkpointer and other background processes are not the application);
- before: ``pg_stat_database``'s ``blks_read`` and ``blk_read_time`` over every database.

Read time is counted only with ``track_io_timing`` on (``read_ms`` None otherwise). The warm-up's own
reads are not in either view when it reads with pg_prewarm's 'read' mode or ``pg_read_binary_file``
(neither passes through shared buffers); the TID range scan (and a hot set's 'buffer' reads) do, and are
then subtracted by the caller (``own_included``). A session reads the counters as of the last flush of each
backend (PostgreSQL 15+: at most a second behind).
"""

from __future__ import annotations

from typing import Any

from cutover_prep.engines.activity import Activity

IO_SQL = ("SELECT coalesce(sum(reads), 0)::bigint, sum(read_time)::float8, "
          "current_setting('track_io_timing')::bool, current_setting('block_size')::int "
          "FROM pg_stat_io WHERE backend_type = 'client backend' AND object = 'relation'")
DATABASE_SQL = ("SELECT coalesce(sum(blks_read), 0)::bigint, sum(blk_read_time)::float8, "
                "current_setting('track_io_timing')::bool, current_setting('block_size')::int FROM pg_stat_database")
BUFFERED_METHODS = ("tid_range_scan",)
STARTED_SQL = ("SELECT to_char(pg_postmaster_start_time() AT TIME ZONE 'UTC', "
               "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')")


def read(engine: Any) -> Activity:
    """The counters, on ``engine``'s session to its target database."""
    conn = engine.connection(engine._spec.database)  # noqa: SLF001 - the engine of this folder
    io = conn.info.server_version >= 160000
    conn.execute("SELECT pg_stat_clear_snapshot()")  # the counters as of now, not of this session's snapshot
    reads, read_ms, timing, block_size = conn.execute(IO_SQL if io else DATABASE_SQL).fetchone()
    own = any(m in BUFFERED_METHODS for m in engine.read_methods().values())
    return Activity(reads=int(reads), read_ms=float(read_ms or 0.0) if timing else None, block_size=int(block_size),
                    own_included=own, source="pg_stat_io" if io else "pg_stat_database")


def started(engine: Any) -> str:
    """When the server last started (``pg_postmaster_start_time()``, UTC, ISO 8601): a restart moves it."""
    conn = engine.connection(engine._spec.database)  # noqa: SLF001 - the engine of this folder
    return str(conn.execute(STARTED_SQL).fetchone()[0])
