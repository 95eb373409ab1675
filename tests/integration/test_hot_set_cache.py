"""The hot set into shared buffers (issue 23 §1): a range whose locator says ``cache`` is read with
pg_prewarm's ``'buffer'`` mode, any other with ``'read'``.

PostgreSQL's documentation of pg_prewarm (https://www.postgresql.org/docs/current/pgprewarm.html):
"read reads the requested range of blocks; unlike prefetch, this is synchronous ... buffer reads the
requested range of blocks into the database buffer cache." Judges: the server's own counters. A block read
through the buffer manager is counted in ``pg_statio_all_tables`` (``heap_blks_read + heap_blks_hit``); a
``'read'`` goes around shared buffers and is not (decision 44). ``pg_buffercache`` then shows the blocks in
shared buffers. The engine's session flushes its statistics when it goes idle after
``pg_stat_force_next_flush()`` (PostgreSQL 15+), so nothing here waits on a timer."""

from __future__ import annotations

from dataclasses import replace

import psycopg
import pytest

from cutover_prep.engines import DiscoveryOptions
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.warmup.planning import PlanOptions, plan_units
from tests.conftest import conninfo
from tests.integration.test_postgres_engine import _local_server_has_no_tls, prewarm_installed  # noqa: F401

pytestmark = pytest.mark.postgres

FETCHED = ("SELECT coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0) FROM pg_statio_all_tables "
           "WHERE relid = 'hr.employees'::regclass")


def _main_fork_range(engine: PostgresEngine, database: str):
    segments = engine.discover(DiscoveryOptions(databases=(database,)))
    units = plan_units(segments, PlanOptions(unit_bytes=2**30)).units
    return next(r for u in units for r in u.ranges
                if r.segment_key.startswith(f"{database}/hr.employees#") and r.locator.to_json().get("fork") == "main"
                and r.locator.to_json().get("relkind", "r") == "r" and r.blocks > 0 and "idx" not in r.segment_key)


def _fetched(spec) -> int:
    with psycopg.connect(conninfo(spec), autocommit=True) as conn:
        conn.execute("SET stats_fetch_consistency = none")
        return int(conn.execute(FETCHED).fetchone()[0])


def _read(engine: PostgresEngine, rng, database: str) -> int:
    blocks = engine.read_range(rng).blocks
    engine.connection(database).execute("SELECT pg_stat_force_next_flush()")  # flushed as the session idles
    engine.connection(database).execute("SELECT 1")
    return blocks


def test_a_cache_range_is_read_into_shared_buffers_and_a_plain_one_around_them(prewarm_installed, sample_db):  # noqa: F811
    engine = PostgresEngine.connect(sample_db)
    try:
        rng = _main_fork_range(engine, sample_db.database)
        assert engine.capabilities(sample_db.database).method == "pg_prewarm"
        before = _fetched(sample_db)
        assert _read(engine, rng, sample_db.database) == rng.blocks
        assert _fetched(sample_db) == before  # 'read': not through shared buffers
        cached = replace(rng, locator=rng.locator.with_fields(cache=True))
        assert _read(engine, cached, sample_db.database) == rng.blocks  # the server's count, as before
        assert _fetched(sample_db) - before == rng.blocks  # 'buffer': every block through shared buffers
        with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_buffercache'").fetchone():
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
                try:
                    held = conn.execute(
                        "SELECT count(DISTINCT relblocknumber) FROM pg_buffercache WHERE relfilenode = "
                        "pg_relation_filenode('hr.employees') AND relforknumber = 0 AND reldatabase = "
                        "(SELECT oid FROM pg_database WHERE datname = current_database())").fetchone()[0]
                finally:
                    conn.execute("DROP EXTENSION pg_buffercache")
                assert held == rng.blocks
        assert engine.cache_bytes() == _shared_buffers(sample_db)
    finally:
        engine.close()


def _shared_buffers(spec) -> int:
    """shared_buffers from pg_settings: its value times its unit (8kB blocks)."""
    with psycopg.connect(conninfo(spec)) as conn:
        setting, unit = conn.execute("SELECT setting::bigint, unit FROM pg_settings "
                                     "WHERE name = 'shared_buffers'").fetchone()
    assert unit == "8kB"
    return setting * 8192


def test_the_planner_tells_indexes_from_tables_as_pg_class_does(sample_db):
    """``planning.cache_hot_set`` puts what fits of a hot set into shared buffers, the indexes first; it tells an
    index by the kind its segment key ends with. The judge: the server's own ``pg_class.relkind`` ('i': an index,
    https://www.postgresql.org/docs/current/catalog-pg-class.html), read here apart from the engine."""
    from cutover_prep.warmup.planning import _is_index

    engine = PostgresEngine.connect(sample_db)
    try:
        segments = engine.discover(DiscoveryOptions(databases=(sample_db.database,)))
    finally:
        engine.close()
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        relkind = dict(conn.execute("SELECT oid::bigint, relkind FROM pg_class").fetchall())
    kinds = {relkind[int(s.locator.oid or 0)] for s in segments}
    assert {"r", "i"} <= kinds  # the sample has tables and indexes
    for s in segments:
        assert _is_index(s.key) == (relkind[int(s.locator.oid or 0)] == "i"), s.key
