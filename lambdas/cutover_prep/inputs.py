"""The execution input of the warm-up workflow, validated with pydantic.

Everything but the target and its secret has a default. Unknown fields are rejected so
a typo ("max_concurency") is an error, not a silently ignored option. The secret itself
never appears here: only its ARN.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cutover_prep.verdict import RUN_ID_PATTERN, Thresholds

SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$")
DB_IDENTIFIER = re.compile(r"^[A-Za-z](?!.*--)[A-Za-z0-9-]{0,62}(?<!-)$")
RUN_ID = re.compile(RUN_ID_PATTERN)


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN of the state machine's execution called ``name``."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + name


class InvalidInput(Exception):
    """The execution input is wrong; the message names the field and how to fix it."""

    error_type = "InvalidInput"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Target(_Strict):
    db_instance_identifier: str = Field(description="The RDS DB instance to warm (or to create by restore).")
    secret_arn: str = Field(description="Secrets Manager ARN of the database credentials.")
    engine: Literal["postgres", "oracle"] | None = Field(
        default=None, description="Engine family; default: from the RDS instance.")
    database: str | None = Field(
        default=None, description="Database (PostgreSQL) or service name (Oracle); default: from the secret.")
    host: str | None = Field(
        default=None, description="Connect here instead of the instance endpoint (tunnel, proxy, local run).")
    port: Annotated[int, Field(ge=1, le=65535)] | None = None

    @field_validator("db_instance_identifier")
    @classmethod
    def _identifier(cls, v: str) -> str:
        if not DB_IDENTIFIER.match(v):
            raise ValueError("must be 1-63 letters, digits or hyphens, start with a letter, "
                             "no double or trailing hyphen")
        return v

    @field_validator("secret_arn")
    @classmethod
    def _arn(cls, v: str) -> str:
        if not SECRET_ARN.match(v):
            raise ValueError("must be a Secrets Manager secret ARN "
                             "(arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME); never the secret itself")
        return v


class Restore(_Strict):
    snapshot_identifier: str
    db_instance_class: str | None = None
    storage_type: Literal["gp2", "gp3", "io1", "io2", "standard"] | None = None
    iops: Annotated[int, Field(ge=1000, le=256000)] | None = None
    storage_throughput: Annotated[int, Field(ge=125, le=4000)] | None = None
    db_subnet_group_name: str | None = None
    vpc_security_group_ids: list[str] = Field(default_factory=list)
    db_parameter_group_name: str | None = None
    option_group_name: str | None = None
    multi_az: bool = False
    tags: dict[str, str] = Field(default_factory=dict)
    poll_seconds: Annotated[int, Field(ge=5, le=3600)] = 60
    max_wait_minutes: Annotated[int, Field(ge=1, le=24 * 60)] = 180

    @field_validator("db_instance_class")
    @classmethod
    def _class(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^db\.[a-z0-9-]+\.[a-z0-9]+$", v):
            raise ValueError("must look like db.r6i.large")
        return v

    @field_validator("vpc_security_group_ids")
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        for sg in v:
            if not re.match(r"^sg-[0-9a-f]{8,17}$", sg):
                raise ValueError(f"{sg!r} is not a security group id (sg-...)")
        return v

    @model_validator(mode="after")
    def _storage(self) -> Restore:
        if self.iops is not None and self.storage_type not in ("io1", "io2", "gp3"):
            raise ValueError("iops needs storage_type io1, io2 or gp3")
        if self.storage_throughput is not None and self.storage_type != "gp3":
            raise ValueError("storage_throughput needs storage_type gp3")
        if self.storage_type in ("io1", "io2") and self.iops is None:
            raise ValueError(f"storage_type {self.storage_type} needs iops")
        return self


class Warmup(_Strict):
    max_concurrency: Annotated[int, Field(ge=1, le=1000)] = 8
    databases: list[str] = Field(default_factory=list)
    include_schemas: list[str] = Field(default_factory=list)
    exclude_schemas: list[str] = Field(default_factory=list)
    include_system: bool = False
    priority: list[str] = Field(default_factory=list)
    unit_mb: Annotated[int, Field(ge=1, le=100_000)] | None = None
    assumed_cold_mib_per_s: Annotated[float, Field(gt=0, le=10_000)] = 8.0
    chunk_mb: Annotated[int, Field(ge=1, le=4096)] = 64
    create_extension: bool = False
    wait_seconds: Annotated[int, Field(ge=0, le=3600)] = 30


class Benchmark(_Strict):
    """Probes before and after the warm-up, then the sweep; each point runs alone."""

    enabled: bool = Field(default=True, description="Run the probes and the benchmark sweep after the warm-up.")
    probe_blocks: Annotated[int, Field(ge=0, le=100_000)] = Field(
        default=500, description="Blocks in the cold/warm probe sample (0: no probes).")
    probe_max_seconds: Annotated[float, Field(gt=0, le=600)] = 60
    seconds_per_point: Annotated[float, Field(ge=1, le=600)] = Field(
        default=20, description="Duration of each sweep point; use 60+ to read CloudWatch per point.")
    mbrc_values: list[Annotated[int, Field(ge=1, le=1024)]] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32, 64, 128],
        description="Oracle: db_file_multiblock_read_count values of the IO-size sweep.")
    io_combine_kb_values: list[Annotated[int, Field(ge=8, le=1024)]] = Field(
        default_factory=lambda: [8, 16, 32, 64, 128, 256],
        description="PostgreSQL 17+: io_combine_limit values (kB) of the IO-size sweep.")
    sessions: list[Annotated[int, Field(ge=1, le=64)]] = Field(
        default_factory=lambda: [1, 2, 4, 8], description="Sessions of the random single-block read points.")
    write_test: bool = Field(default=False, description="Opt-in write points in a scratch schema, dropped after.")
    metrics_wait_minutes: Annotated[int, Field(ge=0, le=60)] = Field(
        default=10, description="How long to wait for CloudWatch datapoints before recording them missing.")
    metrics_poll_seconds: Annotated[int, Field(ge=10, le=600)] = 60
    compare_limits: bool = Field(
        default=True, description="Compare with the published limits of the instance class and storage "
        "(false when the database read is not that RDS instance, e.g. the local run).")


class RunInput(_Strict):
    """What a user passes to start a run (console, CLI, EventBridge)."""

    target: Target
    restore: Restore | None = None
    warmup: Warmup = Field(default_factory=Warmup)
    benchmark: Benchmark = Field(default_factory=Benchmark)
    verdict: Thresholds = Field(default_factory=Thresholds)
    run_id: str | None = None

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, v: str | None) -> str | None:
        if v is not None and not RUN_ID.match(v):
            raise ValueError("must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit")
        return v


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "input"


def describe_errors(exc: ValidationError) -> str:
    """One line naming every bad field: 'target.secret_arn: must be ...; warmup.x: unknown field'."""
    parts = []
    for err in exc.errors():
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; see schema/run-input.schema.json)"
        elif err["type"] == "missing":
            msg = "is required"
        parts.append(f"{_location(err['loc'])}: {msg}")
    return "; ".join(parts)


def parse_run_input(raw: Any, *, execution_name: str | None = None) -> dict[str, Any]:
    """Validate ``raw`` and return the normalised run configuration the workflow carries."""
    if not isinstance(raw, dict):
        raise InvalidInput("input: must be a JSON object with at least target.db_instance_identifier "
                           "and target.secret_arn")
    try:
        run = RunInput.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInput(describe_errors(exc)) from None
    run_id = run.run_id or execution_name
    if not run_id or not RUN_ID.match(run_id):
        run_id = f"{run.target.db_instance_identifier}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    config = run.model_dump(mode="json")
    config["run_id"] = run_id
    config["started_at"] = datetime.now(UTC).isoformat()
    return config


def check_baseline(config: dict[str, Any], get_run: Any) -> None:
    """A named baseline must be a finished run of this deployment: known at the start, not hours later."""
    baseline = (config.get("verdict") or {}).get("baseline_run_id")
    if not baseline:
        return
    if baseline == config["run_id"]:
        raise InvalidInput("verdict.baseline_run_id: is this run's own id; name an earlier run")
    run = get_run(baseline)
    if run is None:
        raise InvalidInput(f"verdict.baseline_run_id: no run {baseline!r} in this deployment "
                           "(check the id with `cutover-prep status`, or drop the field)")
    if run.get("step") != "finished":
        raise InvalidInput(f"verdict.baseline_run_id: run {baseline!r} has no findings to compare with "
                           f"(it is {str(run.get('status') or 'unknown').lower()}); name a finished run")
