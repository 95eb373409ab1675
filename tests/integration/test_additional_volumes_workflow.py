"""RDS additional storage volumes through the whole workflow (issue 22): the real ASL on moto, the real
handlers, a real PostgreSQL target. moto serializes its instance through botocore's RDS model, so an
instance given ``AdditionalStorageVolumes`` in moto's backend answers with them on the wire and the pinned
botocore parses them, as in AWS. (RDS gives additional volumes to Oracle and SQL Server only; PostgreSQL is
the target that runs here: its engine maps no file to a volume, so every planned byte is on the primary,
which is what such an engine's findings must say.)"""

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
        database: Any = rds_backends[DEFAULT_ACCOUNT_ID][local.region].databases["restored-db"]
        database.additional_storage_volumes = [
            {"VolumeName": "RDSDBDATA2", "StorageVolumeStatus": "ACTIVE", "StorageType": "GP3",
             "AllocatedStorage": 400, "IOPS": 12000, "StorageThroughput": 500,
             "StorageOperationStatus": "Initializing", "StorageOperationPercentProgress": 15},
            {"VolumeName": "RDSDBDATA3", "StorageVolumeStatus": "ACTIVE", "StorageType": "IO2",
             "AllocatedStorage": 200, "IOPS": 10000},
        ]
        yield local


def test_each_volume_is_recorded_sampled_and_reported(aws, sample_db):
    desc = finish(aws, run_input(aws, sample_db, run_id="volumes"))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    findings = store_of(aws).get_json("runs/volumes/findings.json")
    extra = findings["instance"]["additional_storage_volumes"]
    assert [(v["name"], v["storage_type"], v["allocated_storage_gb"], v["iops"]) for v in extra] == [
        ("RDSDBDATA2", "gp3", 400, 12000), ("RDSDBDATA3", "io2", 200, 10000)]
    per_volume = {v["volume"]: v for v in findings["storage_initialization"]["volumes"]}
    assert per_volume["RDSDBDATA2"]["last"]["status"] == "Initializing"
    assert per_volume["RDSDBDATA2"]["last"]["percent"] == 15
    assert {p["pct"] for p in per_volume["RDSDBDATA2"]["rds_initialized_pct"]} == {15.0}
    assert per_volume["RDSDBDATA3"]["reported"] is False
    samples = findings["storage_initialization"]["samples"]
    assert samples[0]["step"] == "DescribeInstance" and samples[-1]["step"] == "Finalize"
    rows = {r["volume"]: r for r in findings["volumes"]["volumes"]}
    assert list(rows) == ["primary", "RDSDBDATA2", "RDSDBDATA3"]
    planned = findings["bytes"]["planned"]
    assert planned > 0 and rows["primary"]["bytes_planned"] == planned  # no file of PostgreSQL on another volume
    assert rows["RDSDBDATA2"]["bytes_planned"] == 0 and rows["RDSDBDATA3"]["bytes_planned"] == 0
    # db.m5.large (the harness's class): 650 Mbps = 81.25 MiB/s and 3,600 IOPS sustained (EC2's EBS table) cap
    # RDSDBDATA2's own 12,000 IOPS / 500 MiB/s
    assert (rows["RDSDBDATA2"]["ceiling_iops"], rows["RDSDBDATA2"]["ceiling_bound_by"]) == (3600, "instance")
    assert rows["RDSDBDATA2"]["ceiling_mib_s"] == pytest.approx(81.25, abs=0.1)
    assert [r["volume"] for r in findings["coverage"]["by_volume"]] == ["primary", "RDSDBDATA2", "RDSDBDATA3"]
    s3 = aws.client("s3")
    summary = s3.get_object(Bucket=aws.bucket, Key="runs/volumes/summary.md")["Body"].read().decode()
    assert "## Storage volumes" in summary and "`RDSDBDATA2`" in summary
    page = s3.get_object(Bucket=aws.bucket, Key="runs/volumes/report.html")["Body"].read().decode()
    assert '<section id="volumes">' in page and 'id="chart-volumes-init"' in page
