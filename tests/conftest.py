"""Shared fixtures: a real PostgreSQL server and a generated sample database.

PostgreSQL comes from ``CUTOVER_PREP_TEST_PG`` (a conninfo), else the server on
127.0.0.1:5432 when one answers, else an embedded pgserver started for the session —
so a fresh machine without PostgreSQL still runs every PostgreSQL test.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from psycopg import sql

os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
# The PostgreSQL servers of the tests (the machine's, pgserver) offer no TLS; the tests of TLS set
# CUTOVER_PREP_TLS=require themselves. A deployed function has no such variable: it requires TLS.
os.environ.setdefault("CUTOVER_PREP_TLS", "disable")
# moto's RDS makes an EC2 backend, which loads thousands of default machine images no test reads (moto's setting,
# read when the backend is made; tests/unit/test_trigger.py measured 28.6 -> 24.3 s for one file)
os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")

# Every run gets a private temporary directory and must leave it empty (tests/tmp_guard.py).
pytest_plugins = ("tests.tmp_guard",)

from cutover_prep.engines import ConnectionSpec  # noqa: E402
from cutover_prep.engines.postgres.sample_db import create_sample  # noqa: E402

# The slowest test modules, slowest first (seconds of `--durations=0` in one quiet `make test`, 2026-11-28 13:37:
# 10:09 wall, 1,182 worker-seconds; the order is what counts). Under pytest-xdist a worker takes the
# next module when it is nearly done with its own, in collection order (`--no-loadscope-reorder` in the Makefile:
# xdist's default puts the modules with the most tests first, which left heavy modules of 2-4 tests, such as
# test_restart_outage's 6 minutes, for the end while the other worker stood idle); with the slowest first the
# modules left at the end are short ones and both workers end close together. A module not named here keeps its
# place after these.
SLOWEST_FIRST = (
    "tests/integration/test_workflow.py",  # 97
    "tests/integration/test_restart_outage.py",  # 64
    "tests/integration/test_compare_workflow.py",  # 58
    "tests/integration/test_emulated_demo.py",  # 57
    "tests/integration/test_compare_local.py",  # 47
    "tests/infrastructure/test_checkov.py",  # 44
    "tests/integration/test_cli.py",  # 39
    "tests/integration/test_deploy_rehearsal.py",  # 39
    "tests/integration/test_local_stdout.py",  # 39
    "tests/integration/test_lock_waits.py",  # 37
    "tests/unit/test_finalize_memory.py",  # 32
    "tests/integration/test_workflow_slots.py",  # 31
    "tests/integration/test_local_run_id.py",  # 26
    "tests/integration/test_report_browser.py",  # 22
    "tests/integration/test_mysql_local.py",  # 22
    "tests/integration/test_compare_cli.py",  # 20
    "tests/integration/remote/test_remote_cli.py",  # 18
    "tests/infrastructure/test_stack.py",  # 18
    "tests/integration/test_emulated_census.py",  # 17
    "tests/integration/remote/test_remote_cli_running.py",  # 17
    "tests/integration/test_mysql_rebuilt_while_running.py",  # 17
    "tests/integration/test_preflight_workflow.py",  # 17
    "tests/integration/test_gate_replication.py",  # 17
    "tests/integration/test_gate_workflow.py",  # 16
    "tests/integration/test_dsn_selection.py",  # 13
    "tests/integration/test_emulated_volume.py",  # 11
    "tests/integration/test_postgres_census.py",  # 11
    "tests/infrastructure/test_safety.py",  # 11
    "tests/integration/test_mysql_engine_internal_workflow.py",  # 10
    "tests/infrastructure/test_context_values.py",  # 10
    "tests/integration/test_truncated_while_running.py",  # 10
    "tests/integration/test_mysql_ready.py",  # 9
    "tests/integration/test_dsn_tls.py",  # 9
    "tests/integration/test_end_census_workflow.py",  # 9
    "tests/integration/test_rds_progress_workflow.py",  # 9
    "tests/unit/test_census_streaming.py",  # 8
    "tests/integration/test_mysql_engine.py",  # 8
    "tests/integration/test_estimate_bytes.py",  # 7
    "tests/integration/test_tls.py",  # 6
    "tests/integration/test_after_hot_set.py",  # 6
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the modules of SLOWEST_FIRST first, in its order (each module's own tests keep theirs)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {module: i for i, module in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def _spec_from_conninfo(conninfo: str) -> ConnectionSpec:
    info = psycopg.conninfo.conninfo_to_dict(conninfo)
    return ConnectionSpec(engine="postgres", host=str(info.get("host", "127.0.0.1")),
                          port=int(info.get("port", 5432)), database=str(info.get("dbname", "postgres")),
                          user=str(info.get("user", "postgres")), password=str(info.get("password", "")))


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[ConnectionSpec]:
    """A superuser connection to a maintenance database of a real PostgreSQL server."""
    conninfo = os.environ.get("CUTOVER_PREP_TEST_PG", "host=127.0.0.1 port=5432 dbname=postgres user=postgres")
    try:
        psycopg.connect(conninfo, connect_timeout=3).close()
        yield _spec_from_conninfo(conninfo)
        return
    except psycopg.Error:
        pass
    import tempfile

    import pgserver

    with tempfile.TemporaryDirectory(prefix="cutover-prep-test-pg-") as pgdata:
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
        socket_dir = server.get_uri().split("host=", 1)[1]
        try:
            yield ConnectionSpec(engine="postgres", host=socket_dir, port=5432, database="postgres",
                                 user="postgres", password="")
        finally:
            server.cleanup()


def conninfo(spec: ConnectionSpec, database: str | None = None) -> str:
    return psycopg.conninfo.make_conninfo(host=spec.host, port=spec.port, dbname=database or spec.database,
                                          user=spec.user, password=spec.password)


@pytest.fixture(scope="session")
def sample_db(pg_admin: ConnectionSpec) -> Iterator[ConnectionSpec]:
    """A fresh database with the generated sample (partitions, TOAST, matview, hostile names)."""
    name = f"cutover_prep_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        create_sample(conninfo(pg_admin, name), size_mb=24)
        yield replace(pg_admin, database=name)
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def pg_login_role(sample_db: ConnectionSpec) -> Iterator[Any]:
    """``make(*grants)`` -> a login role of this test with only those grants (each a statement with ``{role}``,
    e.g. ``"GRANT pg_read_all_data TO {role}"``); dropped with what it owns afterwards."""
    made: list[str] = []

    def make(*grants: str) -> str:
        name = f"cp_role_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
            made.append(name)
            for grant in grants:
                conn.execute(sql.SQL(grant).format(role=sql.Identifier(name)))
        return name

    yield make
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        for name in made:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


# -- MySQL / MariaDB -------------------------------------------------------------------------
# CUTOVER_PREP_TEST_MYSQL (host:port, user root without password unless MYSQL_TEST_USER/PASSWORD),
# else the server on 127.0.0.1:3306 when one answers, else a private MariaDB started from the
# machine's binaries (engines.mysql.sample_db.PrivateServer), else the tests skip saying so.
# Tests create databases named MYSQL_TEST_PREFIX + ... and drop only those.
MYSQL_TEST_PREFIX = f"cptest_{uuid.uuid4().hex[:8]}_"


@pytest.fixture(scope="session")
def mysql_admin() -> Iterator[ConnectionSpec]:
    import pymysql

    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable

    host, _, port = os.environ.get("CUTOVER_PREP_TEST_MYSQL", "127.0.0.1:3306").partition(":")
    spec = ConnectionSpec(engine="mariadb", host=host, port=int(port or 3306), database="information_schema",
                          user=os.environ.get("MYSQL_TEST_USER", "root"),
                          password=os.environ.get("MYSQL_TEST_PASSWORD", ""))
    try:
        pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password,
                        connect_timeout=3).close()
        yield spec
        return
    except pymysql.err.OperationalError:
        pass
    try:
        server = PrivateServer().start()
    except PrivateServerUnavailable as exc:
        pytest.skip(f"no MySQL/MariaDB server on {spec.host}:{spec.port} and no private one: {exc}")
    try:
        yield replace(spec, host="127.0.0.1", port=server.port, user="root", password="")
    finally:
        server.close()


@pytest.fixture
def mysql_database(mysql_admin: ConnectionSpec) -> Iterator[Any]:
    """``make(name)`` -> a database name of this test session; every one made is dropped afterwards."""
    import pymysql

    made: list[str] = []

    def make(suffix: str) -> str:
        made.append(f"{MYSQL_TEST_PREFIX}{suffix}")
        return made[-1]

    yield make
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True)
    try:
        with conn.cursor() as cur:
            for name in made:
                assert name.startswith(MYSQL_TEST_PREFIX)
                cur.execute("DROP DATABASE IF EXISTS `" + name.replace("`", "``") + "`")
    finally:
        conn.close()
