"""Restore a DB instance from a snapshot and wait until it is available."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cutover_prep.engines import RDS_ENGINE_FAMILY
from cutover_prep.rds_progress import blue_green_of, sample_storage_progress

FAILED_STATES = {
    "failed", "incompatible-restore", "incompatible-parameters", "incompatible-network",
    "incompatible-option-group", "incompatible-credentials", "restore-error", "storage-full",
    "inaccessible-encryption-credentials", "deleting", "deleted",
}
RUN_TAG = "cutover-prep:run-id"


class RestoreFailed(Exception):
    error_type = "RestoreFailed"


class RestoreTimeout(Exception):
    error_type = "RestoreTimeout"


def start_restore(run: dict[str, Any], rds: Any) -> dict[str, Any]:
    """Start the restore; idempotent: an instance this run already created is accepted."""
    target, restore, run_id = run["target"], run["restore"], run["run_id"]
    identifier = target["db_instance_identifier"]
    params: dict[str, Any] = {
        "DBInstanceIdentifier": identifier,
        "DBSnapshotIdentifier": restore["snapshot_identifier"],
        "MultiAZ": restore["multi_az"],
        "PubliclyAccessible": False,
        "CopyTagsToSnapshot": True,
        "Tags": [{"Key": RUN_TAG, "Value": run_id}]
        + [{"Key": k, "Value": v} for k, v in sorted(restore["tags"].items())],
    }
    optional = {
        "DBInstanceClass": "db_instance_class", "StorageType": "storage_type", "Iops": "iops",
        "StorageThroughput": "storage_throughput", "AllocatedStorage": "allocated_gb",
        "DBSubnetGroupName": "db_subnet_group_name",
        "DBParameterGroupName": "db_parameter_group_name", "OptionGroupName": "option_group_name",
    }
    params.update({api: restore[key] for api, key in optional.items() if restore.get(key) is not None})
    if restore.get("vpc_security_group_ids"):
        params["VpcSecurityGroupIds"] = restore["vpc_security_group_ids"]
    try:
        rds.restore_db_instance_from_db_snapshot(**params)
    except ClientError as exc:
        code, message = exc.response["Error"]["Code"], exc.response["Error"]["Message"]
        if code == "DBInstanceAlreadyExists" and _created_by(rds, identifier, run_id):
            return {"restore_started": True, "resumed": True}
        raise RestoreFailed(f"restore of {identifier} from {restore['snapshot_identifier']} "
                            f"was refused: {code}: {message}") from None
    return {"restore_started": True, "resumed": False, "requested_at": datetime.now(UTC).isoformat()}


def _created_by(rds: Any, identifier: str, run_id: str) -> bool:
    instance = rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"][0]
    tags = instance.get("TagList") or []
    return any(t["Key"] == RUN_TAG and t["Value"] == run_id for t in tags)


def describe_instance(run: dict[str, Any], rds: Any, *, now: datetime | None = None,
                      store: Any = None) -> dict[str, Any]:
    """The instance's state and facts; raise when it failed or the wait ran out.

    With ``store``, each answer is also a sample of RDS's storage progress (``rds_progress``), and
    once the instance is available the facts say whether it is a Blue/Green deployment's green one."""
    identifier = run["target"]["db_instance_identifier"]
    try:
        instance = rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"][0]
    except ClientError as exc:
        code = exc.response["Error"]["Code"]
        if code == "DBInstanceNotFound" and run.get("restore"):
            instance = {"DBInstanceStatus": "creating"}  # eventual consistency right after the restore call
        elif code == "DBInstanceNotFound":
            raise RestoreFailed(f"DB instance {identifier} does not exist; check target.db_instance_identifier "
                                "or pass restore.snapshot_identifier to create it") from None
        else:
            raise
    status = instance.get("DBInstanceStatus", "unknown")
    if store is not None and instance.get("DBInstanceIdentifier"):
        sample_storage_progress(run, rds=rds, store=store, step="DescribeInstance", instance=instance)
    if status in FAILED_STATES:
        raise RestoreFailed(f"DB instance {identifier} is {status}")
    ready = status == "available"
    if not ready:
        restore = run.get("restore") or {}
        max_wait = int(restore.get("max_wait_minutes", 180)) * 60
        started = datetime.fromisoformat(run["started_at"])
        waited = ((now or datetime.now(UTC)) - started).total_seconds()
        if waited > max_wait:
            raise RestoreTimeout(f"DB instance {identifier} is still {status} after {int(waited // 60)} "
                                 f"minutes (restore.max_wait_minutes={max_wait // 60})")
    facts = {"status": status, "ready": ready, **instance_facts(instance)}
    if ready and store is not None:
        facts["blue_green"] = blue_green_of(rds, instance.get("DBInstanceArn"))
    return facts


def instance_facts(instance: dict[str, Any]) -> dict[str, Any]:
    """The facts of a DescribeDBInstances entry the workflow uses (endpoint, engine, class, storage)."""
    endpoint = instance.get("Endpoint") or {}
    engine = instance.get("Engine")
    return {
        "engine": engine,
        "engine_family": RDS_ENGINE_FAMILY.get(engine or ""),
        "engine_version": instance.get("EngineVersion"),
        "address": endpoint.get("Address"),
        "port": endpoint.get("Port"),
        "db_name": instance.get("DBName"),
        "db_instance_class": instance.get("DBInstanceClass"),
        "storage_type": instance.get("StorageType"),
        "allocated_storage_gb": instance.get("AllocatedStorage"),
        "iops": instance.get("Iops"),
        "storage_throughput": instance.get("StorageThroughput"),
        "dbi_resource_id": instance.get("DbiResourceId"),
        "db_instance_arn": instance.get("DBInstanceArn"),
        "monitoring_interval": instance.get("MonitoringInterval"),
    }


def free_storage_bytes(cloudwatch: Any, db_instance_identifier: str) -> float | None:
    """The free storage RDS reports (CloudWatch ``FreeStorageSpace``, newest datapoint of the last
    hour), or None when there is none (a new instance, a local run, no permission)."""
    now = datetime.now(UTC)
    try:
        points = cloudwatch.get_metric_statistics(
            Namespace="AWS/RDS", MetricName="FreeStorageSpace", Statistics=["Minimum"], Period=60,
            Dimensions=[{"Name": "DBInstanceIdentifier", "Value": db_instance_identifier}],
            StartTime=now - timedelta(hours=1), EndTime=now)["Datapoints"]
    except (ClientError, BotoCoreError):  # no permission, no CloudWatch endpoint in the VPC: not known
        return None
    return float(max(points, key=lambda p: p["Timestamp"])["Minimum"]) if points else None
