"""RDS's answers as the code reads them: ``DbInstance`` (an entry of DescribeDBInstances), ``DbSnapshot`` (of
DescribeDBSnapshots) and ``BlueGreenDeployment`` (of DescribeBlueGreenDeployments).

Each reads the API's own PascalCase names (aliases) and ignores the rest of the answer; a field RDS leaves out
is None (or empty). An instance is parsed where it enters (``DbInstance.model_validate``), once.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class Endpoint(_Answer):
    address: str | None = Field(None, alias="Address")
    port: int | None = Field(None, alias="Port")


class Tag(_Answer):
    key: str = Field(alias="Key")
    value: str = Field(alias="Value")


class ParameterGroupStatus(_Answer):
    name: str | None = Field(None, alias="DBParameterGroupName")
    apply_status: str | None = Field(None, alias="ParameterApplyStatus")


class DbInstance(_Answer):
    """One DescribeDBInstances entry: what the run, the trigger, the comparison and the gate read of it."""

    identifier: str | None = Field(None, alias="DBInstanceIdentifier")
    status: str | None = Field(None, alias="DBInstanceStatus")
    engine: str | None = Field(None, alias="Engine")
    engine_version: str | None = Field(None, alias="EngineVersion")
    db_name: str | None = Field(None, alias="DBName")
    db_instance_class: str | None = Field(None, alias="DBInstanceClass")
    storage_type: str | None = Field(None, alias="StorageType")
    allocated_storage: int | None = Field(None, alias="AllocatedStorage")
    iops: int | None = Field(None, alias="Iops")
    storage_throughput: int | None = Field(None, alias="StorageThroughput")
    dbi_resource_id: str | None = Field(None, alias="DbiResourceId")
    arn: str | None = Field(None, alias="DBInstanceArn")
    monitoring_interval: int | None = Field(None, alias="MonitoringInterval")
    availability_zone: str | None = Field(None, alias="AvailabilityZone")  # a Multi-AZ failover moves it
    endpoint: Endpoint | None = Field(None, alias="Endpoint")
    tag_list: list[Tag] = Field([], alias="TagList")
    created: datetime | None = Field(None, alias="InstanceCreateTime")
    storage_operation_status: str | None = Field(None, alias="StorageOperationStatus")
    storage_operation_percent: int | None = Field(None, alias="StorageOperationPercentProgress")
    pending_modified_values: dict[str, Any] = Field({}, alias="PendingModifiedValues")  # RDS's open set of fields
    parameter_groups: list[ParameterGroupStatus] = Field([], alias="DBParameterGroups")
    # RDS for Oracle / SQL Server: parsed by the engines' own reader (``engines.volumes``)
    additional_storage_volumes: list[Any] = Field([], alias="AdditionalStorageVolumes")

    @field_validator("storage_operation_percent", mode="before")
    @classmethod
    def _percent(cls, value: object) -> int | None:
        """A number RDS reports (0-100); anything else (a bool, a text) is not a percent."""
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    @field_validator("storage_operation_status", mode="before")
    @classmethod
    def _status(cls, value: object) -> str | None:
        return value or None  # an empty status is no operation

    @property
    def tags(self) -> dict[str, str]:
        return {t.key: t.value for t in self.tag_list}

    def created_utc(self) -> datetime | None:
        """``InstanceCreateTime`` with its zone (UTC when RDS gave none); None while RDS is creating it."""
        if self.created is None:
            return None
        return self.created if self.created.tzinfo is not None else self.created.replace(tzinfo=UTC)

    def volumes_answer(self) -> dict[str, list[Any]]:
        """The part of the answer ``engines.volumes`` reads (its additional storage volumes)."""
        return {"AdditionalStorageVolumes": self.additional_storage_volumes}


class DbSnapshot(_Answer):
    instance_identifier: str | None = Field(None, alias="DBInstanceIdentifier")


class SwitchoverDetail(_Answer):
    target_member: str | None = Field(None, alias="TargetMember")


class BlueGreenDeployment(_Answer):
    identifier: str | None = Field(None, alias="BlueGreenDeploymentIdentifier")
    name: str | None = Field(None, alias="BlueGreenDeploymentName")
    status: str | None = Field(None, alias="Status")
    source: str | None = Field(None, alias="Source")
    target: str | None = Field(None, alias="Target")
    switchover_details: list[SwitchoverDetail] = Field([], alias="SwitchoverDetails")
