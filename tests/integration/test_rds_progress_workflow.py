"""RDS's storage initialization progress through the whole workflow: the real ASL on moto, the real
handlers, a real PostgreSQL target. moto serializes its instance through botocore's RDS model, so
an instance given ``StorageOperationStatus`` in moto's backend answers with the new fields on the
wire and the pinned botocore parses them, as in AWS."""

from __future__ import annotations

from typing import Any

import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.rds.models import rds_backends

from cutover_prep.local.harness import LocalAws
from tests.integration.test_workflow import finish, run_input, store_of

pytestmark = pytest.mark.postgres


@pytest.fixture
def aws():
    with LocalAws() as local:
        local.create_instance("restored-db")
        yield local


def initializing(aws: LocalAws, status: str | None, percent: int | None) -> None:
    database: Any = rds_backends[DEFAULT_ACCOUNT_ID][aws.region].databases["restored-db"]
    database.storage_operation_status = status
    database.storage_operation_percent_progress = percent


def test_rds_still_initializing_ends_in_the_findings_and_fails_a_run_that_requires_it(aws, sample_db):
    initializing(aws, "Initializing", 40)
    payload = run_input(aws, sample_db, run_id="rdsinit")
    payload["verdict"] = {"require_storage_initialized": True}
    desc = finish(aws, payload)
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    out = desc["output_json"]
    assert out["verdict"] == "NOT_READY"
    assert [r for r in out["reasons"] if "Initializing 40 %" in r and "require_storage_initialized" in r]
    store = store_of(aws)
    section = store.get_json("runs/rdsinit/findings.json")["storage_initialization"]
    assert section["reported"] is True and section["initialized_at_end"] is False
    assert section["last"]["status"] == "Initializing" and section["last"]["percent"] == 40
    steps = [s["step"] for s in section["samples"]]
    assert steps[0] == "DescribeInstance" and steps[-1] == "Finalize" and "WarmUnit" in steps
    assert all(s["status"] == "Initializing" and s["percent"] == 40 for s in section["samples"])
    assert section["blocks_read_pct"][-1]["pct"] == 100.0  # our own coverage beside it
    assert section["blue_green"] == {"checked": True, "green": False}
    assert "RDS initialization progress: Initializing 40 %" in aws.client("s3").get_object(
        Bucket=aws.bucket, Key="runs/rdsinit/summary.md")["Body"].read().decode()


def test_without_the_fields_the_findings_say_not_reported_and_the_run_is_ready(aws, sample_db):
    desc = finish(aws, run_input(aws, sample_db, run_id="quiet"))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    assert desc["output_json"]["verdict"] == "READY"
    findings = store_of(aws).get_json("runs/quiet/findings.json")
    section = findings["storage_initialization"]
    assert section["reported"] is False and section["rds_initialized_pct"] == []
    assert len(section["samples"]) >= 2 and not section.get("gaps")
    assert findings["verdict"]["storage_initialization"] == "RDS initialization progress: not reported"
