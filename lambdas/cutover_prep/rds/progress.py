"""What RDS itself says about the restored volume: its storage initialization progress, and
whether the target is the green instance of a Blue/Green deployment.

Since botocore 1.43.62 ``DescribeDBInstances`` returns ``StorageOperationStatus``
(``Initializing`` after a snapshot restore, point-in-time restore, read replica or Blue/Green
deployment; ``Optimizing`` after a storage change) and ``StorageOperationPercentProgress``
(0-100), both present only while an operation runs. ``sample_storage_progress`` is the one
function that samples them; each sample is stored as ``{at, step, status, percent}`` (None
for what RDS did not report) through ``Store.put_storage_sample``. An instance with additional
storage volumes (RDS for Oracle / SQL Server) reports the same two fields per volume in
``AdditionalStorageVolumes``: the sample then also holds ``volumes``, one ``{volume, status, percent}``
each (``volumes.volume_operations``); the top-level fields stay the primary volume's. Sampling never fails a
run: a Describe that is throttled, denied or cannot reach RDS is stored as a gap (``gap`` is
its error code) and the findings say so once.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from cutover_prep.dal.records.findings_storage import StorageInitialization
from cutover_prep.dal.records.run import StorageSample
from cutover_prep.engines.volumes import volume_operations
from cutover_prep.rds.answers import BlueGreenDeployment, DbInstance

logger = logging.getLogger(__name__)

# While the warm-up and the metrics wait run: at most one Describe per this many seconds, across all
# the units (Store.claim_storage_sample).
SAMPLE_INTERVAL_SECONDS = 60.0
MAX_BLUE_GREEN_PAGES = 5  # 100 deployments a page: an account with more is not searched further


class BlueGreen(TypedDict):
    """Whether the instance is a Blue/Green deployment's green one (``blue_green_of``)."""

    checked: bool
    green: NotRequired[bool]
    error: NotRequired[str]
    deployment_id: NotRequired[str | None]
    deployment_name: NotRequired[str | None]
    status: NotRequired[str | None]
    source: NotRequired[str | None]


def now_at() -> str:
    """A sample's time: UTC ISO 8601 with microseconds, so that the stored keys sort in time order."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def storage_operation(instance: DbInstance) -> tuple[str | None, int | None]:
    """(StorageOperationStatus, StorageOperationPercentProgress) of an instance."""
    return instance.storage_operation_status, instance.storage_operation_percent


def _error_code(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code") or "ClientError")
    return type(exc).__name__


def sample_storage_progress(run_id: str, db_instance_identifier: str, *, rds: Any, store: Any, step: str,
                            instance: DbInstance | None = None,
                            min_interval_seconds: float | None = None) -> StorageSample | None:
    """Sample RDS's storage progress of the run's target and store it; return the sample, or None
    when another caller sampled within ``min_interval_seconds``. ``instance``: the instance as the caller
    already described it (no second call). Never raises."""
    at = now_at()
    try:
        if min_interval_seconds and not store.claim_storage_sample(run_id, at, min_interval_seconds):
            return None
        if instance is None:
            instance = DbInstance.model_validate(
                rds.describe_db_instances(DBInstanceIdentifier=db_instance_identifier)["DBInstances"][0])
        status, percent = storage_operation(instance)
        volumes = volume_operations(instance.volumes_answer())
        sample = StorageSample.new(at=at, step=step, status=status, percent=percent,
                                   **({"volumes": volumes} if volumes else {}))
    except (ClientError, BotoCoreError, LookupError, TypeError, ValidationError) as exc:
        sample = StorageSample.new(at=at, step=step, status=None, percent=None, gap=_error_code(exc))
    try:
        store.put_storage_sample(run_id, sample)
    except (ClientError, BotoCoreError) as exc:  # the sample is lost, the run goes on
        logger.warning("storage progress sample of %s not stored: %s", step, _error_code(exc))
    return sample


def blue_green_of(rds: Any, instance_arn: str | None) -> BlueGreen:
    """Whether the instance is a green (target) member of an RDS Blue/Green deployment.

    ``{"checked": True, "green": bool, ...}`` with the deployment's identifier, name, status and
    source when it is; ``{"checked": False, "error": code}`` when the deployments could not be
    read (no permission, throttled). The deployments are listed (a few pages at most) and each
    one's ``Target`` and ``SwitchoverDetails[].TargetMember`` compared, which also finds a green
    read replica of a deployment (the ``target`` filter matches the deployment's primary only)."""
    if not instance_arn:
        return {"checked": False, "error": "the instance has no ARN to look up"}
    try:
        pages = rds.get_paginator("describe_blue_green_deployments").paginate(
            PaginationConfig={"MaxItems": 100 * MAX_BLUE_GREEN_PAGES})  # 100 a page by default
        for page in pages:
            for entry in page.get("BlueGreenDeployments") or []:
                deployment = BlueGreenDeployment.model_validate(entry)
                members = {d.target_member for d in deployment.switchover_details}
                if instance_arn == deployment.target or instance_arn in members:
                    return {"checked": True, "green": True, "deployment_id": deployment.identifier,
                            "deployment_name": deployment.name, "status": deployment.status,
                            "source": deployment.source}
    except (ClientError, BotoCoreError) as exc:
        return {"checked": False, "error": _error_code(exc)}
    return {"checked": True, "green": False}


def progress_sentence(section: StorageInitialization | None) -> str:
    """How far RDS says it is, in one sentence (the verdict and every rendering of the report); ``section``:
    findings' ``storage_initialization``."""
    section = section or StorageInitialization()
    last, gaps = section.last, section.gaps
    if last is None:
        return ("RDS initialization progress: not reported (RDS's storage progress could not be read: "
                f"{', '.join(gaps.codes)})" if gaps is not None and gaps.model_fields_set
                else "RDS initialization progress: not reported")
    if last.status is not None or last.percent is not None:
        figure = f" {last.percent} %" if last.percent is not None else ""
        return f"RDS initialization progress: {last.status or 'operation'}{figure} at the end of the run"
    if section.reported:
        return "RDS initialization progress: done (RDS reports no storage operation at the end of the run)"
    return "RDS initialization progress: not reported"
