"""The warm-up's yield signal (issue 36 §1) against the real servers: the family hooks' counters judged by the
servers' own per-relation and status counters."""

from __future__ import annotations

import uuid
from dataclasses import replace

import psycopg
import pymysql
import pytest
from psycopg import sql

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions, registry
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.warmup.planning import PlanOptions, plan_units
from tests.conftest import conninfo
from tests.integration.pg_stats import wait_reported

MIB = 2**20


@pytest.fixture
def pg_db(pg_admin: ConnectionSpec, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")
    name = f"cutover_prep_yield_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        spec = replace(pg_admin, database=name)
        with psycopg.connect(conninfo(spec), autocommit=True) as conn:
            # CREATE TABLE AS writes through a 16 MiB ring: most of the 48 MiB are not left in shared buffers, and
            # a scan of a table over a quarter of them reads through a ring too: the application's reads are reads
            for table, rows in (("app", 90000), ("cold", 20000)):
                conn.execute(sql.SQL("CREATE TABLE {} AS SELECT g AS id, repeat('x', 500) AS pad "
                                     "FROM generate_series(1, %s) g").format(sql.Identifier(table)), (rows,))
        yield spec
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def heap_reads(spec: ConnectionSpec, table: str) -> int:
    with psycopg.connect(conninfo(spec), autocommit=True) as conn:
        return int(conn.execute("SELECT coalesce(heap_blks_read, 0) FROM pg_statio_user_tables WHERE relname = %s",
                                (table,)).fetchone()[0])


@pytest.mark.postgres
def test_postgres_counts_the_applications_reads_and_not_the_warm_ups(pg_db: ConnectionSpec) -> None:
    hook = registry.family("postgres").activity
    engine = PostgresEngine.connect(pg_db)
    try:
        with psycopg.connect(conninfo(pg_db), autocommit=True) as conn:
            timing = conn.execute("SHOW track_io_timing").fetchone()[0] == "on"
            version = conn.info.server_version
        first = hook(engine)
        assert first.source == ("pg_stat_io" if version >= 160000 else "pg_stat_database")
        assert (first.read_ms is None) is (not timing) and first.block_size == 8192
        # the application: a whole scan of a table bigger than a quarter of shared buffers
        table_before = heap_reads(pg_db, "app")
        with psycopg.connect(conninfo(pg_db), autocommit=True) as app:
            app.execute("SELECT count(*) FROM app").fetchone()
            pid = app.info.backend_pid
        wait_reported(pg_db, [pid])
        app_reads = heap_reads(pg_db, "app") - table_before
        assert app_reads > 1000  # the server's own judge: the application read from storage
        second = hook(engine)
        # every block the application read is in the signal (other sessions of this shared server may add more)
        assert second.reads - first.reads >= app_reads
        # the warm-up reads the cold table through its own method: the server's counters for it do not move
        segments = engine.discover(DiscoveryOptions(databases=(pg_db.database,), include_schemas=("public",)))
        plan = plan_units([s for s in segments if s.key.endswith("cold#main") or ".cold" in s.key],
                          PlanOptions(unit_bytes=64 * MIB))
        cold_before = heap_reads(pg_db, "cold")
        read = sum(engine.read_range(r).blocks for u in plan.units for r in u.ranges)
        assert read >= 20000 * 530 // 8192
        method = engine.read_methods()[pg_db.database]
        assert hook(engine).own_included is (method == "tid_range_scan")
        if method != "tid_range_scan":
            assert heap_reads(pg_db, "cold") == cold_before  # not through shared buffers: not in the signal
    finally:
        engine.close()


@pytest.mark.mysql
def test_mariadb_with_performance_schema_times_the_applications_reads_less_the_warm_ups(tmp_path) -> None:
    from cutover_prep.engines.mysql.engine import MySQLEngine
    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable

    try:
        server = PrivateServer(buffer_pool_mb=32, performance_schema=True).start()
    except PrivateServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        root = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database="app", user="root",
                              password="", tls="disable")
        conn = pymysql.connect(host=root.host, port=root.port, user="root", autocommit=True)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE app")
            cur.execute("SET SESSION max_recursive_iterations = 100000")
            for table in ("app_t", "cold_t"):
                cur.execute(f"CREATE TABLE app.{table} (id INT PRIMARY KEY, pad VARCHAR(600))")  # noqa: S608
                cur.execute(f"INSERT INTO app.{table} WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 "  # noqa: S608
                            "FROM s WHERE n < 40000) SELECT n, REPEAT('x', 500) FROM s")
        conn.close()
        server.restart()  # an empty buffer pool (the private server loads none at startup)
        hook = registry.family("mariadb").activity
        engine = MySQLEngine.connect(root)
        try:
            status = engine.conn.cursor()

            def data_reads() -> int:
                status.execute("SHOW GLOBAL STATUS LIKE 'Innodb_data_reads'")
                return int(status.fetchone()[1])

            first = hook(engine)
            assert first.source == "performance_schema" and first.read_ms is not None and not first.own_included
            reads_before = data_reads()
            app = pymysql.connect(host=root.host, port=root.port, user="root", autocommit=True)
            with app.cursor() as cur:
                cur.execute("SELECT count(*), sum(length(pad)) FROM app.app_t IGNORE INDEX (PRIMARY)")
                cur.fetchall()
                second = hook(engine)  # the application's session still open: its thread's waits counted
            server_reads = data_reads() - reads_before
            assert server_reads > 100  # the server's judge: the application's scan read pages
            assert 0 < second.reads - first.reads <= server_reads + 5
            assert second.read_ms > first.read_ms
            # the warm-up's own session reads the cold table: the server reads, the signal does not count it
            segments = engine.discover(DiscoveryOptions(include_schemas=("app",)))
            plan = plan_units([s for s in segments if "cold_t" in s.key], PlanOptions(unit_bytes=64 * MIB))
            before_ours = data_reads()
            for unit in plan.units:
                for rng in unit.ranges:
                    engine.read_range(rng)
            third = hook(engine)
            assert data_reads() - before_ours > 100
            assert third.reads - second.reads <= 5  # only stray pages of other threads, not the warm-up's
            app.close()
        finally:
            engine.close()
        # performance_schema off (MariaDB's default): Innodb_data_reads with the warm-up's reads in it, no time
        off = MySQLEngine.connect(root)
        try:
            off.performance_schema = False
            found = hook(off)
            assert found.source == "Innodb_data_reads" and found.read_ms is None and found.own_included
        finally:
            off.close()
    finally:
        server.close()
