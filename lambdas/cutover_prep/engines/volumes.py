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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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


Facts = dict[str, str | int | None]  # one volume's facts, as the instance's facts and the findings keep them
INT_FIELDS = ("allocated_storage_gb", "max_allocated_storage_gb", "iops", "storage_throughput", "operation_percent")


class StorageVolume(BaseModel):
    """One additional volume: botocore's ``AdditionalStorageVolumeOutput`` (its member names), or the facts this
    module made of one (``additional_volumes``: the names of the fields). A size or rate that is not a number
    is None."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    name: str = Field(alias="VolumeName", min_length=1)
    storage_type: str | None = Field(default=None, alias="StorageType")
    allocated_storage_gb: int | None = Field(default=None, alias="AllocatedStorage")
    max_allocated_storage_gb: int | None = Field(default=None, alias="MaxAllocatedStorage")
    iops: int | None = Field(default=None, alias="IOPS")
    storage_throughput: int | None = Field(default=None, alias="StorageThroughput")
    status: str | None = Field(default=None, alias="StorageVolumeStatus")
    operation_status: str | None = Field(default=None, alias="StorageOperationStatus")
    operation_percent: int | None = Field(default=None, alias="StorageOperationPercentProgress")

    @field_validator(*INT_FIELDS, mode="before")
    @classmethod
    def _number(cls, value: object) -> int | None:
        return _int(value)

    @field_validator("storage_type", mode="before")
    @classmethod
    def _lower(cls, value: object) -> str | None:
        return str(value).lower() if value else None

    @field_validator("operation_status", mode="before")
    @classmethod
    def _none_when_empty(cls, value: object) -> object:
        return value or None

    @classmethod
    def each(cls, entries: object) -> list[StorageVolume]:
        """The volumes of a list of entries: an entry that is not a volume with a name is left out."""
        out = []
        for entry in entries if isinstance(entries, list) else []:
            try:
                out.append(cls.model_validate(entry))
            except ValidationError:
                continue
        return out


class InstanceVolumes(BaseModel):
    """What an instance says of its storage volumes: DescribeDBInstances's entry (``AdditionalStorageVolumes``),
    or the instance facts (``rds.instance_facts``: the primary volume's settings, ``additional_storage_volumes``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    answered: list[StorageVolume] = Field(default_factory=list, alias="AdditionalStorageVolumes")
    storage_type: str | None = None
    allocated_storage_gb: int | None = None
    iops: int | None = None
    storage_throughput: int | None = None
    additional_storage_volumes: list[StorageVolume] = Field(default_factory=list)

    @field_validator("answered", "additional_storage_volumes", mode="before")
    @classmethod
    def _volumes(cls, value: object) -> list[StorageVolume]:
        return StorageVolume.each(value)

    @field_validator("allocated_storage_gb", "iops", "storage_throughput", mode="before")
    @classmethod
    def _number(cls, value: object) -> int | None:
        return _int(value)

    @field_validator("storage_type", mode="before")
    @classmethod
    def _text(cls, value: object) -> str | None:
        return None if value is None else str(value)

    def primary(self) -> Facts:
        """The primary volume's settings."""
        return {"name": PRIMARY_VOLUME, "storage_type": self.storage_type,
                "allocated_storage_gb": self.allocated_storage_gb, "iops": self.iops,
                "storage_throughput": self.storage_throughput}


def additional_volumes(instance: dict[str, Any]) -> list[Facts]:
    """The instance facts of each additional volume of a DescribeDBInstances entry (empty when none)."""
    return [v.model_dump() for v in InstanceVolumes.model_validate(instance).answered]


def volume_operations(instance: dict[str, Any]) -> list[Facts]:
    """Each additional volume's storage operation for a progress sample: ``{volume, status, percent}``."""
    return [{"volume": v.name, "status": v.operation_status, "percent": v.operation_percent}
            for v in InstanceVolumes.model_validate(instance).answered]


def volumes_of(facts: dict[str, Any] | None) -> list[Facts]:
    """Every volume of an instance (primary first) when it has additional volumes; empty otherwise."""
    known = InstanceVolumes.model_validate(facts if isinstance(facts, dict) else {})
    extra = [v.model_dump() for v in known.additional_storage_volumes]
    return [known.primary(), *extra] if extra else []
