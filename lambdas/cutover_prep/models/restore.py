"""The run input's ``restore``: the snapshot to restore and the instance to restore it to."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from cutover_prep.models.fields import (
    LongText,
    ShortText,
    SnapshotText,
    TagKey,
    TagValue,
    _field_error,
    _matching,
    _Strict,
)
from cutover_prep.models.storage_limits import storage_problem
from cutover_prep.workflows import DEPLOYMENT_TAG, RESERVED_TAG_PREFIX

INSTANCE_CLASS = re.compile(r"^db\.[a-z0-9-]+\.[a-z0-9]+$")


_SNAPSHOT_NAME = r"(?:rds:|awsbackup:)?[A-Za-z](?:[A-Za-z0-9]|-(?!-)){0,254}(?<!-)"
SNAPSHOT_IDENTIFIER = re.compile(
    rf"(?:arn:aws[a-z-]*:rds:[a-z0-9-]+:\d{{12}}:snapshot:)?{_SNAPSHOT_NAME}")
SUBNET_GROUP = re.compile(r"[A-Za-z0-9._ -]{1,255}")
GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9.:_-]{0,254}")  # default.postgres16, default:oracle-ee-19
TAG_TEXT = re.compile(r"[\w\s.:/=+\-@]*")  # what RDS accepts in tag keys and values
RUN_TAG = "cutover-prep:run-id"  # set by the run on the instance it restores (rds.RUN_TAG)
MAX_TAGS = 48  # RDS allows 50 per instance; the run adds RUN_TAG and DEPLOYMENT_TAG


class Restore(_Strict):
    snapshot_identifier: SnapshotText = Field(
        description="DB snapshot name (rds:NAME for an automated one) or, for a shared snapshot, its ARN.")
    db_instance_class: ShortText | None = None
    storage_type: Literal["gp2", "gp3", "io1", "io2", "standard"] | None = None
    iops: Annotated[int, Field(ge=1000, le=256000)] | None = None
    storage_throughput: Annotated[int, Field(ge=125, le=4000)] | None = None
    allocated_gb: Annotated[int, Field(ge=20, le=65536)] | None = Field(
        default=None, description="Allocated storage of the restored instance, GiB (AllocatedStorage); default: "
        "the snapshot's. Larger than the snapshot's only: RDS cannot restore onto less storage.")
    db_subnet_group_name: LongText | None = None
    vpc_security_group_ids: list[ShortText] = Field(default_factory=list, max_length=16)
    db_parameter_group_name: LongText | None = None
    option_group_name: LongText | None = None
    multi_az: bool = False
    tags: dict[TagKey, TagValue] = Field(
        default_factory=dict, max_length=MAX_TAGS,
        description=f"Tags of the restored instance: at most {MAX_TAGS} (RDS allows 50; the run adds {RUN_TAG} "
        f"and {DEPLOYMENT_TAG}). Keys starting {RESERVED_TAG_PREFIX} are reserved: only the service sets them.")
    poll_seconds: Annotated[int, Field(ge=5, le=3600)] = 60
    max_wait_minutes: Annotated[int, Field(ge=1, le=24 * 60)] = 180

    _snapshot = _matching("snapshot_identifier", pattern=SNAPSHOT_IDENTIFIER, message=(
        "must be a DB snapshot identifier (1-255 letters, digits or hyphens, starting with a letter, no double "
        "or trailing hyphen; automated: rds:NAME) or, for a shared snapshot, its ARN "
        "(arn:aws:rds:REGION:ACCOUNT:snapshot:NAME)"))

    _subnet_group = _matching("db_subnet_group_name", pattern=SUBNET_GROUP,
                              message="must be 1-255 letters, digits, spaces, '.', '_' or '-'")
    _group = _matching("db_parameter_group_name", "option_group_name", pattern=GROUP_NAME,
                       message="must be 1-255 letters, digits, '.', ':', '_' or '-', starting with a letter")

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            if key.lower().startswith("aws:"):
                raise ValueError(f"tag keys may not start with aws: (reserved by AWS): {key[:128]!r}")
            if key.lower().startswith(RESERVED_TAG_PREFIX):  # in any case: no look-alike keys either
                raise ValueError(f"tag keys starting {RESERVED_TAG_PREFIX} are reserved: the service sets them "
                                 f"(it marks what it restored and deletes by them); remove {key[:128]!r}")
            if not TAG_TEXT.fullmatch(key) or not TAG_TEXT.fullmatch(value):
                raise ValueError(f"tag {key!r}: keys and values may hold letters, digits, spaces and _ . : / = + - @")
        return v

    _class = _matching("db_instance_class", pattern=INSTANCE_CLASS, message="must look like db.r6i.large")

    @field_validator("vpc_security_group_ids")
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        seen: set[str] = set()
        for sg in v:
            if not re.match(r"^sg-[0-9a-f]{8,17}$", sg):
                raise ValueError(f"{sg!r} is not a security group id (sg-...)")
            if sg in seen:
                raise ValueError(f"{sg} is given twice: list each security group once")
            seen.add(sg)
        return v

    @model_validator(mode="after")
    def _storage(self) -> Restore:
        """What RDS accepts for the storage type (models/storage_limits.py), for any engine; RunInput
        checks again with the engine when target.engine names it."""
        problem = storage_problem(self.storage_type, self.allocated_gb, self.iops, self.storage_throughput)
        if problem:
            raise _field_error(*problem)
        return self
