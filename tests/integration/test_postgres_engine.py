"""The PostgreSQL engine against a real server: full coverage, exact block counts, no writes."""

from __future__ import annotations

import uuid
from dataclasses import replace

import psycopg
import pytest
from psycopg import sql

from cutover_prep.engines import DiscoveryOptions, PermanentReadError
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.engines.postgres.sample_db import HOSTILE_SCHEMA, HOSTILE_TABLE
from cutover_prep.warmup.planning import PlanOptions, plan_units
from tests.conftest import conninfo
from tests.integration.pg_stats import wait_reported

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _local_server_has_no_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test server has no TLS; a Lambda requires it (tests/integration/test_tls.py)."""
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")

# Independent of the engine's own query: every relation with storage and each fork's size, the
# catalogues included (issue 21: they are on the volume, pg_largeobject among them).
EXPECTED_SQL = """
SELECT c.oid::bigint, f.fork, pg_relation_size(c.oid, f.fork)
FROM pg_class c CROSS JOIN (VALUES ('main'), ('fsm'), ('vm'), ('init')) f(fork)
WHERE c.relkind IN ('r', 'i', 't', 'm', 'S') AND c.relpersistence <> 't'
  AND pg_relation_size(c.oid, f.fork) > 0
"""


# The same without the catalogues (pg_catalog, information_schema, their TOAST): what a run that waives them
# by exclude_schemas plans (tests/integration/test_workflow.py)
NO_CATALOGUE = """
  AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
  AND NOT (c.relnamespace = 'pg_toast'::regnamespace AND EXISTS (
        SELECT 1 FROM pg_class o WHERE o.reltoastrelid = c.oid
          AND o.relnamespace IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)))
  AND NOT (c.relnamespace = 'pg_toast'::regnamespace AND c.relkind = 'i' AND EXISTS (
        SELECT 1 FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_class o ON o.reltoastrelid = t.oid
        WHERE i.indexrelid = c.oid
          AND o.relnamespace IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)))
"""


def expected_forks(spec, *, catalogues: bool = True) -> dict[tuple[int, str], int]:
    query = EXPECTED_SQL if catalogues else EXPECTED_SQL + NO_CATALOGUE
    with psycopg.connect(conninfo(spec)) as conn:
        return {(oid, fork): size for oid, fork, size in conn.execute(query)}


def tuple_counters(spec, *, after_pids: tuple[int, ...] = (), quiet: bool = False) -> tuple[int, int, int]:
    """The database's write counters; with ``after_pids`` (closed sessions) once those have reported, with ``quiet``
    once every other session on the database has (``pg_stats.wait_reported``: an event, not a time)."""
    if after_pids or quiet:
        wait_reported(spec, after_pids, whole_database=quiet)
    with psycopg.connect(conninfo(spec)) as conn:
        return conn.execute("SELECT tup_inserted, tup_updated, tup_deleted FROM pg_stat_database "
                            "WHERE datname = current_database()").fetchone()


def warm_everything(engine: PostgresEngine, database: str, unit_mb: int = 2) -> dict[tuple[int, str], int]:
    segments = engine.discover(DiscoveryOptions(databases=(database,)))
    plan = plan_units(segments, PlanOptions(unit_bytes=unit_mb * 2**20))
    read: dict[tuple[int, str], int] = {}
    for unit in plan.units:
        for rng in unit.ranges:
            result = engine.read_range(rng)
            key = (rng.locator.oid, rng.locator.fork)
            read[key] = read.get(key, 0) + result.bytes
    return read


def test_discovery_covers_every_relation_fork_with_hostile_names(sample_db):
    engine = PostgresEngine.connect(sample_db)
    try:
        segments = engine.discover(DiscoveryOptions(databases=(sample_db.database,)))
    finally:
        engine.close()
    found = {(s.locator.oid, s.locator.fork): s.bytes for s in segments}
    assert found == expected_forks(sample_db)
    kinds = {s.kind.split(".")[0] for s in segments}
    assert {"table", "partition", "index", "toast", "toast_index", "matview", "sequence"} <= kinds
    assert {s.kind.split(".")[1] for s in segments} >= {"main", "fsm", "vm"}
    assert any(s.schema == HOSTILE_SCHEMA and s.name == HOSTILE_TABLE for s in segments)
    toast = [s for s in segments if s.kind == "toast.main"]
    assert any(s.schema == "docs" and s.name == "documents(toast)" for s in toast)
    assert max(s.bytes for s in toast) > 1_000_000  # the TOAST-heavy table really is out of line


def test_schema_filters_keep_indexes_and_toast_with_their_table(sample_db):
    engine = PostgresEngine.connect(sample_db)
    try:
        segments = engine.discover(DiscoveryOptions(databases=(sample_db.database,), include_schemas=("docs",)))
    finally:
        engine.close()
    assert {s.schema for s in segments} == {"docs"}
    assert {s.kind.split(".")[0] for s in segments} == {"table", "index", "toast", "toast_index"}


def test_every_block_is_read_exactly_once_and_nothing_is_written(sample_db):
    before = tuple_counters(sample_db, quiet=True)  # every earlier session's writes counted
    engine = PostgresEngine.connect(sample_db)
    pids: list[int] = []
    try:
        method = engine.capabilities(sample_db.database).method
        read = warm_everything(engine, sample_db.database)
        conn = engine.connection(sample_db.database)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):  # the engine's sessions cannot write
            conn.execute(sql.SQL("CREATE TABLE {} (x int)").format(sql.Identifier("should_not_exist")))
        pids = engine.backend_pids()
    finally:
        engine.close()
    assert method in ("pg_prewarm", "pg_read_binary_file")
    assert read == expected_forks(sample_db)  # 100 % coverage, byte for byte, no block twice
    assert pids  # the engine's sessions: their exit reports whatever they did
    assert tuple_counters(sample_db, after_pids=tuple(pids)) == before


@pytest.fixture
def prewarm_installed(pg_admin, sample_db):
    """pg_prewarm in the test's own database for the test, dropped after (skips without contrib)."""
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'").fetchone():
            pytest.skip("this PostgreSQL server has no pg_prewarm (contrib) to test with")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    yield
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        conn.execute("DROP EXTENSION IF EXISTS pg_prewarm")


def test_pg_prewarm_method_when_the_extension_is_installed(prewarm_installed, sample_db):
    engine = PostgresEngine.connect(sample_db)
    try:
        assert engine.capabilities(sample_db.database).method == "pg_prewarm"
        assert warm_everything(engine, sample_db.database) == expected_forks(sample_db)
    finally:
        engine.close()


@pytest.mark.parametrize("mode", ["read", "prefetch", "buffer"])
def test_a_forced_method_and_prewarm_mode_read_every_block(prewarm_installed, sample_db, mode):
    """What benchmarks/hydration.py compares: each pg_prewarm mode, and pg_read_binary_file although pg_prewarm
    is there, each confirming every planned block."""
    for method in ("pg_prewarm", "pg_read_binary_file"):
        engine = PostgresEngine.connect(sample_db, read_method=method, prewarm_mode=mode)
        try:
            assert warm_everything(engine, sample_db.database) == expected_forks(sample_db)
        finally:
            engine.close()


def test_a_forced_method_the_database_lacks_is_a_named_error(sample_db):
    engine = PostgresEngine.connect(sample_db, read_method="pg_prewarm")
    try:
        segments = engine.discover(DiscoveryOptions(databases=(sample_db.database,)))
        rng = plan_units(segments, PlanOptions(unit_bytes=2**20)).units[0].ranges[0]
        with pytest.raises(PermanentReadError, match="pg_prewarm was asked for"):
            engine.read_range(rng)
    finally:
        engine.close()
    with pytest.raises(ValueError, match="read_method must be one of"):
        PostgresEngine(sample_db, read_method="dd")


def test_unprivileged_fallback_reads_heaps_and_names_what_it_cannot_read(pg_admin, sample_db):
    role = f"cp_reader_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw'").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA hr TO {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA hr TO {}").format(sql.Identifier(role)))
    try:
        engine = PostgresEngine.connect(replace(sample_db, user=role, password="pw"))
        try:
            assert engine.capabilities(sample_db.database).method == "tid_range_scan"
            options = DiscoveryOptions(databases=(sample_db.database,), include_schemas=("hr",))
            segments = engine.discover(options)
            plan = plan_units(segments, PlanOptions(unit_bytes=2**30))
            heap = [r for r in plan.units[0].ranges if r.segment_key.endswith("#table.main")]
            result = engine.read_range(heap[0])
            assert result.method == "tid_range_scan" and result.blocks == heap[0].blocks
            # an index cannot be read by a ctid scan: not planned (it would fail its unit and the ranges
            # beside it), named by the census instead (issue 21)
            assert not [s for s in segments if s.kind == "index.main"]
            census = {o.key: o for o in engine.census(options) if o.schema == "hr"}
            index = [o for o in census.values() if o.kind == "index.main"]
            assert index and all((o.readable, o.reason) == (False, "not readable by SQL") for o in index)
            rng = replace(heap[0], locator=heap[0].locator.with_fields(fork="fsm"))
            with pytest.raises(PermanentReadError, match="pg_prewarm"):  # the engine refuses it all the same
                engine.read_range(rng)
        finally:
            engine.close()
    finally:
        with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_unreachable_server_is_one_clear_line_without_the_password(sample_db):
    from cutover_prep.engines import DatabaseUnreachable

    with pytest.raises(DatabaseUnreachable) as err:
        PostgresEngine.connect(replace(sample_db, host="127.0.0.1", port=1, password="s3cr3t-pw"))
    assert "s3cr3t-pw" not in str(err.value)
    assert "\n" not in str(err.value)
