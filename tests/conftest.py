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

import psycopg
import pytest
from psycopg import sql

os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")

from cutover_prep.engines import ConnectionSpec  # noqa: E402
from cutover_prep.local.sample_db import create_sample  # noqa: E402


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
