"""RDS additional storage volumes (issue 22): DescribeDBInstances' ``AdditionalStorageVolumes`` through
DescribeInstance's logic and the storage progress sampler, with a botocore Stubber on a real RDS client,
so every member name is validated against botocore's RDS model (``AdditionalStorageVolumeOutput``)."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.stub import Stubber

from cutover_prep.dal.store import Store
from cutover_prep.rds.answers import DbInstance
from cutover_prep.rds.instances import describe_instance, instance_facts
from cutover_prep.rds.progress import sample_storage_progress
from tests.unit.contexts import run_state, state_json
from tests.unit.stored_sections import storage_initialization

RUN = state_json("r1", "ora-restored")
TARGET = (RUN["run_id"], RUN["target"]["db_instance_identifier"])  # what sample_storage_progress takes
ARN = "arn:aws:rds:us-east-1:123456789012:db:ora-restored"


def rds_client() -> Any:
    return boto3.client("rds", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def described(rdsdbdata2: dict[str, Any] | None = None) -> dict[str, Any]:
    """An RDS for Oracle instance with two additional volumes, as the botocore model documents them."""
    data2 = {"VolumeName": "RDSDBDATA2", "StorageVolumeStatus": "ACTIVE", "StorageType": "GP3",
             "AllocatedStorage": 400, "MaxAllocatedStorage": 1000, "IOPS": 12000, "StorageThroughput": 500,
             "StorageOperationStatus": "Initializing", "StorageOperationPercentProgress": 15}
    if rdsdbdata2 is not None:
        data2 = rdsdbdata2
    return {"DBInstances": [{
        "DBInstanceIdentifier": "ora-restored", "DBInstanceStatus": "available", "Engine": "oracle-ee",
        "EngineVersion": "19.0.0.0.ru-2025-10.rur-2025-10.r1", "DBInstanceClass": "db.r5.xlarge",
        "DBInstanceArn": ARN, "Endpoint": {"Address": "ora.example", "Port": 1521},
        "StorageType": "gp3", "AllocatedStorage": 100, "Iops": 3000, "StorageThroughput": 125,
        "StorageOperationStatus": "Initializing", "StorageOperationPercentProgress": 40,
        "AdditionalStorageVolumes": [
            data2,
            {"VolumeName": "RDSDBDATA3", "StorageVolumeStatus": "ACTIVE", "StorageType": "IO2",
             "AllocatedStorage": 200, "IOPS": 10000},
        ]}]}


def test_the_pinned_botocore_documents_the_additional_volume_members():
    model = rds_client().meta.service_model
    assert model.shape_for("DBInstance").members["AdditionalStorageVolumes"].member.name == \
        "AdditionalStorageVolumeOutput"
    members = model.shape_for("AdditionalStorageVolumeOutput").members
    assert {"VolumeName", "StorageVolumeStatus", "StorageOperationStatus", "StorageOperationPercentProgress",
            "AllocatedStorage", "IOPS", "MaxAllocatedStorage", "StorageThroughput", "StorageType"} <= set(members)


def test_describe_instance_records_each_additional_volume_and_samples_its_progress(store: Store):
    rds = rds_client()
    with Stubber(rds) as stub:
        stub.add_response("describe_db_instances", described(), {"DBInstanceIdentifier": "ora-restored"})
        stub.add_response("describe_blue_green_deployments", {"BlueGreenDeployments": []})
        facts = describe_instance(run_state(RUN), rds, store=store)
        stub.assert_no_pending_responses()
    assert facts["storage_type"] == "gp3" and facts["iops"] == 3000  # the primary volume, as before
    assert facts["additional_storage_volumes"] == [
        {"name": "RDSDBDATA2", "storage_type": "gp3", "allocated_storage_gb": 400, "max_allocated_storage_gb": 1000,
         "iops": 12000, "storage_throughput": 500, "status": "ACTIVE", "operation_status": "Initializing",
         "operation_percent": 15},
        {"name": "RDSDBDATA3", "storage_type": "io2", "allocated_storage_gb": 200, "max_allocated_storage_gb": None,
         "iops": 10000, "storage_throughput": None, "status": "ACTIVE", "operation_status": None,
         "operation_percent": None}]
    (sample,) = store.storage_samples("r1")
    assert (sample.step, sample.status, sample.percent) == ("DescribeInstance", "Initializing", 40)
    assert [v.model_dump() for v in sample.volumes] == [
        {"volume": "RDSDBDATA2", "status": "Initializing", "percent": 15},
        {"volume": "RDSDBDATA3", "status": None, "percent": None}]


def test_the_sampler_follows_each_volume_until_its_initialization_ends(store: Store):
    rds = rds_client()
    done2 = {"VolumeName": "RDSDBDATA2", "StorageVolumeStatus": "ACTIVE", "StorageType": "GP3",
             "AllocatedStorage": 400, "IOPS": 12000, "StorageThroughput": 500}  # no operation any more
    with Stubber(rds) as stub:
        stub.add_response("describe_db_instances", described(), {"DBInstanceIdentifier": "ora-restored"})
        stub.add_response("describe_db_instances", described(rdsdbdata2=done2),
                          {"DBInstanceIdentifier": "ora-restored"})
        first = sample_storage_progress(*TARGET, rds=rds, store=store, step="WarmUnit")
        second = sample_storage_progress(*TARGET, rds=rds, store=store, step="Finalize")
        stub.assert_no_pending_responses()
    assert first.volumes[0].model_dump() == {"volume": "RDSDBDATA2", "status": "Initializing", "percent": 15}
    assert second.volumes[0].model_dump() == {"volume": "RDSDBDATA2", "status": None, "percent": None}
    section = storage_initialization([s.summary() for s in store.storage_samples("r1")], [], 0)
    by_name = {v["volume"]: v for v in section["volumes"]}
    assert [p["pct"] for p in by_name["RDSDBDATA2"]["rds_initialized_pct"]] == [15.0, 100.0]
    assert by_name["RDSDBDATA2"]["initialized_at_end"] is True and by_name["RDSDBDATA2"]["reported"] is True
    # RDSDBDATA3 never reported an operation: nothing to chart, and its end proves nothing
    assert by_name["RDSDBDATA3"]["rds_initialized_pct"] == [] and by_name["RDSDBDATA3"]["reported"] is False
    # the primary volume is still initializing at 40 %
    assert [p["pct"] for p in section["rds_initialized_pct"]] == [40.0, 40.0]


def test_an_instance_without_additional_volumes_has_the_facts_and_samples_it_had(store: Store):
    rds = rds_client()
    plain = {"DBInstances": [{"DBInstanceIdentifier": "ora-restored", "DBInstanceStatus": "available",
                              "Engine": "postgres", "StorageType": "gp3", "AllocatedStorage": 100}]}
    with Stubber(rds) as stub:
        stub.add_response("describe_db_instances", plain, {"DBInstanceIdentifier": "ora-restored"})
        sample = sample_storage_progress(*TARGET, rds=rds, store=store, step="WarmUnit")
    assert sample.volumes is None and store.storage_samples("r1")[0].volumes is None
    assert "additional_storage_volumes" not in instance_facts(DbInstance.model_validate(plain["DBInstances"][0]))
    assert "volumes" not in storage_initialization([s.summary() for s in store.storage_samples("r1")], [], 0)
