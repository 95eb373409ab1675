"""Issue 32, finding 6: the preflight checks exactly what the run will read (its schema selection too).

The README's least-privilege PostgreSQL user before 14 (and the choice of anyone who will not grant
``pg_read_all_data``): USAGE on its schema and SELECT on its tables, with the catalogues waived by
``warmup.exclude_schemas: [pg_catalog, information_schema]``. Before the fix the Preflight state was given only
``warmup.databases``, so it checked the catalogues the run does not read and failed (``PreflightFailed ...
pg_catalog.pg_statistic: no privilege``), which pushed users to ``preflight warn``. The judge of what the role
may read is the server (``has_table_privilege``); the outcome is the recorded run and its preflight.json.
``cutover-prep preflight`` takes the same selection (``--include-schema`` / ``--exclude-schema``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.cli.main import main
from cutover_prep.dal.store import evidence_key
from cutover_prep.local.harness import LocalAws
from tests.conftest import conninfo
from tests.integration.test_workflow import finish, store_of

pytestmark = pytest.mark.postgres

WAIVED = ["pg_catalog", "information_schema"]


@pytest.fixture
def aws() -> Iterator[LocalAws]:
    with LocalAws() as local:
        local.create_instance("restored-db")
        yield local


@pytest.fixture
def app_db(pg_admin: Any) -> Iterator[dict[str, Any]]:
    """Schema ``app`` with two tables (integer columns: no TOAST) and an index, pg_prewarm installed by the
    admin, and a role with the README's per-schema grants: USAGE on ``app``, SELECT on all its tables."""
    if pg_admin.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    tag = uuid.uuid4().hex[:8]
    database, role, password = f"cutover_prep_test_{tag}", f"cp_least_{tag}", uuid.uuid4().hex
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    admin = replace(pg_admin, database=database)
    try:
        with psycopg.connect(conninfo(admin), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'").fetchone():
                pytest.skip("pg_prewarm is not available on this server")
            conn.execute("CREATE EXTENSION pg_prewarm")
            conn.execute("CREATE SCHEMA app")
            conn.execute("CREATE TABLE app.orders AS SELECT g AS id, g % 97 AS customer "
                         "FROM generate_series(1, 40000) g")
            conn.execute("ALTER TABLE app.orders ADD PRIMARY KEY (id)")
            conn.execute("CREATE TABLE app.items AS SELECT g AS id, g * 3 AS qty FROM generate_series(1, 20000) g")
            conn.execute(sql.SQL("GRANT USAGE ON SCHEMA app TO {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA app TO {}").format(sql.Identifier(role)))
            conn.execute("VACUUM")  # fsm and vm forks, read like the rest
        yield {"admin": admin, "role": replace(admin, user=role, password=password), "database": database}
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def may_select(db: dict[str, Any], relation: str) -> bool:
    with psycopg.connect(conninfo(db["admin"])) as conn:
        return conn.execute("SELECT has_table_privilege(%s, %s, 'SELECT')", (db["role"].user, relation)).fetchone()[0]


def run_input(aws: LocalAws, db: dict[str, Any], run_id: str) -> dict[str, Any]:
    spec = db["role"]
    aws.allow_db_host(spec.host)
    secret = aws.create_secret(f"db-{run_id}", {"username": spec.user, "password": spec.password,
                                                "engine": "postgres", "dbInstanceIdentifier": "restored-db"})
    return {"run_id": run_id,
            "target": {"db_instance_identifier": "restored-db", "secret_arn": secret, "engine": "postgres",
                       "host": spec.host, "port": spec.port, "database": spec.database},
            "warmup": {"unit_mb": 1, "databases": [spec.database], "max_concurrency": 2, "exclude_schemas": WAIVED},
            "benchmark": {"enabled": False}}  # preflight: the default, on_failure fail


def test_the_least_privilege_user_with_the_catalogues_waived_passes_the_preflight(aws, app_db):
    # the judge: the server says the role can read its tables and not the catalogue the old preflight named
    assert may_select(app_db, "app.orders") and may_select(app_db, "app.items")
    assert not may_select(app_db, "pg_catalog.pg_statistic")
    desc = finish(aws, run_input(aws, app_db, "least-privilege"))
    assert desc["status"] == "SUCCEEDED", (desc.get("error"), desc.get("cause"))  # before: PreflightFailed
    store = store_of(aws)
    doc = store.get_json(evidence_key("least-privilege", "preflight.json"))
    assert doc["ok"] is True, [c for c in doc["checks"] if c["status"] == "fail"]
    assert doc["target"]["user"] == app_db["role"].user
    # the read method was proven on a relation the run reads, not on a catalogue it waived
    method = [c for c in doc["checks"] if c["kind"] == "method" and c["status"] == "pass"]
    assert method and all(c["detail"].startswith("app.") for c in method), method
    assert not [c for c in doc["checks"] if "pg_catalog." in c["name"] + c["detail"]]
    findings = store.get_json(evidence_key("least-privilege", "findings.json"))
    assert findings["preflight"]["ok"] is True and findings["verdict"]["verdict"] == "READY", \
        [r for r in findings["verdict"]["reasons"] if not r["ok"]]


def test_a_table_of_a_selected_schema_the_role_cannot_read_still_fails_the_preflight_by_name(aws, app_db):
    with psycopg.connect(conninfo(app_db["admin"]), autocommit=True) as conn:
        conn.execute("CREATE TABLE app.secret AS SELECT g AS id FROM generate_series(1, 5000) g")  # not granted
    assert not may_select(app_db, "app.secret")
    desc = finish(aws, run_input(aws, app_db, "least-privilege-secret"))
    assert desc["status"] == "FAILED" and desc["error"] == "PreflightFailed", (desc.get("error"), desc.get("cause"))
    assert "app.secret" in desc["cause"] and "no privilege" in desc["cause"]
    assert "pg_catalog" not in desc["cause"]  # only what the run would read (before: the catalogues first)
    doc = store_of(aws).get_json(evidence_key("least-privilege-secret", "preflight.json"))
    failed = [c for c in doc["checks"] if c["status"] == "fail"]
    assert {c["name"] for c in failed} >= {f"{app_db['database']}/app.secret#table.main"}
    select = next(c for c in failed if c["name"].endswith("SELECT on tables"))
    assert "app.secret" in select["detail"] and "pg_catalog" not in select["detail"]
    assert aws.invocations.get("handlers.warm_unit", 0) == 0  # nothing was read


def test_the_preflight_command_takes_the_run_s_schema_selection(app_db, capsys):
    """One selection for both: ``cutover-prep preflight`` with the same --exclude-schema passes; without it,
    the catalogues are part of what the run would read and their missing grants fail by name."""
    spec = app_db["role"]
    dsn = f"postgresql://{spec.user}:{spec.password}@{spec.host}:{spec.port}/{spec.database}"
    capsys.readouterr()
    code = main(["preflight", "--dsn", dsn, "--database", spec.database,
                 *[a for schema in WAIVED for a in ("--exclude-schema", schema)]])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "preflight passed" in out.splitlines()[-1]
    code = main(["preflight", "--dsn", dsn, "--database", spec.database, "--include-schema", "app"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    code = main(["preflight", "--dsn", dsn, "--database", spec.database])
    out, err = capsys.readouterr()
    assert code == 1 and "pg_catalog." in out and "no privilege" in out, out + err
