"""The comparison's input and its result (``comparison.json``), validated with pydantic.

The input is strict like the run input (``models/run_input.RunInput``): unknown fields are
errors, a number is a JSON number, a switch a JSON boolean. The rules of a configuration's
storage are the run input's ``Restore`` rules, and each configuration becomes one child run
of the run workflow (``child_run_input``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from cutover_prep.dal.deployment import COMPARISON_SK as _COMPARISON_SK
from cutover_prep.dal.deployment import comparison_key as _comparison_key
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.fields import (
    DB_IDENTIFIER,
    RUN_ID,
    SECRET_ARN,
    Arn,
    EngineName,
    LongText,
    Name,
    RunIdText,
    ShortText,
    SnapshotText,
    TagKey,
    TagValue,
    _matching,
    _Strict,
)
from cutover_prep.models.restore import GROUP_NAME, INSTANCE_CLASS, MAX_TAGS, SNAPSHOT_IDENTIFIER, SUBNET_GROUP, Restore
from cutover_prep.models.warmup import Warmup
from cutover_prep.workflows import COMPARISON_INSTANCE_PREFIX, COMPARISON_TAG, TTL_TAG

CONFIGURATION_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9]|-(?!-)){0,19}(?<!-)$")
INSTANCE_PREFIX = COMPARISON_INSTANCE_PREFIX  # the instances a comparison restores: cprep-<comparison_id>-<name>
# the comparison's record in the run table: its key and sort key are dal's (``dal.deployment``)
COMPARISON_SK, comparison_key = _COMPARISON_SK, _comparison_key


def instance_identifier(comparison_id: str, name: str) -> str:
    return f"{INSTANCE_PREFIX}-{comparison_id}-{name}"


def child_run_id(comparison_id: str, name: str) -> str:
    return f"{comparison_id}-{name}"


class Configuration(_Strict):
    """One instance class and storage to restore the snapshot onto and measure."""

    name: Annotated[str, Field(min_length=1, max_length=20)] = Field(
        description="1-20 lower-case letters, digits or single hyphens; names the child run and the instance.")
    db_instance_class: ShortText = Field(description="e.g. db.r6i.xlarge")
    storage_type: Literal["gp2", "gp3", "io1", "io2"]
    allocated_gb: Annotated[int, Field(ge=20, le=65536)] = Field(
        description="Allocated storage, GiB; at least the snapshot's (RDS cannot restore onto less).")
    iops: Annotated[int, Field(ge=1000, le=256000)] | None = Field(
        default=None, description="Provisioned IOPS: required for io1/io2, allowed for gp3.")
    storage_throughput: Annotated[int, Field(ge=125, le=4000)] | None = Field(
        default=None, description="Provisioned throughput, MiB/s: gp3 only.")

    _name = _matching("name", pattern=CONFIGURATION_NAME, message=(
        "must be 1-20 lower-case letters, digits or hyphens, starting and ending with a letter or digit, "
        "no double hyphen"))
    _class = _matching("db_instance_class", pattern=INSTANCE_CLASS, message="must look like db.r6i.large")

    @model_validator(mode="after")
    def _storage(self) -> Configuration:
        Restore._storage(self)  # the run input's rules: iops for io1/io2 (gp3 may), throughput for gp3 only
        return self


class ComparisonTarget(_Strict):
    """The restored instances' credentials: the snapshot's master user."""

    secret_arn: Arn = Field(description="Secrets Manager ARN of the snapshot's master user credentials.")
    engine: EngineName | None = None
    database: Name | None = None

    _arn = _matching("secret_arn", pattern=SECRET_ARN, message=(
        "must be a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME); "
        "never the secret itself"))


class SharedRestore(_Strict):
    """Restore settings every configuration shares."""

    db_subnet_group_name: LongText | None = None
    vpc_security_group_ids: list[ShortText] = Field(default_factory=list, max_length=16)
    db_parameter_group_name: LongText | None = None
    option_group_name: LongText | None = None
    tags: dict[TagKey, TagValue] = Field(
        default_factory=dict, max_length=MAX_TAGS - 2,
        description=f"Tags of every restored instance: at most {MAX_TAGS - 2} (the comparison adds "
        f"{COMPARISON_TAG} and {TTL_TAG}, the run its run id and deployment). Keys starting cutover-prep: "
        "are reserved.")

    _subnet_group = _matching("db_subnet_group_name", pattern=SUBNET_GROUP,
                              message="must be 1-255 letters, digits, spaces, '.', '_' or '-'")
    _group = _matching("db_parameter_group_name", "option_group_name", pattern=GROUP_NAME,
                       message="must be 1-255 letters, digits, '.', ':', '_' or '-', starting with a letter")

    @field_validator("vpc_security_group_ids")
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        return Restore._sgs(v)

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        return Restore._tags(v)  # cutover-prep:* keys (the comparison's and the run's among them) are reserved


class ComparisonWarmup(Warmup):
    enabled: bool = Field(default=True, description="Warm each configuration before it is measured (false: "
                          "measure each configuration's storage as restored, cold).")


class Targets(_Strict):
    """What a configuration must reach to be recommended (at least one of the first three)."""

    min_read_iops: Annotated[float, Field(gt=0)] | None = None
    min_read_mib_per_s: Annotated[float, Field(gt=0)] | None = None
    max_warm_p99_ms: Annotated[float, Field(gt=0)] | None = None
    max_price_per_hour_usd: Annotated[float, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _one(self) -> Targets:
        if self.min_read_iops is None and self.min_read_mib_per_s is None and self.max_warm_p99_ms is None:
            raise ValueError("give at least one of min_read_iops, min_read_mib_per_s, max_warm_p99_ms")
        return self


class ComparisonInput(_Strict):
    """What a user passes to start a comparison (``cutover-prep compare --input FILE``)."""

    comparison_id: RunIdText = Field(description=(
        "Names the comparison, its child runs (<comparison_id>-<name>) and instances "
        "(cprep-<comparison_id>-<name>): letters, digits and single hyphens."))
    snapshot_identifier: SnapshotText
    target: ComparisonTarget
    restore: SharedRestore = Field(default_factory=SharedRestore)
    configurations: list[Configuration] = Field(min_length=2, max_length=8)
    warmup: ComparisonWarmup = Field(default_factory=ComparisonWarmup)
    benchmark: Benchmark = Field(default_factory=Benchmark)
    targets: Targets
    max_parallel: Annotated[int, Field(ge=1, le=4)] = 2
    ttl_hours: Annotated[int, Field(ge=1, le=72)] = 12

    _comparison_id = _matching("comparison_id", pattern=RUN_ID, message=(
        "must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit"))
    _snapshot = _matching("snapshot_identifier", pattern=SNAPSHOT_IDENTIFIER, message=(
        "must be a DB snapshot identifier (rds:NAME for an automated one) or a shared snapshot's ARN"))

    @model_validator(mode="after")
    def _names(self) -> ComparisonInput:
        names = [c.name for c in self.configurations]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"configurations: names must be unique: {', '.join(twice)} given more than once")
        for name in names:
            identifier = instance_identifier(self.comparison_id, name)
            if not DB_IDENTIFIER.fullmatch(identifier):
                raise ValueError(
                    f"comparison_id: the instance name {identifier!r} it makes with configuration {name!r} is not "
                    "a valid DB instance identifier (at most 63 letters, digits or single hyphens): use a shorter "
                    "comparison_id of letters, digits and single hyphens")
            run_id = child_run_id(self.comparison_id, name)
            if not RUN_ID.fullmatch(run_id):
                raise ValueError(f"comparison_id: too long for the child run id {run_id!r}")
        return self


def child_run_input(comparison: ComparisonInput, configuration: Configuration) -> dict[str, Any]:
    """The run workflow's input for one configuration (its findings: runs/<comparison_id>-<name>/).

    ``comparison`` links the child to the comparison: the child's ValidateInput records its restore in
    the comparison's record (``ownership.claim_restore``) and its StartRestore then tags the instance
    with the comparison's id and TTL (restore.tags may not: cutover-prep:* keys are reserved)."""
    restore = {
        "snapshot_identifier": comparison.snapshot_identifier,
        **{k: v for k, v in configuration.model_dump(mode="json", exclude_none=True).items() if k != "name"},
        **comparison.restore.model_dump(mode="json", exclude_none=True),
    }
    target = {"db_instance_identifier": instance_identifier(comparison.comparison_id, configuration.name),
              **comparison.target.model_dump(mode="json", exclude_none=True)}
    return {
        "run_id": child_run_id(comparison.comparison_id, configuration.name),
        "target": target,
        "restore": restore,
        "warmup": comparison.warmup.model_dump(mode="json"),
        "benchmark": comparison.benchmark.model_dump(mode="json"),
        "comparison": {"comparison_id": comparison.comparison_id, "ttl_hours": comparison.ttl_hours},
    }


# -- the result: comparison.json ------------------------------------------------------------------
class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


Num = int | float  # kept as given: an int stays an int (json.dumps writes them differently)
Scalar = str | Num | bool | None


class _AsGiven(_Result):
    """A part of comparison.json written with the fields it was given only (as it always was)."""

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Scalar]:
        return {k: v for k, v in handler(self).items() if k in self.model_fields_set}


class Limits(_AsGiven):
    """``limits``: what the class and storage allow (``result.limits_of``), or why that is not known."""

    known: bool | None = None
    why: str | None = None
    peak_iops: Num | None = None
    peak_mib_per_s: Num | None = None
    peak_iops_by: str | None = None
    peak_mib_per_s_by: str | None = None
    sustained_iops: Num | None = None
    sustained_mib_per_s: Num | None = None
    sustained_iops_by: str | None = None
    sustained_mib_per_s_by: str | None = None
    has_burst: bool | None = None
    burst_minutes_from_full: Num | None = None


class PricePart(_AsGiven):
    """One part of a configuration's price (``pricing.book.Price.detail``)."""

    quantity: Num | None = None
    unit: str | None = None
    usd_per_unit: Num | None = None
    usd_per_hour: Num | None = None
    source: str | None = None
    unknown: str | None = None


class RunCost(_AsGiven):
    """A run's own cost: Lambda and Step Functions at the published per-unit prices."""

    lambda_usd: float | None = None
    sfn_usd: float | None = None


class ConfigurationResult(_Result):
    name: str
    status: Literal["MEASURED", "FAILED", "NOT_RUN"]
    run_id: str | None = None
    db_instance_class: str | None = None
    storage_type: str | None = None
    allocated_gb: int | None = None
    iops: int | None = None
    storage_throughput: int | None = None
    read_iops: float | None = None
    read_mib_per_s: float | None = None
    warm_p99_ms: float | None = None
    warmup_mib_per_s: float | None = None
    sustained_read_iops: float | None = None  # a volume with a burst: min(measured, sustained limit)
    sustained_read_mib_per_s: float | None = None
    time_scale: float | None = None  # a local run: the emulated volume's clock factor
    wall_clock: dict[str, Num | None] = Field(default_factory=dict)  # a local run: the figures as measured
    limits: Limits = Field(default_factory=Limits)
    price_per_hour_usd: float | None = None
    price_detail: dict[str, PricePart] = Field(default_factory=dict)
    price_source: str | None = None
    meets_targets: bool | None = None
    why: str = ""
    hours: float | None = None  # the run's duration (its instance's hours in AWS)
    run_cost: RunCost = Field(default_factory=RunCost)


class Recommendation(_Result):
    name: str | None = None
    why: str


class Cleanup(_Result):
    deleted: list[str] = Field(default_factory=list)  # proven its own: deleted, no final snapshot
    left: list[str] = Field(default_factory=list)  # its own, but RDS would not delete it yet
    not_ours: list[str] = Field(default_factory=list)  # found by its tag or a planned name, not proven: kept
    details: list[dict[str, Any]] = Field(default_factory=list)


class Prices(_Result):
    source: str
    dated: str | None = None


class ComparisonCost(_Result):
    instance_hours: float
    usd: float | None = None
    instance_usd: float | None = None
    lambda_usd: float | None = None
    sfn_usd: float | None = None
    basis: str = ""


class ComparisonError(_Result):
    """Why the comparison's execution failed (its Cleanup state's ``error``)."""

    error: str | None = None
    cause: str = ""


class ComparisonResult(_Result):
    """comparison.json. A comparison that did not finish has neither prices nor cost: ``stored`` writes the
    fields the document holds (``model_fields_set``), in this order."""

    comparison_id: str
    targets: dict[str, float] = Field(default_factory=dict)
    configurations: list[ConfigurationResult]
    recommendation: Recommendation
    cleanup: Cleanup = Field(default_factory=Cleanup)
    prices: Prices | None = None
    comparison_cost: ComparisonCost | None = None
    local: bool = False
    error: ComparisonError | None = None

    def stored(self) -> dict[str, Any]:
        """The document as written (JSON types)."""
        return self.model_dump(mode="json", include=set(self.model_fields_set))
