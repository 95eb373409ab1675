"""PostgreSQL's hot set (``cutover-prep hotset``): each user table ranked by the blocks its statistics count.

Per selected database (the statistics are per database): ``pg_statio_user_tables`` (heap, index, TOAST and
TOAST-index blocks read from outside shared buffers plus those hit in them: the table's accesses) beside
``pg_stat_user_tables`` (sequential and index scans, as figures), and ``pg_statio_user_indexes`` for the
names of its indexes. A table's segments are named as discovery names them (``Segment.label``:
``db/schema.name``, each name quoted where needed, ``engines.keys``; TOAST as ``name(toast)`` /
``name(toast index)``). Every role may read these views; the counters run since
``pg_stat_database.stats_reset`` (or the cluster's start when never reset).

Module top imports no driver (the registry imports this module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutover_prep.engines import keys
from cutover_prep.engines.hotset import SOURCE_STATISTICS, HotsetOptions, HotsetProblem, RelationStats, Source, Taken

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec

HOTSET_TABLES_SQL = """
SELECT t.schemaname, t.relname,
       COALESCE(t.heap_blks_read, 0), COALESCE(t.heap_blks_hit, 0),
       COALESCE(t.idx_blks_read, 0), COALESCE(t.idx_blks_hit, 0),
       COALESCE(t.toast_blks_read, 0), COALESCE(t.toast_blks_hit, 0),
       COALESCE(t.tidx_blks_read, 0), COALESCE(t.tidx_blks_hit, 0),
       COALESCE(s.seq_scan, 0), COALESCE(s.idx_scan, 0),
       pg_total_relation_size(t.relid), c.reltoastrelid <> 0
FROM pg_catalog.pg_statio_user_tables t
JOIN pg_catalog.pg_stat_user_tables s ON s.relid = t.relid
JOIN pg_catalog.pg_class c ON c.oid = t.relid
"""

HOTSET_INDEXES_SQL = """
SELECT schemaname, relname, indexrelname FROM pg_catalog.pg_statio_user_indexes
"""

HOTSET_SINCE_SQL = """
SELECT COALESCE(stats_reset, pg_postmaster_start_time())::text, current_setting('server_version')
FROM pg_catalog.pg_stat_database WHERE datname = current_database()
"""

VIEWS = ["pg_statio_user_tables", "pg_stat_user_tables", "pg_statio_user_indexes"]
FIGURES = ("heap_blks_read", "heap_blks_hit", "idx_blks_read", "idx_blks_hit", "toast_blks_read", "toast_blks_hit",
           "tidx_blks_read", "tidx_blks_hit", "seq_scan", "idx_scan")
FIGURE = "blocks read + hit (heap, indexes, TOAST)"


def relations_of(conn: Any, database: str) -> list[RelationStats]:
    """One database's tables with their figures (a psycopg connection, or one that answers the same)."""
    indexes: dict[tuple[str, str], list[str]] = {}
    for schema, table, index in conn.execute(HOTSET_INDEXES_SQL).fetchall():
        indexes.setdefault((schema, table), []).append(index)
    out = []
    for schema, name, *numbers in conn.execute(HOTSET_TABLES_SQL).fetchall():
        figures = dict(zip(FIGURES, (int(n) for n in numbers[:10]), strict=True))
        size, has_toast = numbers[10], numbers[11]
        own = [name, *sorted(indexes.get((schema, name), []))]
        if has_toast:
            own += [f"{name}(toast)", f"{name}(toast index)"]
        out.append(RelationStats(
            schema=schema, name=name, kind="table", database=database, figures=figures,
            accesses=sum(v for k, v in figures.items() if k.endswith(("_read", "_hit"))),
            bytes=int(size) if size is not None else None, segments=[keys.label((schema, n), database) for n in own]))
    return out


def run(spec: ConnectionSpec, options: HotsetOptions) -> Taken:
    import psycopg

    from cutover_prep.engines.postgres.engine import PostgresEngine

    if options.awr:
        raise HotsetProblem("--awr reads Oracle's AWR (DBA_HIST_SEG_STAT); PostgreSQL has none: drop it")
    engine = PostgresEngine.connect(spec, call_timeout_seconds=options.call_timeout_seconds)
    try:
        databases = engine.databases(options.databases)
        if not databases:
            raise HotsetProblem(f"no database matches --database {' '.join(options.databases) or '(all)'} "
                                "and admits this user")
        since, version, relations = [], "", []
        for database in databases:
            conn = engine.connection(database)
            reset, version = conn.execute(HOTSET_SINCE_SQL).fetchone()
            since.append(str(reset))
            try:
                relations += relations_of(conn, database)
            except psycopg.errors.LockNotAvailable:  # pg_total_relation_size waited on a held lock
                raise engine.lock_wait(database, f"reading the statistics of {database}") from None
            conn.rollback()
    finally:
        engine.close()
    first = min(since)
    since_text = first if len(since) == 1 else f"{first} (the earliest of {len(since)} databases)"
    return Taken(engine="postgres", server=f"PostgreSQL {version} at {spec.host}:{spec.port}",
                 sources=[Source(SOURCE_STATISTICS, VIEWS, FIGURE, since=f"stats_reset {since_text}")],
                 relations=relations)
