"""Issue 32, finding 2: a failed end census must not leave the run READY on the start census.

The real ASL run by moto's interpreter, the real handlers in-process, the machine's PostgreSQL as the target.
The role of the run may SELECT only ``public.early``; while the warm-up runs (before the first WarmUnit reads,
by the harness's hook: the run's own progress, no sleep) the admin creates ``public.late``, which the role
cannot read. The judge is the server: ``has_table_privilege`` says the role cannot read ``late``, and
``pg_relation_size`` that it holds data. A run that sees ``late`` (the end census) is NOT_READY by name; a run
whose end census failed cannot know about it, so it must be NOT_READY too, by a reason of its own naming the
error (before the fix the ASL's Catch went on and the verdict was READY on the start census).
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.engines import DatabaseUnreachable, TransientDatabaseError
from cutover_prep.local.harness import LocalAws
from tests.conftest import conninfo
from tests.integration.test_workflow import finish, store_of

pytestmark = pytest.mark.postgres

END_CENSUS = "handlers.end_census"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def role_db(pg_admin: Any) -> Any:
    """A database with one table the run's role may read (no TOAST: integer columns), pg_prewarm installed
    by the admin, and the role: CONNECT (PUBLIC), USAGE on public, SELECT on ``early`` only."""
    tag = uuid.uuid4().hex[:8]
    database, role, password = f"cutover_prep_test_{tag}", f"cp_census_{tag}", uuid.uuid4().hex
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    admin = replace(pg_admin, database=database)
    try:
        with psycopg.connect(conninfo(admin), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'").fetchone():
                pytest.skip("pg_prewarm is not available on this server")
            conn.execute("CREATE EXTENSION pg_prewarm")
            conn.execute("CREATE TABLE early AS SELECT g AS id, g * 2 AS twice FROM generate_series(1, 60000) g")
            conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("GRANT SELECT ON early TO {}").format(sql.Identifier(role)))
        yield {"admin": admin, "role": replace(admin, user=role, password=password)}
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.fixture
def aws():
    with LocalAws() as local:
        local.create_instance("restored-db")
        yield local


def run_input(aws: LocalAws, spec: Any, run_id: str) -> dict[str, Any]:
    aws.allow_db_host(spec.host)
    secret = aws.create_secret(f"db-{run_id}", {"username": spec.user, "password": spec.password,
                                                "engine": "postgres", "dbInstanceIdentifier": "restored-db"})
    return {"run_id": run_id,
            "target": {"db_instance_identifier": "restored-db", "secret_arn": secret, "engine": "postgres",
                       "host": spec.host, "port": spec.port, "database": spec.database},
            "warmup": {"unit_mb": 1, "databases": [spec.database], "max_concurrency": 2,
                       "exclude_schemas": ["pg_catalog", "information_schema"]},
            "benchmark": {"enabled": False}}  # the preflight passes on this selection (finding 6)


def create_late_on_first_unit(aws: LocalAws, admin: Any) -> list[bool]:
    """Before the first WarmUnit runs, the admin creates ``late`` (not granted to the role)."""
    created: list[bool] = []
    lock = threading.Lock()

    def hook() -> None:
        with lock:
            if not created:
                with psycopg.connect(conninfo(admin), autocommit=True) as conn:
                    conn.execute("CREATE TABLE late AS SELECT g AS id FROM generate_series(1, 30000) g")
                created.append(True)
    aws.hooks["handlers.warm_unit"] = hook
    return created


def judge_late(db: dict[str, Any]) -> int:
    """The server's word: the role cannot read ``late``, and it holds this many bytes."""
    with psycopg.connect(conninfo(db["admin"])) as conn:
        may, size = conn.execute("SELECT has_table_privilege(%s, 'public.late', 'SELECT'), "
                                 "pg_relation_size('public.late')", (db["role"].user,)).fetchone()
    assert may is False and size > 0
    return int(size)


def asl_state(name: str) -> dict[str, Any]:
    return json.loads((REPO / "statemachines" / "cutover-run.asl.json").read_text())["States"][name]


def failing(reasons: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["code"]: r for r in reasons if not r["ok"]}


def test_a_table_created_mid_run_the_role_cannot_read_is_named_by_the_end_census(aws, role_db):
    """The regression: the end census works, sees ``late`` and the run is NOT_READY naming it."""
    created = create_late_on_first_unit(aws, role_db["admin"])
    desc = finish(aws, run_input(aws, role_db["role"], "census-works"))
    assert desc["status"] == "SUCCEEDED" and created, desc.get("cause")
    late = judge_late(role_db)
    findings = store_of(aws).get_json("runs/census-works/findings.json")
    census = findings["census"]
    assert census["end_census"] is True
    key = f"{role_db['admin'].database}/public.late#table.main"
    unread = {u["key"]: u for u in census["unread"]}
    assert unread[key]["unread_bytes"] == late and not unread[key]["waived"]
    assert findings["verdict"]["verdict"] == "NOT_READY"
    assert "public.late" in failing(findings["verdict"]["reasons"])["UNREAD_OBJECTS"]["message"]
    assert "END_CENSUS" not in failing(findings["verdict"]["reasons"])


def test_a_failed_end_census_leaves_the_run_not_ready_naming_the_error(aws, role_db):
    """The end census fails for good (the database cannot be reached at each attempt): the run still goes on to
    its findings, but it is NOT_READY with END_CENSUS naming the error; the start census alone would say READY
    (nothing it knows of is unread). The ASL retries the step a bounded number of times first."""
    created = create_late_on_first_unit(aws, role_db["admin"])

    def unreachable(event: dict[str, Any]) -> None:
        if "error" not in event:  # each census attempt; not the record of the failure (RecordEndCensusFailure)
            raise DatabaseUnreachable("connection refused (injected at the end census)")

    aws.faults[END_CENSUS] = [unreachable] * 10
    desc = finish(aws, run_input(aws, role_db["role"], "census-fails"))
    assert desc["status"] == "SUCCEEDED" and created, desc.get("cause")
    judge_late(role_db)
    findings = store_of(aws).get_json("runs/census-fails/findings.json")
    assert findings["census"]["end_census"] is False
    # the start census knows nothing unread: without its own reason the run would be READY
    assert findings["census"]["unread_bytes"] == 0
    assert findings["verdict"]["verdict"] == "NOT_READY"
    reason = failing(findings["verdict"]["reasons"])["END_CENSUS"]
    assert "the end census did not run" in reason["message"] and "DatabaseUnreachable" in reason["message"]
    assert "injected at the end census" in reason["message"]
    # bounded: the first attempt and the ASL's retries of a database error, then the record of the failure
    (retrier,) = [r for r in asl_state("EndCensus")["Retry"] if "DatabaseUnreachable" in r["ErrorEquals"]]
    assert 1 <= retrier["MaxAttempts"] <= 3
    assert aws.invocations[END_CENSUS] == 1 + retrier["MaxAttempts"] + 1, aws.invocations
    assert desc["output_json"]["verdict"] == "NOT_READY"
    report = aws.client("s3").get_object(Bucket=aws.bucket, Key="runs/census-fails/report.html")["Body"].read()
    assert b"census taken at the start only: the end census did not run, DatabaseUnreachable" in report
    assert any("end census did not run" in r for r in desc["output_json"]["reasons"])


def test_a_transient_end_census_error_is_retried_and_the_census_taken(aws, role_db):
    """One transient error (a dropped connection): the ASL retries the step, the end census is taken and sees
    ``late`` (before the fix the Catch went on at once and the run was READY on the start census)."""
    create_late_on_first_unit(aws, role_db["admin"])

    def dropped(_event: Any) -> None:
        raise TransientDatabaseError("server closed the connection unexpectedly (injected)")

    aws.faults[END_CENSUS] = [dropped]
    desc = finish(aws, run_input(aws, role_db["role"], "census-retried"))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    late = judge_late(role_db)
    assert aws.invocations[END_CENSUS] == 2
    findings = store_of(aws).get_json("runs/census-retried/findings.json")
    assert findings["census"]["end_census"] is True
    key = f"{role_db['admin'].database}/public.late#table.main"
    assert {u["key"]: u["unread_bytes"] for u in findings["census"]["unread"]}[key] == late
    assert findings["verdict"]["verdict"] == "NOT_READY"
    assert "END_CENSUS" not in failing(findings["verdict"]["reasons"])
