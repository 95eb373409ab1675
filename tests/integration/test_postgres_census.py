"""Issue 21 on PostgreSQL: the census of everything on the volume, large objects, catalogues.

Judges: the server's own data directory (every relation file of a database, listed by the
filesystem, must be named by the census) and the server's ``pg_relation_size`` of
``pg_largeobject`` queried by the test. The issue's case: 46 MB of large objects and one small
table gave READY at "100 % of 0.02 MiB" (``pg_catalog`` was left out of the plan, and
``pg_largeobject`` lives there). PostgreSQL documents that ``pg_largeobject`` is not readable by
PUBLIC ("pg_largeobject", System Catalogs: "only superusers ... can read it"), so a role without
SELECT on it cannot read the large objects through the table.
"""

from __future__ import annotations

import json
import os
import re
import threading
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.cli.main import main
from cutover_prep.engines import DiscoveryOptions
from cutover_prep.engines.postgres.engine import PostgresEngine
from tests.conftest import conninfo

pytestmark = pytest.mark.postgres

# 16 large objects of 1 MiB of random bytes: 16 MiB in pg_largeobject (the 46 MiB is not what is judged: the
# tests compare with the server's own size of pg_largeobject, 800 times the 0.02 MiB the old code planned)
LO_COUNT, LO_MIB = 16, 1


@pytest.fixture(scope="module")
def lo_db(pg_admin: Any) -> Any:
    """A database with 16 MiB of large objects, one small table and a role that may read only the table. Shared by
    the module's tests: each only reads it (the runs read it, the census lists it)."""
    if pg_admin.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    tag = uuid.uuid4().hex[:8]
    database, role, password = f"cutover_prep_test_{tag}", f"cutover_prep_test_{tag}", uuid.uuid4().hex
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    try:
        with psycopg.connect(conninfo(pg_admin, database), autocommit=True) as conn:
            conn.execute("CREATE TABLE small AS SELECT g AS id FROM generate_series(1, 100) g")
            conn.execute(sql.SQL("GRANT SELECT ON small TO {}").format(sql.Identifier(role)))
            for _ in range(LO_COUNT):
                conn.execute("SELECT lo_from_bytea(0, (SELECT decode(string_agg(md5(random()::text || g), ''), 'hex') "
                             "FROM generate_series(1, %s) g))", (LO_MIB * 65536,))
            conn.execute("CHECKPOINT")
        yield {"database": database, "role": role, "password": password,
               "admin_dsn": f"postgresql://{pg_admin.user}@{pg_admin.host}:{pg_admin.port}/{database}",
               "role_dsn": f"postgresql://{role}:{password}@{pg_admin.host}:{pg_admin.port}/{database}",
               "spec": replace(pg_admin, database=database)}
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def _lo_bytes(spec: Any) -> int:
    with psycopg.connect(conninfo(spec)) as conn:
        return conn.execute("SELECT pg_relation_size('pg_largeobject')").fetchone()[0]


def _findings(out: Path) -> dict[str, Any]:
    return json.loads(next(out.rglob("findings.json")).read_text())


def test_large_objects_are_planned_and_read(lo_db: dict[str, Any], tmp_path: Path, capsys: Any) -> None:
    """Issue 21's case: READY at 100 % of 0.02 MiB on the old code; now pg_largeobject is planned and read."""
    lo_bytes = _lo_bytes(lo_db["spec"])
    assert lo_bytes >= LO_COUNT * LO_MIB * 2**20  # the judge: the server says the large objects are there
    code = main(["local", "--dsn", lo_db["admin_dsn"], "--database", lo_db["database"], "--out", str(tmp_path),
                 "--no-progress", "--no-benchmark"])
    out, err = capsys.readouterr()
    findings = _findings(tmp_path)
    assert findings["bytes"]["planned"] >= lo_bytes, out + err  # old code: 0.02 MiB planned
    lo = [s for s in findings["segments"] if s["key"] == f"{lo_db['database']}/pg_catalog.pg_largeobject#table.main"]
    assert lo and lo[0]["status"] == "READ" and lo[0]["bytes"] == lo_bytes
    assert findings["census"]["taken"] and findings["census"]["unread_bytes"] == 0
    assert code == 0 and findings["verdict"]["verdict"] == "READY", out + err


def test_large_objects_the_role_cannot_read_make_it_not_ready_by_name(lo_db: dict[str, Any], tmp_path: Path,
                                                                     capsys: Any) -> None:
    """The same database read by a role with SELECT on the small table only: READY at 100 % on the old code;
    now NOT_READY, UNREAD_OBJECTS naming pg_largeobject with the server's size and 'no privilege'."""
    lo_bytes = _lo_bytes(lo_db["spec"])
    # the role lacks grants on purpose: its preflight fails (issue 22) and only warns here, so that the run goes on
    code = main(["local", "--dsn", lo_db["role_dsn"], "--database", lo_db["database"], "--out", str(tmp_path),
                 "--no-progress", "--no-benchmark", "--preflight", "warn"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    findings = _findings(tmp_path)
    assert findings["preflight"]["ok"] is False  # it named the grant before the run read anything
    assert any(c["status"] == "fail" and f"GRANT pg_read_all_data TO {lo_db['role']}" in c["detail"]
               for c in findings["preflight"]["checks"])
    unread = {u["key"]: u for u in findings["census"]["unread"]}
    lo = unread[f"{lo_db['database']}/pg_catalog.pg_largeobject#table.main"]
    assert (lo["bytes"], lo["reason"], lo["waived"]) == (lo_bytes, "no privilege", False)
    failing = [r for r in findings["verdict"]["reasons"] if not r["ok"]]
    assert any(r["code"] == "UNREAD_OBJECTS" and "pg_largeobject" in r["message"] for r in failing)
    assert "pg_catalog.pg_largeobject" in out and "no privilege" in out  # named on the terminal too


def _data_directory(spec: Any) -> Path | None:
    with psycopg.connect(conninfo(spec)) as conn:
        path = Path(conn.execute("SHOW data_directory").fetchone()[0])
    return path if os.access(path, os.R_OK) else None


def test_census_names_every_relation_file_of_the_database(lo_db: dict[str, Any]) -> None:
    """The filesystem is the judge: every relation file (``<filenode>[_fork]``, first segment) with data in
    the database's directory is a census object, catalogues and pg_largeobject included."""
    data = _data_directory(lo_db["spec"])
    if data is None:
        pytest.skip("the server's data directory is not readable from the tests")
    engine = PostgresEngine.connect(lo_db["spec"])
    try:
        objects = engine.census(DiscoveryOptions(databases=(lo_db["database"],)))
        oid = engine.connection(lo_db["database"]).execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
    finally:
        engine.close()
    files = {p.name for p in (data / "base" / str(oid)).iterdir()
             if re.fullmatch(r"\d+(_(fsm|vm|init))?", p.name) and p.stat().st_size > 0}
    named = {Path(o.file).name for o in objects if o.file and o.file.startswith(f"base/{oid}/")}
    assert files and files <= named, sorted(files - named)[:20]
    mine = [o for o in objects if o.database == lo_db["database"]]
    assert any(o.schema == "pg_catalog" and o.name == "pg_class" for o in mine)
    others = {o.database for o in objects if o.kind == "database"}
    assert "template0" in others  # every database on the instance, connectable or not
    assert all(o.reason == "excluded by input" for o in objects if o.kind == "database")


@pytest.fixture
def small_db(pg_admin: Any) -> Any:
    if pg_admin.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    database = f"cutover_prep_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    try:
        with psycopg.connect(conninfo(pg_admin, database), autocommit=True) as conn:
            conn.execute("CREATE TABLE early AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, 20000) g")
        yield replace(pg_admin, database=database)
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


def test_a_table_created_during_the_warm_up_is_read_by_the_catch_up_pass(small_db: Any, tmp_path: Path,
                                                                        monkeypatch: Any, capsys: Any) -> None:
    """Issue 21's third case: a table created while the warm-up ran was in no evidence file and the run was
    READY at 100 %. Now the end census finds it and the catch-up pass reads it. Deterministic: the table is
    created by the first WarmUnit invocation (a wrapper around the real one), before it reads anything."""
    import cutover_prep.steps.warm_unit as warm_unit_handler

    real, created, lock = warm_unit_handler.warm_unit, [], threading.Lock()

    def create_then_warm(*args: Any, **kwargs: Any) -> Any:
        with lock:  # units run in several threads: the first creates it, the others wait for it
            if not created:
                with psycopg.connect(conninfo(small_db), autocommit=True) as conn:
                    conn.execute("CREATE TABLE late AS SELECT g AS id, repeat(md5(g::text), 4) AS pad "
                                 "FROM generate_series(1, 40000) g")
                created.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(warm_unit_handler, "warm_unit", create_then_warm)
    host = f"{small_db.host}:{small_db.port}"
    code = main(["local", "--dsn", f"postgresql://{small_db.user}@{host}/{small_db.database}",
                 "--database", small_db.database, "--out", str(tmp_path), "--no-progress", "--no-benchmark"])
    out, err = capsys.readouterr()
    assert created, "the warm-up never ran a unit"
    with psycopg.connect(conninfo(small_db)) as conn:  # the judge: the server's size of the new table
        late = int(conn.execute("SELECT pg_relation_size('late')").fetchone()[0])
    assert late > 5 * 2**20
    findings = _findings(tmp_path)
    census = findings["census"]
    key = f"{small_db.database}/public.late#table.main"
    assert census["end_census"] and key in census["created"], out + err
    caught = {c["key"]: c for c in census["catch_up"]}
    assert caught[key]["status"] == "READ" and caught[key]["bytes_read"] == late
    assert census["unread_bytes"] == 0 and code == 0, out + err
