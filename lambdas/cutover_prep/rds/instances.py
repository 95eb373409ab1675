"""Restore a DB instance from a snapshot and wait until it is available."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from botocore.exceptions import BotoCoreError, ClientError

from cutover_prep.engines import RDS_ENGINE_FAMILY
from cutover_prep.engines.volumes import additional_volumes
from cutover_prep.models.restore import Restore
from cutover_prep.rds.answers import DbInstance, DbSnapshot, Endpoint
from cutover_prep.rds.progress import BlueGreen, blue_green_of, sample_storage_progress
from cutover_prep.settings import deployment_id
from cutover_prep.workflows import COMPARISON_TAG, DEPLOYMENT_TAG, TTL_TAG

if TYPE_CHECKING:
    from cutover_prep.models.steps import RunState

FAILED_STATES = {
    "failed", "incompatible-restore", "incompatible-parameters", "incompatible-network",
    "incompatible-option-group", "incompatible-credentials", "restore-error", "storage-full",
    "inaccessible-encryption-credentials", "deleting", "deleted",
}
RUN_TAG = "cutover-prep:run-id"
MAX_WAIT_MINUTES: int = Restore.model_fields["max_wait_minutes"].default  # the input's default, written there


class InstanceFacts(TypedDict):
    """What the workflow knows of the instance (``instance_facts``): endpoint, engine, class, storage."""

    engine: str | None
    engine_family: str | None
    engine_version: str | None
    address: str | None
    port: int | None
    db_name: str | None
    db_instance_class: str | None
    storage_type: str | None
    allocated_storage_gb: int | None
    iops: int | None
    storage_throughput: int | None
    dbi_resource_id: str | None
    db_instance_arn: str | None
    monitoring_interval: int | None
    additional_storage_volumes: NotRequired[list[dict[str, Any]]]  # engines.volumes.additional_volumes
    availability_zone: NotRequired[str]  # where the primary runs (findings.server: a failover moves it)


class DescribedInstance(InstanceFacts):
    """DescribeInstance's result: the facts, the state, where a restore came from, a Blue/Green green's deployment."""

    status: str
    ready: bool
    restored_from: NotRequired[dict[str, str]]  # StartRestore's (``snapshot_source``)
    blue_green: NotRequired[BlueGreen]


class RestoreStarted(TypedDict):
    """StartRestore's result."""

    restore_started: bool
    resumed: bool
    requested_at: NotRequired[str]
    restored_from: dict[str, str]  # ``snapshot_source``


class RestoreFailed(Exception):
    error_type = "RestoreFailed"


class RestoreTimeout(Exception):
    error_type = "RestoreTimeout"


def restore_tags(run: RunState, restore: Restore, deployment: str | None) -> dict[str, str]:
    """The tags of the instance the run restores: the user's ``restore.tags`` (no ``cutover-prep:*`` key:
    reserved), the run's id, this deployment's id and, for a comparison's child run (whose restore
    ValidateInput recorded in the comparison's record), the comparison's id and TTL."""
    tags = {**restore.tags, RUN_TAG: run.run_id}
    if deployment:
        tags[DEPLOYMENT_TAG] = deployment
    if run.comparison is not None:
        tags[COMPARISON_TAG] = run.comparison.comparison_id
        tags[TTL_TAG] = str(run.comparison.ttl_hours)
    return tags


def snapshot_source(rds: Any, snapshot_identifier: str) -> dict[str, str]:
    """The instance a snapshot was taken from (DescribeDBSnapshots -> DBInstanceIdentifier), with its endpoint
    and ARN when it still exists: a secret of that instance may be used on the restored one, which has its
    master credentials (``secret_binding``). Whatever cannot be read is left out (the restore says why)."""
    source = {"snapshot_identifier": snapshot_identifier}
    name = snapshot_identifier.rpartition(":snapshot:")[2] if snapshot_identifier.startswith("arn:") \
        else snapshot_identifier
    # DescribeDBSnapshots: "If this identifier is for an automated snapshot, the SnapshotType parameter must
    # also be specified"; another account's snapshot is found by its ARN with IncludeShared
    kind = {"SnapshotType": "automated"} if name.startswith("rds:") else \
        {"SnapshotType": "awsbackup"} if name.startswith("awsbackup:") else \
        {"IncludeShared": True} if snapshot_identifier.startswith("arn:") else {}
    try:
        answer = rds.describe_db_snapshots(DBSnapshotIdentifier=snapshot_identifier, **kind)["DBSnapshots"]
        snapshots = [DbSnapshot.model_validate(s) for s in answer]
    except (ClientError, BotoCoreError, KeyError):
        return source
    identifier = snapshots[0].instance_identifier if snapshots else None
    if not identifier:
        return source
    source["db_instance_identifier"] = identifier
    try:
        instance = describe(rds, identifier)
    except (ClientError, BotoCoreError, IndexError, KeyError):  # deleted since, or in another account
        return source
    found = {"address": instance.endpoint.address if instance.endpoint else None, "db_instance_arn": instance.arn}
    return source | {k: v for k, v in found.items() if v is not None}


def describe(rds: Any, identifier: str) -> DbInstance:
    """The instance (DescribeDBInstances); botocore's ``DBInstanceNotFound`` when there is none."""
    return DbInstance.model_validate(rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"][0])


def start_restore(run: RunState, rds: Any) -> RestoreStarted:
    """Start the restore; idempotent: an instance this run already created is accepted.

    The result names the instance the snapshot was taken from (``restored_from``); DescribeInstance hands it
    on in the instance facts."""
    restore, run_id = run.restore, run.run_id
    if restore is None:  # the ASL's RestoreRequested choice comes here only with one
        raise RestoreFailed(f"run {run_id} asks for no restore (restore.snapshot_identifier)")
    identifier = run.target.db_instance_identifier
    source = snapshot_source(rds, restore.snapshot_identifier)
    deployment = deployment_id()
    optional = {
        "DBInstanceClass": restore.db_instance_class, "StorageType": restore.storage_type, "Iops": restore.iops,
        "StorageThroughput": restore.storage_throughput, "AllocatedStorage": restore.allocated_gb,
        "DBSubnetGroupName": restore.db_subnet_group_name,
        "DBParameterGroupName": restore.db_parameter_group_name, "OptionGroupName": restore.option_group_name,
    }
    given = {api: value for api, value in optional.items() if value is not None}
    if restore.vpc_security_group_ids:
        given["VpcSecurityGroupIds"] = restore.vpc_security_group_ids
    try:
        rds.restore_db_instance_from_db_snapshot(
            DBInstanceIdentifier=identifier, DBSnapshotIdentifier=restore.snapshot_identifier,
            MultiAZ=restore.multi_az, PubliclyAccessible=False, CopyTagsToSnapshot=True,
            Tags=[{"Key": k, "Value": v} for k, v in sorted(restore_tags(run, restore, deployment).items())],
            **given)
    except ClientError as exc:
        code, message = exc.response["Error"]["Code"], exc.response["Error"]["Message"]
        if code == "DBInstanceAlreadyExists" and _created_by(rds, identifier, run_id, deployment):
            return {"restore_started": True, "resumed": True, "restored_from": source}
        raise RestoreFailed(f"restore of {identifier} from {restore.snapshot_identifier} "
                            f"was refused: {code}: {message}") from None
    return {"restore_started": True, "resumed": False, "requested_at": datetime.now(UTC).isoformat(),
            "restored_from": source}


def _created_by(rds: Any, identifier: str, run_id: str, deployment: str | None) -> bool:
    """The existing instance is this run's own earlier restore: its run tag and this deployment's tag
    (another deployment's run of the same id, or a copy of its tags through a snapshot, is not)."""
    tags = describe(rds, identifier).tags
    return tags.get(RUN_TAG) == run_id and tags.get(DEPLOYMENT_TAG) == deployment


def describe_instance(run: RunState, rds: Any, *, now: datetime | None = None,
                      store: Any = None) -> DescribedInstance:
    """The instance's state and facts; raise when it failed or the wait ran out.

    With ``store``, each answer is also a sample of RDS's storage progress (``restore.progress``), and
    once the instance is available the facts say whether it is a Blue/Green deployment's green one."""
    identifier = run.target.db_instance_identifier
    try:
        instance = describe(rds, identifier)
    except ClientError as exc:
        code = exc.response["Error"]["Code"]
        if code == "DBInstanceNotFound" and run.restore:
            instance = DbInstance(status="creating")  # eventual consistency right after the restore call
        elif code == "DBInstanceNotFound":
            raise RestoreFailed(f"DB instance {identifier} does not exist; check target.db_instance_identifier "
                                "or pass restore.snapshot_identifier to create it") from None
        else:
            raise
    status = instance.status or "unknown"
    if store is not None and instance.identifier:
        sample_storage_progress(run.run_id, identifier, rds=rds, store=store, step="DescribeInstance",
                                instance=instance)
    if status in FAILED_STATES:
        raise RestoreFailed(f"DB instance {identifier} is {status}")
    ready = status == "available"
    if not ready:
        # an existing instance that is not available yet (no restore) waits as long as a restore may
        max_wait = (run.restore.max_wait_minutes if run.restore else MAX_WAIT_MINUTES) * 60
        waited = ((now or datetime.now(UTC)) - run.started_at).total_seconds()
        if waited > max_wait:
            raise RestoreTimeout(f"DB instance {identifier} is still {status} after {int(waited // 60)} "
                                 f"minutes (restore.max_wait_minutes={max_wait // 60})")
    facts: DescribedInstance = {"status": status, "ready": ready, **instance_facts(instance)}
    if run.restore and run.restore_request and run.restore_request.restored_from:
        facts["restored_from"] = run.restore_request.restored_from  # StartRestore's, for secret_binding
    if ready and store is not None:
        facts["blue_green"] = blue_green_of(rds, instance.arn)
    return facts


def instance_facts(instance: DbInstance) -> InstanceFacts:
    """The facts of an instance the workflow uses (endpoint, engine, class, storage).

    ``additional_storage_volumes`` (RDS for Oracle / SQL Server, ``volumes.additional_volumes``): only
    when the instance has any, so an instance without them has the same facts as before."""
    endpoint = instance.endpoint or Endpoint()
    extra = additional_volumes(instance.volumes_answer())
    return {
        "engine": instance.engine,
        "engine_family": RDS_ENGINE_FAMILY.get(instance.engine or ""),
        "engine_version": instance.engine_version,
        "address": endpoint.address,
        "port": endpoint.port,
        "db_name": instance.db_name,
        "db_instance_class": instance.db_instance_class,
        "storage_type": instance.storage_type,
        "allocated_storage_gb": instance.allocated_storage,
        "iops": instance.iops,
        "storage_throughput": instance.storage_throughput,
        "dbi_resource_id": instance.dbi_resource_id,
        "db_instance_arn": instance.arn,
        "monitoring_interval": instance.monitoring_interval,
        **({"additional_storage_volumes": extra} if extra else {}),
        **({"availability_zone": instance.availability_zone} if instance.availability_zone else {}),
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
