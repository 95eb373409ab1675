"""The Preflight state through the workflow (issue 22): the run ASL executed by moto, the real handlers
in-process, the real PostgreSQL of this machine as the target.

A normal run proves its grants and read methods after Discover: evidence ``preflight.json`` and the
findings' ``preflight`` section. A run whose database user lacks a grant the run needs ends FAILED with
``PreflightFailed`` naming that grant, before any WarmUnit ran. The judge of "lacks the grant" is the
server (the role's membership, asked of PostgreSQL itself), the judge of the outcome the recorded run."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.dal.store import evidence_key
from cutover_prep.engines import ConnectionSpec
from cutover_prep.local.harness import LocalAws
from tests.conftest import conninfo
from tests.integration.test_workflow import finish, run_input, store_of

pytestmark = pytest.mark.postgres


@pytest.fixture
def aws() -> Iterator[LocalAws]:
    with LocalAws() as local:
        local.create_instance("restored-db")
        yield local


def entered_states(aws: LocalAws, desc: dict[str, Any]) -> list[str]:
    return [e["stateEnteredEventDetails"]["name"] for e in aws.history(desc["executionArn"])
            if "stateEnteredEventDetails" in e]


def test_a_normal_run_proves_its_target_after_discover_and_reports_it(aws: LocalAws,
                                                                       sample_db: ConnectionSpec) -> None:
    desc = finish(aws, run_input(aws, sample_db, run_id="preflight-ok"))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    states = entered_states(aws, desc)
    assert states.index("Discover") < states.index("Preflight") < states.index("WarmUp")
    store = store_of(aws)
    doc = store.get_json(evidence_key("preflight-ok", "preflight.json"))
    assert doc["ok"] is True and doc["failed"] == [] and doc["engine"] == "postgres"
    assert doc["target"]["database"] == sample_db.database
    # the read method was proven on the server, with its counters
    method = [c for c in doc["checks"] if c["kind"] == "method" and c["status"] == "pass"]
    assert method and all(c["data"].get("blocks", 0) >= 1 for c in method)
    findings = store.get_json(evidence_key("preflight-ok", "findings.json"))
    section = findings["preflight"]
    assert section["ok"] is True and section["seconds"] == doc["seconds"] and section["failed"] == []
    assert [c["name"] for c in section["checks"]] == [c["name"] for c in doc["checks"]]
    assert store.get_run("preflight-ok").preflight.ok is True
    summary = store._s3.get_object(Bucket=store.bucket, Key=evidence_key("preflight-ok", "summary.md"))
    text = summary["Body"].read().decode()
    assert "## Preflight" in text and "preflight passed" in text
    history = json.dumps(aws.history(desc["executionArn"]), default=str)
    assert sample_db.password == "" or sample_db.password not in history + json.dumps(doc)


def read_all_data_role(sample_db: ConnectionSpec, pg_login_role: Any) -> str:
    """A role that may SELECT everything (pg_read_all_data) but read no block below SQL: no EXECUTE on
    pg_read_binary_file, and no pg_prewarm in the database. The server says so before the run."""
    role = pg_login_role("GRANT pg_read_all_data TO {role}")
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        member, execute, prewarm = conn.execute(
            "SELECT pg_has_role(%s, 'pg_read_all_data', 'MEMBER'), "
            "has_function_privilege(%s, 'pg_catalog.pg_read_binary_file(text, bigint, bigint)', 'EXECUTE'), "
            "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm')", (role, role)).fetchone()
    assert (member, execute, prewarm) == (True, False, False)
    return role


def start_as(aws: LocalAws, sample_db: ConnectionSpec, role: str, run_id: str, **extra: Any) -> dict[str, Any]:
    payload = run_input(aws, sample_db, run_id=run_id)
    payload["target"]["secret_arn"] = aws.create_secret(f"db-{run_id}", {
        "username": role, "password": "unused-" + uuid.uuid4().hex, "engine": "postgres",
        "dbInstanceIdentifier": "restored-db"})  # trust authentication: the password is not checked
    return finish(aws, {**payload, **extra})


def test_a_user_without_a_grant_fails_the_run_by_name_before_any_unit_is_read(
        aws: LocalAws, sample_db: ConnectionSpec, pg_login_role: Any) -> None:
    role = read_all_data_role(sample_db, pg_login_role)
    desc = start_as(aws, sample_db, role, "preflight-no-grant")
    assert desc["status"] == "FAILED" and desc["error"] == "PreflightFailed", (desc.get("error"), desc.get("cause"))
    grant = "GRANT EXECUTE ON FUNCTION pg_read_binary_file"
    assert grant in desc["cause"] and "pg_prewarm extension or EXECUTE on pg_read_binary_file" in desc["cause"]
    store = store_of(aws)
    run = store.get_run("preflight-no-grant").stored()
    assert run["status"] == "FAILED" and run["error"] == "PreflightFailed" and grant in run["cause"]
    assert run["preflight"]["ok"] is False
    assert store.get_json(evidence_key("preflight-no-grant", "failure.json"))["error"] == "PreflightFailed"
    doc = store.get_json(evidence_key("preflight-no-grant", "preflight.json"))
    assert doc["target"]["user"] == role
    failed = {c["name"].split(": ", 1)[1] for c in doc["checks"] if c["status"] == "fail"}
    assert failed == {"pg_prewarm extension", "EXECUTE on pg_read_binary_file",
                      "pg_prewarm extension or EXECUTE on pg_read_binary_file"}
    # the plan had units to read (the role may SELECT every table), and none was read: no WarmUnit ran
    assert store.get_run("preflight-no-grant").units_total > 0
    assert aws.invocations.get("handlers.warm_unit", 0) == 0
    assert "WarmUp" not in entered_states(aws, desc) and list(store.units("preflight-no-grant")) == []


def test_a_restart_after_the_grant_runs_the_preflight_again_and_reads(
        aws: LocalAws, sample_db: ConnectionSpec, pg_login_role: Any) -> None:
    """Decision 46: a restarted run (its plan reused) runs the preflight again; that is how the DBA's grant is
    proven. The grant is given on the server between the two attempts."""
    role = read_all_data_role(sample_db, pg_login_role)
    payload = run_input(aws, sample_db, run_id="preflight-again")
    payload["target"]["secret_arn"] = aws.create_secret("db-again", {
        "username": role, "password": "unused", "engine": "postgres", "dbInstanceIdentifier": "restored-db"})
    first = finish(aws, payload)
    assert first["error"] == "PreflightFailed" and aws.invocations.get("handlers.warm_unit", 0) == 0
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION pg_catalog.pg_read_binary_file(text, bigint, bigint) TO {}")
                     .format(sql.Identifier(role)))
    second = finish(aws, payload)
    assert second["status"] == "SUCCEEDED", (second.get("error"), second.get("cause"))
    assert second["output_json"]["coverage_pct"] == 100.0
    store = store_of(aws)
    run = store.get_run("preflight-again").stored()
    assert run["restarts"] == 1 and run["plan_reused"] is True and run["preflight"]["ok"] is True
    doc = store.get_json(evidence_key("preflight-again", "preflight.json"))
    grant = next(c for c in doc["checks"] if c["name"].endswith("EXECUTE on pg_read_binary_file"))
    assert grant["status"] == "info" and grant["detail"] == "granted"
    assert store.get_json(evidence_key("preflight-again", "findings.json"))["preflight"]["ok"] is True


def test_a_user_without_select_fails_by_name_too(aws: LocalAws, sample_db: ConnectionSpec, pg_login_role: Any) -> None:
    role = pg_login_role()  # CONNECT (PUBLIC) only: no pg_read_all_data, no SELECT on the sample's tables
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        member, = conn.execute("SELECT pg_has_role(%s, 'pg_read_all_data', 'MEMBER')", (role,)).fetchone()
    assert member is False
    desc = start_as(aws, sample_db, role, "preflight-no-select")
    assert desc["status"] == "FAILED" and desc["error"] == "PreflightFailed", (desc.get("error"), desc.get("cause"))
    assert f"GRANT pg_read_all_data TO {role}" in desc["cause"]


def test_on_failure_warn_records_the_failed_check_and_the_run_goes_on(
        aws: LocalAws, sample_db: ConnectionSpec, pg_login_role: Any) -> None:
    role = read_all_data_role(sample_db, pg_login_role)
    desc = start_as(aws, sample_db, role, "preflight-warn", preflight={"on_failure": "warn"})
    assert desc["status"] == "SUCCEEDED", (desc.get("error"), desc.get("cause"))
    assert "WarmUp" in entered_states(aws, desc)  # the run went on past the failed preflight and read
    store = store_of(aws)
    run = store.get_run("preflight-warn").stored()
    assert run["preflight"]["ok"] is False and run["preflight"]["on_failure"] == "warn"
    findings = store.get_json(evidence_key("preflight-warn", "findings.json"))
    assert findings["preflight"]["ok"] is False and findings["preflight"]["on_failure"] == "warn"
    assert "pg_prewarm extension or EXECUTE on pg_read_binary_file" in findings["preflight"]["failed"][-1]


def test_cutover_prep_local_fails_by_name_by_default_and_warns_when_asked(
        sample_db: ConnectionSpec, pg_login_role: Any, tmp_path: Any, capsys: Any) -> None:
    from cutover_prep.cli.main import main

    if sample_db.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    role = read_all_data_role(sample_db, pg_login_role)
    dsn = f"postgresql://{role}@{sample_db.host}:{sample_db.port}/{sample_db.database}"
    args = ["local", "--dsn", dsn, "--database", sample_db.database, "--exclude-schema", "pg_catalog",
            "--exclude-schema", "information_schema", "--unit-mb", "8", "--no-progress", "--no-benchmark"]
    capsys.readouterr()
    code = main([*args, "--out", str(tmp_path / "fail")])
    out, err = capsys.readouterr()
    assert code == 3, out + err  # the run failed: nothing was read
    assert "run failed: PreflightFailed: " in err and "GRANT EXECUTE ON FUNCTION pg_read_binary_file" in err
    assert err.count("\n") == 1
    code = main([*args, "--out", str(tmp_path / "warn"), "--preflight", "warn"])
    out, err = capsys.readouterr()
    findings = json.loads((tmp_path / "warn" / "findings.json").read_text())
    assert findings["preflight"]["ok"] is False and findings["units"]["done"] > 0, out + err
    assert "## Preflight" in (tmp_path / "warn" / "summary.md").read_text()
