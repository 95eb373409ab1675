"""MySQL's and MariaDB's hot set (``cutover-prep hotset``): each user table ranked by the rows its I/O
statistics count.

``performance_schema.table_io_waits_summary_by_table`` (``COUNT_READ``: rows read through the table and its
indexes, the figure ``sys.schema_table_statistics`` shows as ``rows_fetched``) when performance_schema is
ON (RDS for MySQL: on by default; RDS for MariaDB: the static parameter ``performance_schema``, applied at a
reboot). Without it, MariaDB's and Percona's user statistics, ``information_schema.TABLE_STATISTICS``
(``ROWS_READ``), when ``userstat`` is ON (a dynamic variable). Neither: one line saying so. The sizes come
from ``information_schema.TABLES`` and the index names from ``information_schema.STATISTICS``; a table's
segments are named as discovery names them (``engines.mysql.discovery``: ``schema.table`` and
``schema.table.index``). The counters run since the server started (or a TRUNCATE of the table).

Module top imports no driver (the registry imports this module).
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

from cutover_prep.engines import keys
from cutover_prep.engines.hotset import (
    SOURCE_STATISTICS,
    HotsetOptions,
    HotsetProblem,
    NoStatistics,
    RelationStats,
    Source,
    Taken,
)
from cutover_prep.engines.mysql.sql import SYSTEM_SCHEMAS

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec

HOTSET_STATUS_SQL = """
SELECT VERSION(), @@performance_schema,
       (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'USERSTAT'),
       DATE_SUB(NOW(), INTERVAL (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
                                 WHERE VARIABLE_NAME = 'UPTIME') SECOND)
"""

HOTSET_PERFORMANCE_SCHEMA_SQL = """
SELECT OBJECT_SCHEMA, OBJECT_NAME, COUNT_READ, COUNT_FETCH, SUM_TIMER_READ
FROM performance_schema.table_io_waits_summary_by_table
WHERE OBJECT_TYPE = 'TABLE' AND COUNT_READ > 0
"""

HOTSET_USERSTAT_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, ROWS_READ FROM information_schema.TABLE_STATISTICS WHERE ROWS_READ > 0
"""

HOTSET_SIZES_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0)
FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE'
"""

HOTSET_INDEX_NAMES_SQL = """
SELECT DISTINCT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS WHERE INDEX_NAME <> 'PRIMARY'
"""

PERFORMANCE_SCHEMA_VIEWS = ["performance_schema.table_io_waits_summary_by_table", "information_schema.TABLES"]
USERSTAT_VIEWS = ["information_schema.TABLE_STATISTICS", "information_schema.TABLES"]


def _rows(conn: Any, statement: str) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(statement)
        return list(cur.fetchall())


def _selected(schema: str, patterns: tuple[str, ...]) -> bool:
    if schema.lower() in SYSTEM_SCHEMAS:
        return False
    return not patterns or any(fnmatch.fnmatchcase(schema, p) for p in patterns)


def collect(conn: Any, label: str, where: str, options: HotsetOptions) -> Taken:
    """The tables with reads on an open connection (pymysql's, or one that answers the same)."""
    version, perf, userstat, started = _rows(conn, HOTSET_STATUS_SQL)[0]
    if int(perf or 0):
        views, figure = PERFORMANCE_SCHEMA_VIEWS, "rows read (COUNT_READ)"
        stats = [(s, t, {"count_read": int(r), "count_fetch": int(f), "sum_timer_read_ps": int(w)})
                 for s, t, r, f, w in _rows(conn, HOTSET_PERFORMANCE_SCHEMA_SQL)]
    elif str(userstat or "").upper() in ("ON", "1"):
        views, figure = USERSTAT_VIEWS, "rows read (ROWS_READ)"
        stats = [(s, t, {"rows_read": int(r)}) for s, t, r in _rows(conn, HOTSET_USERSTAT_SQL)]
    else:
        raise NoStatistics(f"{label} at {where}: performance_schema is OFF and so is userstat: no statistics "
                            "count reads per table (turn on performance_schema, a static parameter applied at a "
                            "reboot, or on MariaDB SET GLOBAL userstat = 1, then let the workload run)")
    sizes = {(s, t): int(b) for s, t, b in _rows(conn, HOTSET_SIZES_SQL)}
    indexes: dict[tuple[str, str], list[str]] = {}
    for schema, table, index in _rows(conn, HOTSET_INDEX_NAMES_SQL):
        indexes.setdefault((schema, table), []).append(index)
    relations = []
    for schema, table, figures in stats:
        if not _selected(schema, options.databases) or (schema, table) not in sizes:
            continue  # a system schema, not selected, or no longer there (a temporary table)
        # named as discovery names its segments (Segment.label: each name quoted where needed, engines.keys)
        own = [(table,), *((table, i) for i in sorted(indexes.get((schema, table), [])))]
        relations.append(RelationStats(
            schema=schema, name=table, kind="table", figures=figures, accesses=next(iter(figures.values())),
            bytes=sizes[(schema, table)], segments=[keys.label((schema, *n), q=keys.MYSQL) for n in own]))
    return Taken(engine="", server=f"{label} at {where} ({version})",
                 sources=[Source(SOURCE_STATISTICS, views, figure, since=f"server start {started}")],
                 relations=relations)


def run(spec: ConnectionSpec, options: HotsetOptions) -> Taken:
    from cutover_prep.engines.mysql.engine import MySQLEngine

    if options.awr:
        raise HotsetProblem("--awr reads Oracle's AWR (DBA_HIST_SEG_STAT); MySQL and MariaDB have none: drop it")
    engine = MySQLEngine.connect(spec, call_timeout_seconds=options.call_timeout_seconds)
    try:
        taken = collect(engine.conn, engine.dialect.label, f"{spec.host}:{spec.port}", options)
        taken.engine = engine.dialect.flavor
    finally:
        engine.close()
    return taken
