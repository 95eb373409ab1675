"""Issue 20, finding 2: a run that restores a snapshot records the instance the snapshot was taken from, so
that instance's secret may be used on the restored one (``secret_binding``) and no other instance's.

Judge: moto's RDS (the instance the test created and snapshotted), and the DescribeDBSnapshots contract:
"If this identifier is for an automated snapshot, the SnapshotType parameter must also be specified"
(Amazon RDS API Reference, DescribeDBSnapshots, DBSnapshotIdentifier)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from cutover_prep.engines import DatabaseUnreachable
from cutover_prep.rds.instances import describe_instance, snapshot_source, start_restore
from cutover_prep.settings import ConnectionPolicy
from tests.unit.contexts import run_state, spec_of

REGION = "us-east-1"


@pytest.fixture
def rds(monkeypatch: pytest.MonkeyPatch) -> Any:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    with mock_aws():
        client = boto3.client("rds", region_name=REGION)
        client.create_db_instance(DBInstanceIdentifier="orders-prod", Engine="postgres", DBInstanceClass="db.m5.large",
                                  AllocatedStorage=20, MasterUsername="admin", MasterUserPassword="not-used-here")
        client.create_db_snapshot(DBInstanceIdentifier="orders-prod", DBSnapshotIdentifier="orders-prod-snap")
        yield client


def restoring_run() -> dict[str, Any]:
    return {"run_id": "r-restore", "started_at": datetime.now(UTC).isoformat(),
            "target": {"db_instance_identifier": "orders-rehearsal", "engine": "postgres",
                       "secret_arn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:orders-prod-AbCdEf"},
            "restore": {"snapshot_identifier": "orders-prod-snap", "multi_az": False, "tags": {},
                        "max_wait_minutes": 60}}


def test_the_restore_records_the_snapshots_source_instance(rds: Any) -> None:
    prod = rds.describe_db_instances(DBInstanceIdentifier="orders-prod")["DBInstances"][0]
    request = start_restore(run_state(restoring_run()), rds)
    assert request["restored_from"] == {
        "snapshot_identifier": "orders-prod-snap", "db_instance_identifier": "orders-prod",
        "address": prod["Endpoint"]["Address"], "db_instance_arn": prod["DBInstanceArn"]}
    # DescribeInstance hands it on with the restored instance's facts (what every later step sees)
    run = {**restoring_run(), "restore_request": request}
    facts = describe_instance(run_state(run), rds)
    assert facts["restored_from"]["db_instance_identifier"] == "orders-prod"
    assert facts["address"] != prod["Endpoint"]["Address"]  # the restored instance is another one


def test_the_secret_of_the_source_instance_is_then_used_and_another_is_not(rds: Any) -> None:
    run = {**restoring_run(), "restore_request": start_restore(run_state(restoring_run()), rds)}
    run["instance"] = describe_instance(run_state(run), rds)
    policy = ConnectionPolicy()

    def secret(instance: str):
        return lambda arn: json.dumps({"username": "u", "password": "pw-9", "dbInstanceIdentifier": instance})

    assert spec_of(run, secret("orders-prod"), policy).host == run["instance"]["address"]
    with pytest.raises(DatabaseUnreachable) as err:
        spec_of(run, secret("billing-prod"), policy)
    assert type(err.value).__name__ == "SecretNotBound"


def test_a_run_that_restores_nothing_has_no_source(rds: Any) -> None:
    run = {**restoring_run(), "target": {**restoring_run()["target"], "db_instance_identifier": "orders-prod"}}
    del run["restore"]
    run["restore_request"] = {"restored_from": {"db_instance_identifier": "billing-prod"}}  # not this run's
    assert "restored_from" not in describe_instance(run_state(run), rds)


def test_a_snapshot_that_cannot_be_read_names_no_source(rds: Any) -> None:
    assert snapshot_source(rds, "no-such-snap") == {"snapshot_identifier": "no-such-snap"}


@pytest.mark.parametrize(("identifier", "expected"), [
    ("rds:orders-prod-2026-11-01-03-10", {"SnapshotType": "automated"}),
    ("awsbackup:job-1234", {"SnapshotType": "awsbackup"}),
    ("arn:aws:rds:us-east-1:444455556666:snapshot:shared-snap", {"IncludeShared": True}),
    ("orders-prod-snap", {}),
])
def test_the_snapshot_is_described_the_way_its_kind_needs(identifier: str, expected: dict[str, Any]) -> None:
    client = boto3.client("rds", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        stub.add_response("describe_db_snapshots", {"DBSnapshots": [{"DBInstanceIdentifier": "orders-prod"}]},
                          {"DBSnapshotIdentifier": identifier, **expected})
        stub.add_client_error("describe_db_instances", "DBInstanceNotFound")  # the source is gone
        assert snapshot_source(client, identifier) == {"snapshot_identifier": identifier,
                                                       "db_instance_identifier": "orders-prod"}
