"""The results of the steps whose logic lives outside a phase's own result models (``benchmark.results``,
``models.steps``): what a handler returns and ``observability.json_result`` dumps (the fields set, by their JSON
names). Each is the JSON its step has always returned, field for field; a field the step leaves out when it has
no value is optional here and left unset."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cutover_prep.models.status import UnitStatus


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UnitFailureRecorded(_Result):
    """RecordUnitFailure's result: the unit counted as FAILED, with its error (``recorded``: this call did)."""

    unit_id: str
    status: UnitStatus
    error: str
    recorded: bool


class RunFailure(_Result):
    """RecordFailure's result: the error the Fail state names (``Error``) and its cause."""

    Error: str
    Cause: str


class RestoreRequested(_Result):
    """StartRestore's result (``$.restore_request``): the instance the snapshot was taken from."""

    restore_started: bool
    resumed: bool
    requested_at: str | None = None  # left out when an earlier attempt's restore is resumed
    restored_from: dict[str, str]


class BlueGreenFacts(_Result):
    """Whether the instance is a Blue/Green deployment's green one (``rds.progress.blue_green_of``)."""

    checked: bool
    green: bool | None = None
    error: str | None = None
    deployment_id: str | None = None
    deployment_name: str | None = None
    status: str | None = None


class InstanceDescribed(_Result):
    """DescribeInstance's result (``$.instance``): the instance's state and facts (``rds.instances``)."""

    status: str
    ready: bool
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
    additional_storage_volumes: list[dict[str, str | int | None]] | None = None  # engines.volumes.Facts each
    availability_zone: str | None = None  # the primary's, for findings.server (a Multi-AZ failover moves it)
    restored_from: dict[str, str] | None = None  # StartRestore's, for secret_binding
    blue_green: BlueGreenFacts | None = None


class TriggerOutcome(_Result):
    """What OnRestore did with one instance (``restore.trigger.Outcome``)."""

    instance: str | None = None
    action: str  # started | duplicate | ignored | rejected | waiting | deferred | error
    why: str | None = None
    execution_arn: str | None = None
    via: str | None = None
    restore: str | None = None
    retried_claim: bool | None = None


class Swept(_Result):
    """The scheduled sweep's result: what it did with each instance it considered."""

    swept: list[TriggerOutcome]
