"""MySQL's and MariaDB's hot set (``cutover-prep hotset``): each user table ranked by the rows its I/O
statistics count.

``performance_schema.table_io_waits_summary_by_table`` (``COUNT_READ``: rows read through the table and its
indexes, the figure ``sys.schema_table_statistics`` shows as ``rows_fetched``) when performance_schema is
ON (RDS for MySQL: on by default; RDS for MariaDB: the static parameter ``performance_schema``, applied at a
reboot). Without it, MariaDB's and Percona's user statistics, ``information_schema.TABLE_STATISTICS``
(``ROWS_READ``), when ``userstat`` is ON (a dynamic variable). Neither: one line saying so and offering the
fallback that needs neither (issue 33): what the InnoDB buffer pool holds, the pages each table has there, from
``INFORMATION_SCHEMA.INNODB_BUFFER_PAGE`` (``--buffer-pool``: read-only, PROCESS; a scan of the pool's page list,
which the vendors warn weighs on a large pool) or from the ``ib_buffer_pool`` file InnoDB writes at shutdown
(``innodb_buffer_pool_dump_at_shutdown``, on by default) or on ``innodb_buffer_pool_dump_now``
(``--buffer-pool-file``: ``space,page`` lines, mapped to tables by the data dictionary's tablespace ids; nothing
is asked of the server but that mapping, and never a dump). The sizes come
from ``information_schema.TABLES`` and the index names from ``information_schema.STATISTICS``; a table's
segments are named as discovery names them (``engines.mysql.discovery``: ``schema.table`` and
``schema.table.index``). The counters run since the server started (or a TRUNCATE of the table).

Module top imports no driver (the registry imports this module).
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from pathlib import Path
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
from cutover_prep.engines.mysql.sql import SYSTEM_SCHEMAS, Dialect, decode_filename, split_file_name

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

# every page of each table in the pool (grouped by the server: one row per table or partition)
HOTSET_BUFFER_PAGE_SQL = """
SELECT TABLE_NAME, COUNT(*) FROM information_schema.INNODB_BUFFER_PAGE WHERE TABLE_NAME IS NOT NULL GROUP BY TABLE_NAME
"""
# tablespace id -> db/table[#P#partition] as the files are named (an ib_buffer_pool dump names pages by space id)
HOTSET_SPACES_SQL = {"mariadb": "SELECT SPACE, NAME FROM information_schema.INNODB_SYS_TABLES",
                     "mysql": "SELECT SPACE, NAME FROM information_schema.INNODB_TABLES"}
BUFFER_PAGE_VIEWS = ["information_schema.INNODB_BUFFER_PAGE", "information_schema.TABLES"]
DUMP_VIEWS = ["information_schema.INNODB_SYS_TABLES (MySQL 8: INNODB_TABLES)", "information_schema.TABLES"]
NEITHER = ("performance_schema is OFF and so is userstat: no statistics count reads per table. Rank by what the "
           "InnoDB buffer pool holds instead: --buffer-pool (reads INFORMATION_SCHEMA.INNODB_BUFFER_PAGE, PROCESS; "
           "a scan of the pool, heavy on a large one), --buffer-pool-file FILE (the ib_buffer_pool file the "
           "server writes at shutdown) or --buffer-pool-dump-now (asks the server to write it now: "
           "innodb_buffer_pool_dump_now, a server action); or turn on "
           "performance_schema (a static parameter applied at a reboot) or, on MariaDB, SET GLOBAL userstat = 1, "
           "then let the workload run")
_QUOTED = re.compile(r"`((?:[^`]|``)*)`\.`((?:[^`]|``)*)`")

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
    since = f"server start {started}"
    if options.buffer_pool_file:
        views = [f"ib_buffer_pool dump {Path(options.buffer_pool_file).name}", *DUMP_VIEWS]
        figure, since = "pages in the InnoDB buffer pool (ib_buffer_pool dump)", "the dump"
        stats = _dump_pages(conn, options.buffer_pool_file, Dialect.from_version(str(version)).flavor)
    elif options.buffer_pool:
        views, figure = BUFFER_PAGE_VIEWS, "pages in the InnoDB buffer pool (INNODB_BUFFER_PAGE)"
        stats = _buffer_pool_pages(conn)
        since = "now (what the pool holds)"
    elif int(perf or 0):
        views, figure = PERFORMANCE_SCHEMA_VIEWS, "rows read (COUNT_READ)"
        stats = [(s, t, {"count_read": int(r), "count_fetch": int(f), "sum_timer_read_ps": int(w)})
                 for s, t, r, f, w in _rows(conn, HOTSET_PERFORMANCE_SCHEMA_SQL)]
    elif str(userstat or "").upper() in ("ON", "1"):
        views, figure = USERSTAT_VIEWS, "rows read (ROWS_READ)"
        stats = [(s, t, {"rows_read": int(r)}) for s, t, r in _rows(conn, HOTSET_USERSTAT_SQL)]
    else:
        raise NoStatistics(f"{label} at {where}: {NEITHER}")
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
                 sources=[Source(SOURCE_STATISTICS, views, figure, since=since)],
                 relations=relations)


def buffer_page_table(name: str) -> tuple[str, str] | None:
    """(schema, table) of an INNODB_BUFFER_PAGE ``TABLE_NAME`` (`` `db`.`t` ``, a backtick doubled inside, MariaDB's
    `` /* Partition `p` */`` after it); None for InnoDB's own pages (``SYS_TABLES`` ...)."""
    found = _QUOTED.match(str(name))
    return (found.group(1).replace("``", "`"), found.group(2).replace("``", "`")) if found else None


def _buffer_pool_pages(conn: Any) -> list[tuple[str, str, dict[str, int]]]:
    pages: Counter[tuple[str, str]] = Counter()
    for name, count in _rows(conn, HOTSET_BUFFER_PAGE_SQL):
        table = buffer_page_table(name)
        if table is not None:
            pages[table] += int(count)
    return [(s, t, {"buffer_pool_pages": n}) for (s, t), n in pages.items()]


def _dump_pages(conn: Any, path: str, flavor: str) -> list[tuple[str, str, dict[str, int]]]:
    """Pages per table of an ib_buffer_pool dump (``space,page`` lines), through the dictionary's space ids."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise HotsetProblem(f"--buffer-pool-file {path} cannot be read: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
    per_space: Counter[int] = Counter()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        found = re.fullmatch(r"\s*(\d+)\s*,\s*(\d+)\s*", line)
        if found is None:
            raise HotsetProblem(f"--buffer-pool-file {path}: line {number} is not 'space,page' as an ib_buffer_pool "
                                f"dump writes it: {line[:60]!r}")
        per_space[int(found.group(1))] += 1
    if not per_space:
        raise HotsetProblem(f"--buffer-pool-file {path}: no page in it (an ib_buffer_pool dump names one "
                            "'space,page' a line)")
    spaces = {int(space): str(name) for space, name in _rows(conn, HOTSET_SPACES_SQL[flavor])}
    pages: Counter[tuple[str, str]] = Counter()
    for space, count in per_space.items():
        name = spaces.get(space)
        if name is None or "/" not in name:
            continue  # the system tablespace, an undo tablespace, or a table dropped since the dump
        db, _, rest = name.partition("/")
        pages[(decode_filename(db), decode_filename(split_file_name(rest)[0]))] += count
    return [(s, t, {"buffer_pool_pages": n}) for (s, t), n in pages.items()]


DUMP_STATUS_SQL = "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_dump_status'"
DUMP_FILE_SQL = "SELECT @@datadir, @@innodb_buffer_pool_filename, @@basedir"
DUMP_NOW_SQL = "SET GLOBAL innodb_buffer_pool_dump_now = ON"
RDS_DUMP_NOW_SQL = "CALL mysql.rds_innodb_buffer_pool_dump_now()"  # RDS for MySQL / MariaDB: no SUPER there


def _dump_status(conn: Any) -> Any:
    """``Innodb_buffer_pool_dump_status`` (None: the server did not list it)."""
    return next((value for name, value in _rows(conn, DUMP_STATUS_SQL) if name == "Innodb_buffer_pool_dump_status"),
                None)


def dump_now(conn: Any, timeout_seconds: float, sleep: Any = None) -> str:
    """Ask the server to write its buffer pool dump now (``--buffer-pool-dump-now``: a server action, taken only
    when the user asks for it), wait until its status says the dump completed, and give the file's path as the
    server names it (``@@datadir`` + ``innodb_buffer_pool_filename``)."""
    import time

    import pymysql

    sleep = sleep or time.sleep
    datadir, name, basedir = _rows(conn, DUMP_FILE_SQL)[0]
    path = str(name) if str(name).startswith("/") else str(Path(str(datadir)) / str(name))
    before = _dump_status(conn)
    rds = str(basedir or "").startswith("/rdsdbbin")
    try:
        _rows(conn, RDS_DUMP_NOW_SQL if rds else DUMP_NOW_SQL)
    except pymysql.err.MySQLError as exc:
        raise HotsetProblem(f"--buffer-pool-dump-now: the server refused {RDS_DUMP_NOW_SQL if rds else DUMP_NOW_SQL} "
                            f"({' '.join(str(exc).split())}); it needs SUPER (MySQL 8: SYSTEM_VARIABLES_ADMIN); or "
                            "give a dump the server wrote at shutdown with --buffer-pool-file") from None
    deadline = time.monotonic() + timeout_seconds
    while True:
        status = str(_dump_status(conn) or "")
        if "completed" in status.lower() and status != before:
            return path
        if time.monotonic() > deadline:
            raise HotsetProblem(f"--buffer-pool-dump-now: the dump did not complete in {timeout_seconds:g} s "
                                f"(Innodb_buffer_pool_dump_status: {status or 'empty'}); raise --timeout")
        sleep(0.2)


def run(spec: ConnectionSpec, options: HotsetOptions) -> Taken:
    from dataclasses import replace

    from cutover_prep.engines.mysql.engine import MySQLEngine

    if options.awr:
        raise HotsetProblem("--awr reads Oracle's AWR (DBA_HIST_SEG_STAT); MySQL and MariaDB have none: drop it")
    engine = MySQLEngine.connect(spec, call_timeout_seconds=options.call_timeout_seconds)
    try:
        if options.buffer_pool_dump_now:
            path = dump_now(engine.conn, options.call_timeout_seconds)
            if not Path(path).is_file():
                raise HotsetProblem(f"the server wrote its buffer pool dump to {path} on its own host, which this "
                                    "machine cannot read: copy it here and run again with --buffer-pool-file FILE "
                                    "(on RDS the file stays on the instance: use --buffer-pool)")
            options = replace(options, buffer_pool_file=path)
        taken = collect(engine.conn, engine.dialect.label, f"{spec.host}:{spec.port}", options)
        taken.engine = engine.dialect.flavor
    finally:
        engine.close()
    return taken
