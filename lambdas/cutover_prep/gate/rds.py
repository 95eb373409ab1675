"""The gate's RDS conditions, from ``DescribeDBInstances``: storage initialization finished on every volume
(the primary's ``StorageOperationStatus``/``StorageOperationPercentProgress`` and each of
``AdditionalStorageVolumes``; both fields are present only while an operation runs, ../shared/NOTES.md),
and the instance itself ready to take the application: status ``available``, no pending modification, no
pending reboot (``PendingModifiedValues``; ``DBParameterGroups[].ParameterApplyStatus`` ``pending-reboot``).
A Describe that fails is ``unknown``, never open."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from cutover_prep.engines.volumes import volume_operations
from cutover_prep.gate.model import Condition, aws_problem
from cutover_prep.rds.answers import DbInstance
from cutover_prep.rds.instances import describe as describe_instance
from cutover_prep.rds.progress import storage_operation


def describe(rds: Any, identifier: str) -> tuple[DbInstance | None, str | None]:
    try:
        return describe_instance(rds, identifier), None
    except (ClientError, BotoCoreError, LookupError, ValidationError) as exc:
        return None, aws_problem(exc)


def storage_condition(instance: DbInstance) -> Condition:
    status, percent = storage_operation(instance)
    volumes = [{"volume": "primary", "status": status, "percent": percent},
               *volume_operations(instance.volumes_answer())]
    busy = [v for v in volumes if v["status"]]
    evidence = {"volumes": volumes}
    if not busy:
        return Condition(name="storage", state="open", evidence=evidence,
                         summary=f"RDS reports no storage operation on {len(volumes)} volume(s)")
    shown = ", ".join(f"{v['volume']} {v['status']} {v['percent'] if v['percent'] is not None else '?'} %"
                      for v in busy)
    return Condition(name="storage", state="closed", evidence=evidence,
                     summary=f"RDS is still initializing storage: {shown}")


def instance_condition(instance: DbInstance) -> Condition:
    status = instance.status
    pending = {k: v for k, v in instance.pending_modified_values.items() if v not in (None, [], {})}
    reboot = [g.name for g in instance.parameter_groups if g.apply_status == "pending-reboot"]
    evidence = {"status": status, "pending_modified_values": pending, "pending_reboot_parameter_groups": reboot}
    problems = []
    if status != "available":
        problems.append(f"status {status!r} (not available)")
    if pending:
        problems.append("pending modification of " + ", ".join(sorted(pending)))
    if reboot:
        problems.append("parameter group(s) " + ", ".join(map(str, reboot)) + " wait for a reboot")
    if problems:
        return Condition(name="instance", state="closed", evidence=evidence, summary="; ".join(problems))
    return Condition(name="instance", state="open", evidence=evidence,
                     summary="available, nothing pending (no modification, no reboot)")


def rds_conditions(rds: Any, identifier: str) -> list[Condition]:
    instance, problem = describe(rds, identifier)
    if instance is None:
        unknown = f"DescribeDBInstances of {identifier} failed: {problem}"
        return [Condition(name="storage", state="unknown", summary=unknown),
                Condition(name="instance", state="unknown", summary=unknown)]
    return [storage_condition(instance), instance_condition(instance)]
