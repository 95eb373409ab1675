"""Read-only in depth, and coverage that counts only confirmed reads (real PostgreSQL).

Each test works in a small database of its own (a table, an index), so installing
pg_prewarm or truncating a table does not disturb the other tests' sample database.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace

import psycopg
import pytest
from psycopg import sql

from cutover_prep.engines import DiscoveryOptions, ReadRange
from cutover_prep.engines.base import Extent
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.warmup.planning import PlanOptions, plan_units
from tests.conftest import conninfo

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _local_server_has_no_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")


@pytest.fixture
def small_db(pg_admin) -> Iterator:
    name = f"cutover_prep_ro_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    spec = replace(pg_admin, database=name)
    with psycopg.connect(conninfo(spec), autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, pad text)")
        conn.execute("INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 5000) g")
    try:
        yield spec
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _prewarm_available(spec) -> bool:
    with psycopg.connect(conninfo(spec)) as conn:
        return bool(conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'").fetchone())


def _rows(spec) -> int:
    with psycopg.connect(conninfo(spec)) as conn:
        return conn.execute("SELECT count(*) FROM t").fetchone()[0]


def _assert_cannot_write(conn: psycopg.Connection) -> None:
    assert conn.execute("SHOW transaction_read_only").fetchone()[0] == "on"
    assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
    for statement in ("INSERT INTO t VALUES (-1, 'written')", "CREATE TABLE written (x int)",
                      "UPDATE t SET pad = 'y' WHERE id = 1", "CREATE EXTENSION IF NOT EXISTS pg_prewarm"):
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute(statement)
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), conn.transaction():  # an explicit transaction too
        conn.execute("INSERT INTO t VALUES (-2, 'written')")


def test_the_warm_up_sessions_cannot_write_before_during_or_after_reading(small_db) -> None:
    engine = PostgresEngine.connect(small_db)
    try:
        conn = engine.connection(small_db.database)
        _assert_cannot_write(conn)
        segments = engine.discover(DiscoveryOptions(databases=(small_db.database,)))
        for unit in plan_units(segments, PlanOptions(unit_bytes=2**20)).units:
            for rng in unit.ranges:
                engine.read_range(rng)
        _assert_cannot_write(engine.connection(small_db.database))
    finally:
        engine.close()
    assert _rows(small_db) == 5000


def test_create_extension_writes_only_when_opted_in_and_the_session_stays_read_only(small_db) -> None:
    if not _prewarm_available(small_db):
        pytest.skip("this PostgreSQL server has no pg_prewarm (contrib) to test with")
    engine = PostgresEngine.connect(small_db)  # not opted in: no extension appears
    try:
        assert engine.capabilities(small_db.database).method != "pg_prewarm"
    finally:
        engine.close()
    engine = PostgresEngine.connect(small_db, create_extension=True)
    try:
        assert engine.capabilities(small_db.database).method == "pg_prewarm"
        _assert_cannot_write(engine.connection(small_db.database))
    finally:
        engine.close()


def _beyond_the_end(engine: PostgresEngine, spec) -> ReadRange:
    heap = next(s for s in engine.discover(DiscoveryOptions(databases=(spec.database,)))
                if s.kind == "table.main" and s.name == "t")
    unit = plan_units([heap], PlanOptions(unit_bytes=2**30)).units[0]
    rng = unit.ranges[0]
    return ReadRange(rng.segment_key, rng.locator, (Extent(0, 0, rng.blocks + 8),), rng.block_size, True)


def _reader(spec, role: str) -> PostgresEngine:
    with psycopg.connect(conninfo(spec), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw'").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT SELECT ON t TO {}").format(sql.Identifier(role)))
    return PostgresEngine.connect(replace(spec, user=role, password="pw"))


@pytest.mark.parametrize("method", ["pg_read_binary_file", "tid_range_scan", "pg_prewarm"])
def test_a_range_past_the_relation_end_reads_what_exists_and_counts_the_rest_gone(small_db, method: str) -> None:
    """Issue 32: blocks past the relation's end no longer exist (a VACUUM truncated them): each method reads the
    blocks that exist and says how many are gone (before: a ShortRead that failed the unit for good; the whole
    table-truncated case is tests/integration/test_truncated_while_running.py)."""
    role = f"cp_ro_{uuid.uuid4().hex[:6]}"
    if method == "pg_prewarm":
        if not _prewarm_available(small_db):
            pytest.skip("this PostgreSQL server has no pg_prewarm (contrib) to test with")
        with psycopg.connect(conninfo(small_db), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pg_prewarm")
    engine = _reader(small_db, role) if method == "tid_range_scan" else PostgresEngine.connect(small_db)
    try:
        assert engine.capabilities(small_db.database).method == method
        rng = _beyond_the_end(engine, small_db)
        with psycopg.connect(conninfo(small_db)) as conn:  # the server's own size of the table
            exists = conn.execute("SELECT pg_relation_size('t') / 8192").fetchone()[0]
        result = engine.read_range(rng)
        assert (result.blocks, result.gone) == (exists, 8)
    finally:
        engine.close()
        with psycopg.connect(conninfo(small_db), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role))) if method == "tid_range_scan" \
                else None
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def test_pg_read_binary_file_is_chosen_by_the_execute_privilege_not_by_pg_read_server_files(small_db) -> None:
    """PostgreSQL 15 here: pg_read_server_files alone cannot call pg_read_binary_file; EXECUTE on it can."""
    members, executors = f"cp_rsf_{uuid.uuid4().hex[:6]}", f"cp_exe_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(conninfo(small_db), autocommit=True) as conn:
        for role in (members, executors):
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw'").format(sql.Identifier(role)))
            conn.execute(sql.SQL("GRANT SELECT ON t TO {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT pg_read_server_files TO {}").format(sql.Identifier(members)))
        conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION pg_read_binary_file(text, bigint, bigint) TO {}")
                     .format(sql.Identifier(executors)))
    try:
        for role, method in ((members, "tid_range_scan"), (executors, "pg_read_binary_file")):
            engine = PostgresEngine.connect(replace(small_db, user=role, password="pw"))
            try:
                assert engine.capabilities(small_db.database).method == method
                heap = next(s for s in engine.discover(DiscoveryOptions(databases=(small_db.database,)))
                            if s.kind == "table.main" and s.name == "t")
                rng = plan_units([heap], PlanOptions(unit_bytes=2**30)).units[0].ranges[0]
                assert engine.read_range(rng).blocks == rng.blocks
            finally:
                engine.close()
    finally:
        with psycopg.connect(conninfo(small_db), autocommit=True) as conn:
            for role in (members, executors):
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
