"""Issue 33 §2 through the deployed workflow (the real ASL on moto, the real handlers, the MariaDB here): the
engine-internal bytes of a MariaDB run are judged by what RDS says of the whole volume. moto's instance answers
with ``StorageOperationStatus`` / ``StorageOperationPercentProgress`` on the wire as RDS does
(tests/integration/test_rds_progress_workflow.py): reported during the run and gone at its end, they are covered,
so even ``verdict.engine_internal: strict`` is READY; still ``Initializing`` at the end, strict is NOT_READY by
ENGINE_INTERNAL alone, naming RDS's percent; the default names them and is READY."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.rds.models import rds_backends

from cutover_prep.dal.store import evidence_key
from cutover_prep.engines.mysql.sample_db import create_sample
from cutover_prep.engines.mysql.sql import quote_ident
from cutover_prep.local.harness import LocalAws
from tests.conftest import MYSQL_TEST_PREFIX
from tests.integration.test_workflow import finish, store_of

pytestmark = pytest.mark.mysql


@pytest.fixture(scope="module")
def database(mysql_admin) -> Iterator[str]:
    name = f"{MYSQL_TEST_PREFIX}ei_flow"
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True, charset="utf8mb4")
    try:
        create_sample(conn, name, rows=300, blob_kib=4)
        yield name
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {quote_ident(name)}")
        conn.close()


def initializing(aws: LocalAws, status: str | None, percent: int | None) -> None:
    instance: Any = rds_backends[DEFAULT_ACCOUNT_ID][aws.region].databases["restored-db"]
    instance.storage_operation_status = status
    instance.storage_operation_percent_progress = percent


def run(spec, database: str, verdict: dict[str, Any], *, done_after_first_unit: bool) -> tuple[dict, dict]:
    with LocalAws() as aws:
        aws.create_instance("restored-db", engine="mariadb", engine_version="10.11.6", db_name=database)
        aws.allow_db_host(spec.host)
        initializing(aws, "Initializing", 40)
        if done_after_first_unit:  # RDS finishes initializing the volume while the warm-up runs
            aws.hooks["handlers.warm_unit"] = lambda: initializing(aws, None, None)
        secret = aws.create_secret("db", {"username": spec.user, "password": spec.password, "engine": "mariadb",
                                          "dbInstanceIdentifier": "restored-db"})
        desc = finish(aws, {"run_id": "ei", "target": {"db_instance_identifier": "restored-db", "secret_arn": secret,
                                                       "engine": "mariadb", "host": spec.host, "port": spec.port,
                                                       "database": database},
                            "warmup": {"unit_mb": 1, "chunk_mb": 1, "databases": [database], "max_concurrency": 2},
                            "benchmark": {"enabled": False}, "verdict": verdict})
        findings = store_of(aws).get_json(evidence_key("ei", "findings.json"))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    return desc["output_json"], findings


def engine_internal(findings: dict) -> dict:
    (reason,) = [r for r in findings["verdict"]["reasons"] if r["code"] == "ENGINE_INTERNAL"]
    return reason


def test_rds_done_initializing_covers_the_engine_internal_bytes_even_when_strict(mysql_admin, database) -> None:
    out, findings = run(mysql_admin, database, {"engine_internal": "strict"}, done_after_first_unit=True)
    assert out["verdict"] == "READY", out
    section = findings["storage_initialization"]
    assert section["reported"] is True and section["initialized_at_end"] is True
    reason = engine_internal(findings)
    assert reason["ok"] and reason.get("judged", True) and "covered" in reason["message"]
    assert findings["census"]["engine_internal_bytes"] > 0 and findings["census"]["unread_bytes"] == 0


def test_rds_still_initializing_fails_strict_by_engine_internal_alone(mysql_admin, database) -> None:
    out, findings = run(mysql_admin, database, {"engine_internal": "strict"}, done_after_first_unit=False)
    assert out["verdict"] == "NOT_READY"
    failing = [r["code"] for r in findings["verdict"]["reasons"] if not r["ok"]]
    assert failing == ["ENGINE_INTERNAL"], findings["verdict"]["reasons"]
    assert "Initializing 40 %" in engine_internal(findings)["message"]
    named, findings = run(mysql_admin, database, {}, done_after_first_unit=False)
    assert named["verdict"] == "READY" and engine_internal(findings)["judged"] is False
