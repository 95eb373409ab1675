"""What reaching the database reads of DescribeInstance's facts (``rds.instances.instance_facts``, the run state's
``instance``): the endpoint, the engine, the initial database, and the instance the run restored it from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RestoredFrom(BaseModel):
    """The instance the run restored the target from (StartRestore's ``restored_from``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    db_instance_identifier: str | None = None
    address: str | None = None
    db_instance_arn: str | None = None


class InstanceFacts(BaseModel):
    """The target instance's facts the connection and the secret's binding use; a fact RDS did not report (none
    yet, or no DescribeInstance: a local run) is None."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    address: str | None = None
    port: int | None = None
    engine: str | None = None
    engine_family: str | None = None
    db_name: str | None = None
    db_instance_arn: str | None = None
    restored_from: RestoredFrom | None = None
