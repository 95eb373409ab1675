"""The execution input of the warm-up workflow (``RunInput``), validated with pydantic, and its parsing at the
boundary (``parse_run_input``: ValidateInput, the command line, the local run).

Everything but the target and its secret has a default. Unknown fields are rejected so
a typo ("max_concurency") is an error, not a silently ignored option. The secret itself
never appears here: only its ARN. Each section is its own module: ``models.target``, ``models.restore``,
``models.warmup``, ``models.benchmark`` (with ``Preflight``), ``models.thresholds`` (the ``verdict``), their field
types and rules in ``models.fields``.

The input is strict and bounded (``models.fields``), and at most ``MAX_DEPTH`` levels deep. Each violation is one
line naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from cutover_prep.engines.registry import family, hot_set_engine_problem
from cutover_prep.models.benchmark import Benchmark, Preflight
from cutover_prep.models.fields import (
    RUN_ID,
    WARMUP_GLOBS,
    RunIdText,
    _field_error,
    _matching,
    _names_problems,
    _Strict,
    name_problem,
)
from cutover_prep.models.restore import Restore
from cutover_prep.models.storage_limits import storage_problem
from cutover_prep.models.target import DATABASE_CHOICE_TAGS, Target
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.models.warmup import Warmup

MAX_DEPTH = 16  # the run input itself is 3 levels deep (restore.tags.KEY)
MAX_PROBLEMS = 10  # problems listed in one error; the rest are counted


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN of the state machine's execution called ``name``."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + name


EXECUTION_ARN = re.compile(r"^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[^\s:]{1,80}:[^\s:]{1,80}$")
_ARN_PLACE = re.compile(r"^arn:(?P<partition>aws[a-z-]*):[a-z0-9-]*:(?P<region>[a-z0-9-]*):(?P<account>\d{12})?:")


@dataclass(frozen=True)
class AwsPlace:
    """Where a deployment runs: partition, region, account; None where it is not known."""

    partition: str | None = None
    region: str | None = None
    account: str | None = None

    @classmethod
    def of_arn(cls, arn: str | None) -> AwsPlace:
        """The place an ARN names (``arn:PARTITION:SERVICE:REGION:ACCOUNT:...``)."""
        m = _ARN_PLACE.match(arn or "")
        if not m:
            return cls()
        return cls(m["partition"], m["region"] or None, m["account"] or None)


def check_started_by(started_by: str | None, deployment: AwsPlace | None) -> None:
    """The execution that starts a run is one of its own deployment's: same partition, region, account."""
    if not started_by or deployment is None:
        return
    theirs = AwsPlace.of_arn(started_by)
    for part in ("partition", "region", "account"):
        mine, other = getattr(deployment, part), getattr(theirs, part)
        if mine and other != mine:
            raise InvalidInput(f"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: names an execution in {part} {other}, "
                               f"but this deployment is in {part} {mine}: only an execution of the same deployment "
                               "starts its runs (a comparison sets the field itself); remove the field")



class InvalidInput(Exception):
    """The execution input is wrong; the message names the field and how to fix it.

    ``problems`` holds one line per bad field ("field: why"); the message joins them with "; ".
    """

    error_type = "InvalidInput"

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


class RunIdReused(Exception):
    """The run id names a run that was started for another target or with other options."""


class ComparisonLink(_Strict):
    """What a comparison puts in the input of each child run it starts; never set it yourself."""

    comparison_id: RunIdText
    ttl_hours: Annotated[int, Field(ge=1, le=72)]

    _comparison_id = _matching("comparison_id", pattern=RUN_ID, message=(
        "must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit"))


class RunInput(_Strict):
    """What a user passes to start a run (console, CLI, EventBridge)."""

    target: Target
    restore: Restore | None = None
    warmup: Warmup = Field(default_factory=Warmup)
    benchmark: Benchmark = Field(default_factory=Benchmark)
    verdict: Thresholds = Field(default_factory=Thresholds)
    preflight: Preflight = Field(default_factory=Preflight)
    run_id: RunIdText | None = None
    AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: Annotated[str, Field(max_length=2048)] | None = Field(
        default=None, description="The execution that started this run (a comparison sets it for each child run): "
        "Step Functions then links the two executions in its console; the findings record it as started_by.")
    comparison: ComparisonLink | None = Field(
        default=None, description="Set by a comparison in the input of each child run it starts, never by hand: "
        "the run restores the instance for that comparison (tagged with its id and TTL) only when the "
        "comparison's record, written before the restore, names this run, its instance and its execution.")

    @field_validator("comparison")
    @classmethod
    def _child_of_comparison(cls, v: ComparisonLink | None, info: ValidationInfo) -> ComparisonLink | None:
        if v is not None and info.data.get("restore") is None:  # the rest is checked against its record
            raise ValueError("set only by a comparison for the child runs it starts, which restore; remove it")
        return v

    _run_id = _matching("run_id", pattern=RUN_ID,
                        message="must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit")

    @model_validator(mode="after")
    def _storage_of_the_engine(self) -> RunInput:
        """The restore's storage by the limits of the engine named (gp3 is provisioned from 200 GiB on
        Oracle, 400 GiB on the others)."""
        r = self.restore
        if r is not None and self.target.engine:
            problem = storage_problem(r.storage_type, r.allocated_gb, r.iops, r.storage_throughput,
                                      self.target.engine)
            if problem:
                raise _field_error(f"restore.{problem[0]}", problem[1])
        return self

    @model_validator(mode="after")
    def _hot_set_of_the_engine(self) -> RunInput:
        """A hot set names segments as its engine's discovery does: one taken on another engine matches nothing."""
        hot = self.warmup.hot_set
        if hot is not None and self.target.engine and (problem := hot_set_engine_problem(hot.engine,
                                                                                          self.target.engine)):
            raise _field_error("warmup.hot_set.engine", problem)  # else Discover checks (check_hot_set_engine)
        return self

    @model_validator(mode="after")
    def _one_database_selection(self) -> RunInput:
        """target.databases and warmup.databases both choose the databases: one of them (issue 33 §1)."""
        databases = self.target.databases
        if databases is not None and self.warmup.databases:
            raise _field_error("target.databases", "and warmup.databases both choose the databases: give one "
                               "(target.databases takes names or \"all\", warmup.databases globs)")
        if isinstance(databases, list) and self.target.engine and not family(self.target.engine).database_is_identifier:
            raise _field_error("target.databases", f"{family(self.target.engine).label} reads the one database its "
                               "service names: choose its schemas with warmup.include_schemas")
        return self

    @model_validator(mode="after")
    def _names_of_the_engine(self) -> RunInput:
        """target.database and the warmup globs by the identifier limit of the engine named (issue 32 §8.4)."""
        engine = self.target.engine
        if not engine:
            return self  # the largest limit of any engine: Warmup checked it
        problems = []
        if self.target.database and family(engine).database_is_identifier:
            problem = name_problem(self.target.database, engine, glob=False, dotted=False)
            problems += [("target.database", problem)] if problem else []
        if isinstance(self.target.databases, list):
            problems += _names_problems("target.databases", self.target.databases, engine, glob=False, dotted=False)
        for name, dotted in WARMUP_GLOBS:
            problems += _names_problems(f"warmup.{name}", getattr(self.warmup, name), engine, glob=True,
                                        dotted=dotted)
        for field, problem in problems[:1]:
            raise _field_error(field, problem)
        return self

    _started_by = _matching("AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID", pattern=EXECUTION_ARN,
                            message="must be a Step Functions execution ARN (arn:aws:states:REGION:ACCOUNT:"
                            "execution:STATE_MACHINE:NAME)")


def _printable(part: Any, limit: int = 48) -> str:
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in str(part)[:limit + 1])
    return text if len(str(part)) <= limit else text[:limit] + "…"


def _location(loc: tuple[Any, ...]) -> str:
    """``warmup.priority.3``; a field name from the input is cut short and its control characters escaped."""
    text = ".".join(_printable(p) for p in loc) or "input"
    return text if len(text) <= 120 else text[:119] + "…"


_MESSAGES = {
    "bool_type": "must be true or false (a JSON boolean, not a string or a number)",
    "int_type": "must be a whole number (a JSON number, not a string or a boolean)",
    "float_type": "must be a number (a JSON number, not a string or a boolean)",
    "string_type": "must be a string",
    "list_type": "must be a list (a JSON array)",
    "dict_type": "must be an object (a JSON object)",
    "model_type": "must be an object (a JSON object)",
    "extra_forbidden": "unknown field (check the spelling; see schema/run-input.schema.json)",
    "finite_number": "must be a finite number (not Infinity, NaN, or beyond about 1.8e308)",
    "missing": "is required",
}


def error_lines(exc: ValidationError) -> list[str]:
    """One line per bad field, at most MAX_PROBLEMS of them (then how many more)."""
    errors = exc.errors(include_input=False, include_url=False)
    lines = [f"{_location(_loc(err))}: {_MESSAGES.get(err['type'], err['msg'].removeprefix('Value error, '))}"
             for err in errors[:MAX_PROBLEMS]]
    if len(errors) > MAX_PROBLEMS:
        lines.append(f"input: {len(errors) - MAX_PROBLEMS} more problems (fix the ones above first)")
    return lines


def _loc(err: Any) -> tuple[Any, ...]:
    """Where an error is; a model validator's ``_field_error`` names its field."""
    if err["type"] == "field_problem":
        return (*err["loc"], *str(err["ctx"]["field"]).split("."))
    return tuple(p for p in err["loc"] if p not in DATABASE_CHOICE_TAGS)


def describe_errors(exc: ValidationError) -> str:
    """One line naming every bad field: 'target.secret_arn: must be ...; warmup.x: unknown field'."""
    return "; ".join(error_lines(exc))


def check_depth(raw: Any, limit: int = MAX_DEPTH) -> None:
    """No recursion on the way: a 200,000-level input is one line, not a RecursionError."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(raw, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > limit:
            raise InvalidInput(f"{_location(path[:8] + ('…',))}: nested more than {limit} levels deep "
                               "(the run input is a few levels deep; see schema/run-input.schema.json)")
        if isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((v, (*path, i)) for i, v in enumerate(node))


def check_host(host: str | None, allowed_hosts: Collection[str] | None) -> None:
    """``target.host`` must be one of the hosts fixed at deploy time; None: not checked (offline, local)."""
    if allowed_hosts is None or host is None:
        return
    if host.lower() not in {h.strip().lower() for h in allowed_hosts}:
        raise InvalidInput(f"target.host: {host} is not in this deployment's allow-list of database hosts "
                           "(deploy context allowed_db_hosts); remove target.host to connect to the endpoint "
                           "RDS reports for the instance")


def parse_run_input(raw: Any, *, execution_name: str | None = None,
                    allowed_hosts: Collection[str] | None = None,
                    deployment: AwsPlace | None = None) -> dict[str, Any]:
    """Validate ``raw`` and return the normalised run configuration the workflow carries.

    ``allowed_hosts``: the database hosts this deployment may connect to besides the RDS endpoint
    (deploy context ``allowed_db_hosts``); None means not checked (offline validation, the local run).
    ``deployment``: where this deployment runs (ValidateInput: from its own function ARN); the
    execution named by AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID must be there. None: not checked.
    """
    if not isinstance(raw, dict):
        raise InvalidInput("input: must be a JSON object with at least target.db_instance_identifier "
                           "and target.secret_arn")
    check_depth(raw)
    try:
        run = RunInput.model_validate(raw, strict=True)  # strict reaches verdict (verdict.Thresholds) too
    except ValidationError as exc:
        lines = error_lines(exc)
        raise InvalidInput("; ".join(lines), lines) from None
    except RecursionError:
        raise InvalidInput("input: nested too deeply") from None
    check_host(run.target.host, allowed_hosts)
    check_started_by(run.AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID, deployment)
    run_id = run.run_id or execution_name
    if not run_id or not RUN_ID.match(run_id):
        run_id = f"{run.target.db_instance_identifier}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    # target.databases only when given: every state's payload stays as it was (its 256 KiB limit)
    config = run.model_dump(mode="json", exclude={"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID": True, **(
        {"target": {"databases"}} if run.target.databases is None else {})})
    config["run_id"] = run_id
    config["started_by"] = run.AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID
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
