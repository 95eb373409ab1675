"""Issue 32 §4, the engines' part: a session dropped under a read comes out as ``ConnectionLost`` and the
next read runs on a fresh connection (a new server process, judged by the server: its backend pid /
connection id); a database that does not answer is ``DatabaseUnreachable`` marked reconnectable, one that
answers and refuses is not.

The sessions are the test's own, on the shared servers: ``pg_terminate_backend`` / ``KILL`` end only them.
PostgreSQL's rule is libpq's ``PQping`` (PostgreSQL docs, "Database Connection Control Functions": REJECT
"the server is running but is in a state that disallows connections (startup, shutdown, or crash recovery)",
NO_RESPONSE "the server could not be contacted"); a server that accepts connections and still refused
this one refused the login or the database.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from cutover_prep.engines import ConnectionLost, DatabaseUnreachable, DiscoveryOptions
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.warmup.planning import PlanOptions, plan_units
from tests.conftest import conninfo


@pytest.fixture(autouse=True)
def _local_server_has_no_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")


def _ranges(engine, schema: str, database: str | None = None) -> list:
    segments = engine.discover(DiscoveryOptions(databases=(database,) if database else (), include_schemas=(schema,)))
    ranges = [r for u in plan_units(segments, PlanOptions(unit_bytes=64 * 1024)).units for r in u.ranges]
    assert len(ranges) >= 2
    return ranges


@pytest.mark.postgres
def test_postgres_a_session_dropped_under_it_is_lost_and_the_next_read_reconnects(sample_db) -> None:
    engine = PostgresEngine.connect(sample_db)
    try:
        ranges = _ranges(engine, "hr", sample_db.database)
        engine.read_range(ranges[0])
        [pid] = engine.backend_pids()
        with psycopg.connect(conninfo(sample_db), autocommit=True) as admin:
            assert admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,)).fetchone()[0]
        with pytest.raises(ConnectionLost):
            engine.read_range(ranges[1])
        result = engine.read_range(ranges[1])  # a fresh connection, not the dead one
        assert result.blocks == ranges[1].blocks
        [new_pid] = engine.backend_pids()
        with psycopg.connect(conninfo(sample_db), autocommit=True) as admin:
            alive = {r[0] for r in admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s",
                                                 (sample_db.database,))}
        assert new_pid != pid and new_pid in alive and pid not in alive
    finally:
        engine.close()


@pytest.mark.postgres
def test_postgres_a_server_that_does_not_answer_is_reconnectable_a_refusal_is_not(sample_db) -> None:
    with pytest.raises(DatabaseUnreachable) as err:
        PostgresEngine.connect(replace(sample_db, host="127.0.0.1", port=1))  # nothing listens there
    assert err.value.reconnectable
    with pytest.raises(DatabaseUnreachable) as err:
        PostgresEngine.connect(replace(sample_db, database="cutover_prep_no_such_database"))
    assert not err.value.reconnectable and "does not exist" in str(err.value)
    with pytest.raises(DatabaseUnreachable) as err:
        PostgresEngine.connect(replace(sample_db, user="cutover_prep_no_such_role"))
    assert not err.value.reconnectable


@contextmanager
def starting_front(spec, refuse: int) -> Iterator[int]:
    """``tests/integration/pg_starting_front.py`` before ``spec``'s server: its port."""
    root = Path(__file__).resolve().parents[2]
    front = subprocess.Popen([sys.executable, "-m", "tests.integration.pg_starting_front", "0", spec.host,
                              str(spec.port), str(refuse)], cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        line = front.stdout.readline().split()
        assert line[:1] == ["ready"], line
        yield int(line[1])
    finally:
        front.kill()
        front.wait()


@pytest.mark.postgres
def test_postgres_a_server_that_finished_starting_after_the_refusal_is_connected(sample_db) -> None:
    # CI, 2026-11-28: a unit's connection got "the database system is starting up" (SQLSTATE 57P03, PostgreSQL
    # docs, Appendix A: cannot_connect_now), the ping that followed found the server up (PQPING_OK), and the
    # refusal was taken for the login's or the database's: the unit failed, not reconnectable, and the run was
    # NOT_READY. A server that accepts connections now may have refused one a moment ago for a state that has
    # ended; the engine tries it once more before it calls the refusal final.
    with starting_front(sample_db, refuse=1) as port:
        engine = PostgresEngine.connect(replace(sample_db, host="127.0.0.1", port=port))
        try:
            assert engine.connection(sample_db.database).execute("SELECT current_database()").fetchone()[0] \
                == sample_db.database
        finally:
            engine.close()


@pytest.mark.postgres
def test_postgres_a_server_still_starting_is_reconnectable(sample_db) -> None:
    # every connection and every ping gets "starting up": PQping says REJECT, so the outage is ridden out
    with starting_front(sample_db, refuse=1000) as port:
        with pytest.raises(DatabaseUnreachable) as err:
            PostgresEngine.connect(replace(sample_db, host="127.0.0.1", port=port))
    assert err.value.reconnectable and "starting up" in str(err.value)


@pytest.mark.mysql
def test_mysql_a_session_killed_under_it_is_lost_and_the_next_read_reconnects(mysql_admin, mysql_database) -> None:
    import pymysql

    from cutover_prep.engines.mysql.engine import MySQLEngine
    from cutover_prep.engines.mysql.sample_db import create_sample

    database = mysql_database("reconnect")
    admin = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                            password=mysql_admin.password, autocommit=True)
    try:
        create_sample(admin, database, rows=500, blob_kib=4)
        engine = MySQLEngine.connect(replace(mysql_admin, database=database))
        try:
            ranges = _ranges(engine, database)
            engine.read_range(ranges[0])
            with engine.conn.cursor() as cur:
                cur.execute("SELECT CONNECTION_ID()")
                old = cur.fetchone()[0]
            with admin.cursor() as cur:
                cur.execute("KILL %s", (old,))
            with pytest.raises(ConnectionLost):
                engine.read_range(ranges[1])
            assert engine.read_range(ranges[1]).blocks == ranges[1].blocks  # a fresh connection
            with engine.conn.cursor() as cur:
                cur.execute("SELECT CONNECTION_ID()")
                new = cur.fetchone()[0]
            with admin.cursor() as cur:
                cur.execute("SELECT ID FROM information_schema.PROCESSLIST")
                alive = {r[0] for r in cur.fetchall()}
            assert new != old and new in alive and old not in alive
        finally:
            engine.close()
    finally:
        admin.close()


@pytest.mark.mysql
def test_mysql_a_server_that_does_not_answer_is_reconnectable_a_refusal_is_not(mysql_admin) -> None:
    from cutover_prep.engines.mysql.engine import MySQLEngine

    with pytest.raises(DatabaseUnreachable) as err:
        MySQLEngine.connect(replace(mysql_admin, host="127.0.0.1", port=1))
    assert err.value.reconnectable
    with pytest.raises(DatabaseUnreachable) as err:
        MySQLEngine.connect(replace(mysql_admin, user="cutover_prep_no_such_user", password="x"))
    assert not err.value.reconnectable
