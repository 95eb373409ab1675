"""The application's reads on MySQL and MariaDB (the warm-up's yield signal, ``engines.activity``).

- performance_schema on: the foreground threads' waits on InnoDB data files
  (``events_waits_summary_by_thread_by_event_name``, ``wait/io/file/innodb/innodb_data_file``: a user
  thread waits there for the pages it misses; writes are the page cleaners', background threads), less the
  warm-up's own sessions (connection attribute ``program_name`` = ``cutover-prep``): their count and time;
- off (MariaDB's default): ``Innodb_data_reads`` with the warm-up's own reads in it (the caller subtracts its
  pages, ``own_included``) and no time (``read_ms`` None).

A thread's summary leaves the per-thread view when its session ends: a window in which application
sessions disconnected counts fewer reads (never negative: the caller floors the difference at 0).
"""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Any

from cutover_prep.engines.activity import Activity

PROGRAM_NAME = "cutover-prep"  # engines/mysql/engine.py's connection attribute
WAITS_SQL = (
    "SELECT coalesce(sum(w.COUNT_STAR), 0), coalesce(sum(w.SUM_TIMER_WAIT), 0) / 1e9 "
    "FROM performance_schema.events_waits_summary_by_thread_by_event_name w "
    "JOIN performance_schema.threads t ON t.THREAD_ID = w.THREAD_ID "
    "WHERE w.EVENT_NAME = 'wait/io/file/innodb/innodb_data_file' AND t.TYPE = 'FOREGROUND' "
    "AND NOT EXISTS (SELECT 1 FROM performance_schema.session_connect_attrs a "
    "WHERE a.PROCESSLIST_ID = t.PROCESSLIST_ID AND a.ATTR_NAME = 'program_name' AND a.ATTR_VALUE = %s)")
STATUS_SQL = "SHOW GLOBAL STATUS LIKE 'Innodb_data_reads'"
UPTIME_SQL = "SHOW GLOBAL STATUS LIKE 'Uptime'"


def read(engine: Any) -> Activity:
    """The counters, on ``engine``'s session."""
    engine._live()  # noqa: SLF001 - the engine of this folder: a dropped session is opened again
    with engine.conn.cursor() as cur:
        if engine.performance_schema:
            cur.execute(WAITS_SQL, (PROGRAM_NAME,))
            count, ms = cur.fetchone()
            return Activity(reads=int(count), read_ms=float(ms), block_size=int(engine.page_size),
                            own_included=False, source="performance_schema")
        cur.execute(STATUS_SQL)
        row = cur.fetchone()
    return Activity(reads=int(row[1]), read_ms=None, block_size=int(engine.page_size), own_included=True,
                    source="Innodb_data_reads")


def started(engine: Any) -> str:
    """When the server last started: the server's UTC clock less its ``Uptime`` (whole seconds, so two readings of
    one start may differ by a second), ISO 8601."""
    engine._live()  # noqa: SLF001 - the engine of this folder
    with engine.conn.cursor() as cur:
        cur.execute(UPTIME_SQL)
        uptime = int(cur.fetchone()[1])
        cur.execute("SELECT UTC_TIMESTAMP()")
        now = cur.fetchone()[0]
    return (now.replace(tzinfo=UTC) - timedelta(seconds=uptime)).isoformat().replace("+00:00", "Z")
