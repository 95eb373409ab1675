"""RDS additional storage volumes (RDS for Oracle and SQL Server, since 2025): what DescribeDBInstances
says about each, and which volume a datafile lives on (pure, no AWS calls).

The response shape is botocore's RDS model (``DBInstance.AdditionalStorageVolumes``, a list of
``AdditionalStorageVolumeOutput``): ``VolumeName`` (``RDSDBDATA2 | RDSDBDATA3 | RDSDBDATA4``),
``StorageType`` (``GP3 | IO2``), ``AllocatedStorage`` (GiB), ``IOPS``, ``MaxAllocatedStorage``,
``StorageThroughput`` (MiB/s), ``StorageVolumeStatus`` (``ACTIVE | CREATING | ...``), and, only while an
operation runs, ``StorageOperationStatus`` (``Initializing`` / ``Optimizing``) and
``StorageOperationPercentProgress`` (0-100), exactly as the instance's own fields.

The instance's own storage (``StorageType``, ``Iops``, ``StorageThroughput``, ``StorageOperation*``) is the
*primary* volume, named ``PRIMARY_VOLUME`` here; every datafile that is not under an additional volume's
path is on it.
"""

from __future__ import annotations

from typing import Any

PRIMARY_VOLUME = "primary"
# The additional volumes' names, as the RDS API's ``VolumeName`` valid values (botocore RDS model).
ADDITIONAL_VOLUME_NAMES = ("RDSDBDATA2", "RDSDBDATA3", "RDSDBDATA4")
# Where RDS for Oracle mounts an additional volume: its name in lower case at the root (``/rdsdbdata2/``
# for RDSDBDATA2), as the primary volume is ``/rdsdbdata/`` (DB_CREATE_FILE_DEST defaults to
# ``/rdsdbdata/db``, RDS User Guide, "Working with tablespaces in RDS for Oracle"). ASSUMPTION: the API
# names the volume RDSDBDATA2..4, but neither botocore's model nor the documentation this project could
# read spells out the mount path; a real instance with an additional volume confirms it
# (``SELECT file_name FROM dba_data_files``). The trailing slash matters: "/rdsdbdata2/" must not match
# the primary's "/rdsdbdata/".
VOLUME_PATH_PREFIX = "/{name_lower}/"


def volume_path_prefix(volume_name: str) -> str:
    return VOLUME_PATH_PREFIX.format(name_lower=volume_name.lower())


def volume_of_path(path: str | None, names: tuple[str, ...] = ADDITIONAL_VOLUME_NAMES) -> str:
    """The volume a datafile path is on: the additional volume whose prefix it starts with, else the
    primary volume."""
    if path:
        for name in names:
            if str(path).startswith(volume_path_prefix(name)):
                return name
    return PRIMARY_VOLUME


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def additional_volumes(instance: dict[str, Any]) -> list[dict[str, Any]]:
    """The instance facts of each additional volume of a DescribeDBInstances entry (empty when none)."""
    out = []
    for v in instance.get("AdditionalStorageVolumes") or []:
        if not isinstance(v, dict) or not v.get("VolumeName"):
            continue
        out.append({
            "name": str(v["VolumeName"]),
            "storage_type": (str(v["StorageType"]).lower() if v.get("StorageType") else None),
            "allocated_storage_gb": _int(v.get("AllocatedStorage")),
            "max_allocated_storage_gb": _int(v.get("MaxAllocatedStorage")),
            "iops": _int(v.get("IOPS")),
            "storage_throughput": _int(v.get("StorageThroughput")),
            "status": v.get("StorageVolumeStatus"),
            "operation_status": v.get("StorageOperationStatus") or None,
            "operation_percent": _int(v.get("StorageOperationPercentProgress")),
        })
    return out


def volume_operations(instance: dict[str, Any]) -> list[dict[str, Any]]:
    """Each additional volume's storage operation for a progress sample: ``{volume, status, percent}``."""
    return [{"volume": v["name"], "status": v["operation_status"], "percent": v["operation_percent"]}
            for v in additional_volumes(instance)]


def primary_volume(facts: dict[str, Any]) -> dict[str, Any]:
    """The primary volume's settings from the instance facts (``rds.instance_facts``)."""
    return {"name": PRIMARY_VOLUME, "storage_type": facts.get("storage_type"),
            "allocated_storage_gb": facts.get("allocated_storage_gb"), "iops": facts.get("iops"),
            "storage_throughput": facts.get("storage_throughput")}


def volumes_of(facts: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every volume of an instance (primary first) when it has additional volumes; empty otherwise."""
    facts = facts if isinstance(facts, dict) else {}
    extra = [v for v in facts.get("additional_storage_volumes") or [] if isinstance(v, dict) and v.get("name")]
    return [primary_volume(facts), *extra] if extra else []
