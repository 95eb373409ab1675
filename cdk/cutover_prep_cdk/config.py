"""Deployment settings read from CDK context (``cdk.json`` or ``-c key=value``).

Every key is optional; the defaults give a stack that synthesizes offline without AWS
credentials. ``docs/deploy.md`` lists the keys for users.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import aws_logs as logs
from constructs import Node

from .catalogue import TRIGGERED_WORKFLOW, WORKFLOWS

REPO_ROOT = Path(__file__).resolve().parents[2]
LAMBDA_DIR = REPO_ROOT / "lambdas"
DEFAULT_LAYER_DIR = ".build/layer"
PLACEHOLDER_LAYER_DIR = REPO_ROOT / ".build" / "placeholder-layer"
DEFAULT_STATE_MACHINE_NAME = WORKFLOWS[TRIGGERED_WORKFLOW].state_machine_name

# The retention periods CloudWatch Logs accepts (days -> the CDK's name for it): the one table.
RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}
LOG_RETENTION_DAYS = tuple(RETENTION)

# WarmUnit's reserved concurrency (context warm_concurrency; 0: none). The WarmUp Map fans out into it, so
# it caps what the warm-ups of this deployment take from the account's Lambda concurrency (1,000 by
# default, of which Lambda keeps 100 unreserved), and it is the largest warmup.max_concurrency a run may ask.
DEFAULT_WARM_CONCURRENCY = 100
MAX_WARM_CONCURRENCY = 1000  # the run input's own bound on warmup.max_concurrency


# Lambda allows 4 KB for all environment variables of a function together.
MAX_ALLOWED_HOSTS_CHARS = 2048
# arn:<partition>:secretsmanager:<region>:<account>:secret:<name>; region and account may be wildcards.
_SECRET_ARN = re.compile(r"arn:aws[a-z-]*:secretsmanager:[a-z0-9*?-]*:(?:\d{12}|[*?]+):secret:(?P<name>.+)")


class ConfigError(Exception):
    """A context value is missing or invalid; the message says which and how to fix it."""


class LayerNotBuilt(ConfigError):
    """The Lambda dependency layer has not been built."""


# Every context value is read by one of the readers below, each a one-line ConfigError naming its key for a
# value it cannot take (issue 32 §8.5): ``-c key=value`` gives strings, cdk.json any JSON value.
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _flag(key: str, value: Any, default: bool = False) -> bool:
    """A switch: true or false (also 1/0, yes/no, on/off); anything else is an error, never read as false
    (a typo of restore_trigger=false must not decide what is deployed)."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigError(f"context {key} must be true or false, got {_shown(value)}")


def _strict_flag(key: str, value: Any) -> bool:
    """A switch that loosens a safety rule: true or false, anything else is an error (never a guess)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"context {key} must be true or false, got {_shown(value)}")


def _text(key: str, value: Any) -> str | None:
    """A text value: a string (or a number, which -c would have given as text); never a list or an object."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"context {key} must be text, got {_shown(value)}")
    return str(value).strip()


def _list(key: str, value: Any) -> list[str]:
    """Comma-separated text, or a JSON list of text (cdk.json); an object is not a list of its keys."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple) or any(isinstance(part, bool) or not isinstance(part, str | int)
                                                  for part in value):
        raise ConfigError(f"context {key} must be comma-separated text or a list of text, got {_shown(value)}")
    return [str(part).strip() for part in value if str(part).strip()]


# CloudFormation: a stack name starts with a letter and holds letters, digits and hyphens, at most 128
# (AWS CloudFormation User Guide, "Stack name"; the CDK checks the same pattern with a traceback).
STACK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,127}")
# Step Functions: 1-80 characters, no whitespace, brackets, wildcards or "#%\^|~`$&,;:/ (CreateStateMachine
# name); within the characters the CDK accepts (letters, digits and + ! @ . ( ) = _ ' -).
STATE_MACHINE_NAME = re.compile(r"[A-Za-z0-9+!@.()=_'-]{1,80}")
ACCOUNT = re.compile(r"\d{12}")
REGION = re.compile(r"[a-z]{2}(?:-[a-z]+)+-\d{1,2}")  # us-east-1, us-gov-west-1, ap-southeast-4
EMAIL = re.compile(r"[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+")


def _matching(key: str, value: Any, pattern: re.Pattern[str], rule: str) -> str | None:
    text = _text(key, value)
    if text is not None and not pattern.fullmatch(text):
        raise ConfigError(f"context {key} must be {rule}, got {_shown(text)}")
    return text


def _emails(value: Any) -> tuple[str, ...]:
    emails = tuple(_list("notify_emails", value))
    for email in emails:
        if not EMAIL.fullmatch(email):
            raise ConfigError(f"context notify_emails: {_shown(email)} is not an e-mail address (name@domain); "
                              "separate addresses with commas")
    return emails


def _host(value: str) -> str:
    """One entry of allowed_db_hosts, compared the way the functions compare target.host: lower
    case, no trailing dot. A host name (RFC 1123) or an IP address; no port, scheme or wildcard: by the
    run input's own rule for target.host (``models.run_input.host_problem``), so that every entry is one a
    run can name (issue 32 §8: an IPv6 zone id passed here and no run could use it), without the local run's
    socket directory."""
    from cutover_prep.models.fields import host_problem

    host = value.strip().lower().rstrip(".")
    if host and not host.startswith("/") and host_problem(host) is None:
        return host  # an address as written: the functions compare text, not addresses
    raise ConfigError(
        f"context allowed_db_hosts: {value.strip()!r} is not a host name; list host names or IP addresses "
        "only (e.g. -c allowed_db_hosts=proxy.example.internal,10.0.0.5), without port, scheme or wildcard"
    )


def _hosts(value: Any) -> tuple[str, ...]:
    hosts = tuple(dict.fromkeys(_host(entry) for entry in _list("allowed_db_hosts", value)))
    if len(",".join(hosts)) > MAX_ALLOWED_HOSTS_CHARS:
        raise ConfigError(
            f"context allowed_db_hosts is longer than {MAX_ALLOWED_HOSTS_CHARS} characters; list only the "
            "proxy or tunnel hosts runs really use"
        )
    return hosts


def _secret_arn_pattern(value: Any) -> str | None:
    pattern = _text("secret_arn_pattern", value)
    if pattern is None:
        return None
    match = _SECRET_ARN.fullmatch(pattern)
    if match is None:
        raise ConfigError(
            f"context secret_arn_pattern must be a Secrets Manager secret ARN (pattern), e.g. "
            f"arn:aws:secretsmanager:eu-west-1:111122223333:secret:cutover/*, got {pattern!r}"
        )
    if set(match["name"]) <= {"*", "?"}:
        raise ConfigError(
            "context secret_arn_pattern must not match every secret (secret:*): name a prefix such as "
            "secret:cutover/*, or leave it out and tag the database secrets cutover-prep:access=read "
            "(docs/deploy.md)"
        )
    return pattern


def _int(key: str, value: Any, low: int, high: int) -> int:
    """A whole number: an integer or its digits; not a boolean (true is not 1), a fraction (90.5 is not 90),
    infinity or an object."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    try:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise TypeError
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"context {key} must be a whole number, got {_shown(value)}") from None
    if not low <= number <= high:
        raise ConfigError(f"context {key} must be between {low} and {high}, got {number}")
    return number


# The target's storage for the dashboard's limit annotations (dashboard.py): context keys -> field.
DASHBOARD_TARGET_KEYS = {
    "dashboard_instance_class": "instance_class",
    "dashboard_storage_type": "storage_type",
    "dashboard_allocated_gb": "allocated_gb",
    "dashboard_iops": "iops",
    "dashboard_storage_throughput": "throughput_mbps",
    "dashboard_engine": "engine",
}


@dataclass(frozen=True)
class DashboardTarget:
    """The instance class and storage whose IOPS and throughput ceilings the dashboard draws (the
    dashboard is one per stack, so they are a deploy-time choice; none: no annotations)."""

    instance_class: str
    storage_type: str
    allocated_gb: float
    iops: float | None = None
    throughput_mbps: float | None = None  # provisioned storage throughput, MiB/s
    engine: str | None = None


def _number(key: str, value: Any) -> float | None:
    """A finite number above 0: not a boolean, not infinity (inf, or 1e400, beyond a float), not NaN."""
    if value is None:
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"context {key} must be a number, got {_shown(value)}") from None
    if not math.isfinite(number):
        raise ConfigError(f"context {key} must be a finite number, got {_shown(value)}")
    if not number > 0:
        raise ConfigError(f"context {key} must be above 0, got {_shown(value)}")
    return number


def _dashboard_target(get: Any) -> DashboardTarget | None:
    given = {key: get(key) for key in DASHBOARD_TARGET_KEYS if get(key) is not None}
    if not given:
        return None
    missing = [k for k in ("dashboard_instance_class", "dashboard_storage_type", "dashboard_allocated_gb")
               if k not in given]
    if missing:
        raise ConfigError(f"context {', '.join(sorted(given))} needs {' and '.join(missing)} as well: the "
                          "dashboard's limit annotations need the instance class, the storage type and its size")
    target = DashboardTarget(
        instance_class=_text("dashboard_instance_class", given["dashboard_instance_class"]) or "",
        storage_type=(_text("dashboard_storage_type", given["dashboard_storage_type"]) or "").lower(),
        allocated_gb=_number("dashboard_allocated_gb", given["dashboard_allocated_gb"]) or 0.0,
        iops=_number("dashboard_iops", given.get("dashboard_iops")),
        throughput_mbps=_number("dashboard_storage_throughput", given.get("dashboard_storage_throughput")),
        engine=_text("dashboard_engine", given.get("dashboard_engine")) or None,
    )
    # what RDS provisions for the storage type: the run input's own rule (models/storage_limits.py)
    from cutover_prep.models.storage_limits import storage_problem

    problem = storage_problem(target.storage_type, target.allocated_gb, target.iops, target.throughput_mbps,
                              target.engine)
    if problem:
        raise ConfigError(f"context dashboard_{problem[0]}: {problem[1]}")
    return target


@dataclass(frozen=True)
class Config:
    stack_name: str = "CutoverPrep"
    account: str | None = None
    region: str | None = None
    state_machine_name: str = DEFAULT_STATE_MACHINE_NAME
    layer_dir: Path = REPO_ROOT / DEFAULT_LAYER_DIR
    skip_layer_build: bool = False
    log_retention_days: int = 90
    evidence_retention_days: int = 365
    secret_arn_pattern: str | None = None
    vpc_id: str | None = None
    subnet_ids: tuple[str, ...] = ()
    security_group_id: str | None = None
    availability_zones: tuple[str, ...] = ()
    notifications: bool = False
    notify_emails: tuple[str, ...] = ()
    allowed_db_hosts: tuple[str, ...] = ()
    restore_trigger: bool = True  # the RDS restore events rule and the sweep (docs/deploy.md)
    restore_sweep: bool = True  # the scheduled sweep alone
    restore_lookback_hours: int = 24  # how far back the sweep looks (RESTORE_LOOKBACK_HOURS)
    # a secret that names no DB instance may be used (ALLOW_UNBOUND_SECRETS); one that names another never
    allow_unbound_secrets: bool = False
    warm_concurrency: int = DEFAULT_WARM_CONCURRENCY  # WarmUnit's reserved concurrency; 0: no reservation
    dashboard_target: DashboardTarget | None = None  # the dashboard's limit annotations (dashboard.py)

    @property
    def in_vpc(self) -> bool:
        return self.vpc_id is not None

    @classmethod
    def from_node(cls, node: Node) -> Config:
        def get(key: str) -> Any:
            value = node.try_get_context(key)
            return None if value is None or value == "" else value

        layer_dir = Path(_text("layer_dir", get("layer_dir")) or DEFAULT_LAYER_DIR)
        if not layer_dir.is_absolute():
            layer_dir = REPO_ROOT / layer_dir
        retention = _int("log_retention_days", get("log_retention_days") or 90, 1, 3653)
        if retention not in LOG_RETENTION_DAYS:
            raise ConfigError(
                f"context log_retention_days must be one of {LOG_RETENTION_DAYS}, got {retention}"
            )
        config = cls(
            stack_name=_matching("stack_name", get("stack_name"), STACK_NAME, "a CloudFormation stack name (a "
                                 "letter, then letters, digits and hyphens, at most 128)") or "CutoverPrep",
            account=_matching("account", get("account"), ACCOUNT, "an AWS account id (12 digits)"),
            region=_matching("region", get("region"), REGION, "an AWS region (e.g. eu-west-1)"),
            state_machine_name=_matching("state_machine_name", get("state_machine_name"), STATE_MACHINE_NAME,
                                         "1-80 letters, digits or + ! @ . ( ) = _ ' -")
            or DEFAULT_STATE_MACHINE_NAME,
            layer_dir=layer_dir,
            skip_layer_build=_flag("skip_layer_build", get("skip_layer_build")),
            log_retention_days=retention,
            evidence_retention_days=_int(
                "evidence_retention_days", get("evidence_retention_days") or 365, 1, 36500
            ),
            secret_arn_pattern=_secret_arn_pattern(get("secret_arn_pattern")),
            vpc_id=_text("vpc_id", get("vpc_id")),
            subnet_ids=tuple(_list("subnet_ids", get("subnet_ids"))),
            security_group_id=_text("security_group_id", get("security_group_id")),
            availability_zones=tuple(_list("availability_zones", get("availability_zones"))),
            notifications=_flag("notifications", get("notifications")) or bool(_emails(get("notify_emails"))),
            notify_emails=_emails(get("notify_emails")),
            allowed_db_hosts=_hosts(get("allowed_db_hosts")),
            restore_trigger=_flag("restore_trigger", get("restore_trigger"), default=True),
            restore_sweep=_flag("restore_sweep", get("restore_sweep"), default=True),
            restore_lookback_hours=_int("restore_lookback_hours", get("restore_lookback_hours") or 24, 1, 24 * 14),
            allow_unbound_secrets=_strict_flag("allow_unbound_secrets", get("allow_unbound_secrets")),
            warm_concurrency=_int("warm_concurrency", DEFAULT_WARM_CONCURRENCY if get("warm_concurrency") is None
                                  else get("warm_concurrency"), 0, MAX_WARM_CONCURRENCY),
            dashboard_target=_dashboard_target(get),
        )
        config.check()
        return config

    def check(self) -> None:
        if self.subnet_ids and not self.vpc_id:
            raise ConfigError("context subnet_ids needs vpc_id as well")
        if self.security_group_id and not self.vpc_id:
            raise ConfigError("context security_group_id needs vpc_id as well")
        if self.vpc_id and not self.subnet_ids:
            raise ConfigError(
                "context vpc_id needs subnet_ids (comma-separated private subnets that reach the database)"
            )
        if self.availability_zones and len(self.availability_zones) != len(self.subnet_ids):
            raise ConfigError(
                "context availability_zones must name one zone per subnet in subnet_ids, in the same order"
            )
        if not self.skip_layer_build and not (self.layer_dir / "python").is_dir():
            raise LayerNotBuilt(
                f"Lambda layer not found at {self.layer_dir}: run `make build-lambda` first "
                "(or pass -c skip_layer_build=true for a synth-only check)"
            )

    def resolved_layer_dir(self) -> Path:
        """The layer's source directory; an empty placeholder when the build is skipped."""
        if self.skip_layer_build:
            (PLACEHOLDER_LAYER_DIR / "python").mkdir(parents=True, exist_ok=True)
            keep = PLACEHOLDER_LAYER_DIR / "python" / "PLACEHOLDER"
            if not keep.exists():
                keep.write_text(
                    "Placeholder layer for synth-only runs; `make build-lambda` builds the real one.\n"
                )
            return PLACEHOLDER_LAYER_DIR
        return self.layer_dir
