"""Deployment settings read from CDK context (``cdk.json`` or ``-c key=value``).

Every key is optional; the defaults give a stack that synthesizes offline without AWS
credentials. ``docs/deploy.md`` lists the keys for users.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from constructs import Node

REPO_ROOT = Path(__file__).resolve().parents[2]
LAMBDA_DIR = REPO_ROOT / "lambdas"
STATE_MACHINE_FILE = REPO_ROOT / "statemachines" / "warmup.asl.json"
DEFAULT_LAYER_DIR = ".build/layer"
PLACEHOLDER_LAYER_DIR = REPO_ROOT / ".build" / "placeholder-layer"

# The retention periods CloudWatch Logs accepts.
LOG_RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)


class ConfigError(Exception):
    """A context value is missing or invalid; the message says which and how to fix it."""


class LayerNotBuilt(ConfigError):
    """The Lambda dependency layer has not been built."""


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(part).strip() for part in value if str(part).strip()]


def _int(key: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"context {key} must be a whole number, got {value!r}") from None
    if not low <= number <= high:
        raise ConfigError(f"context {key} must be between {low} and {high}, got {number}")
    return number


@dataclass(frozen=True)
class Config:
    stack_name: str = "CutoverPrep"
    account: str | None = None
    region: str | None = None
    state_machine_name: str = "cutover-prep-warmup"
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

    @property
    def in_vpc(self) -> bool:
        return self.vpc_id is not None

    @classmethod
    def from_node(cls, node: Node) -> Config:
        def get(key: str) -> Any:
            value = node.try_get_context(key)
            return None if value is None or value == "" else value

        layer_dir = Path(str(get("layer_dir") or DEFAULT_LAYER_DIR))
        if not layer_dir.is_absolute():
            layer_dir = REPO_ROOT / layer_dir
        retention = _int("log_retention_days", get("log_retention_days") or 90, 1, 3653)
        if retention not in LOG_RETENTION_DAYS:
            raise ConfigError(
                f"context log_retention_days must be one of {LOG_RETENTION_DAYS}, got {retention}"
            )
        config = cls(
            stack_name=str(get("stack_name") or "CutoverPrep"),
            account=get("account"),
            region=get("region"),
            state_machine_name=str(get("state_machine_name") or "cutover-prep-warmup"),
            layer_dir=layer_dir,
            skip_layer_build=_flag(get("skip_layer_build") or False),
            log_retention_days=retention,
            evidence_retention_days=_int(
                "evidence_retention_days", get("evidence_retention_days") or 365, 1, 36500
            ),
            secret_arn_pattern=get("secret_arn_pattern"),
            vpc_id=get("vpc_id"),
            subnet_ids=tuple(_list(get("subnet_ids"))),
            security_group_id=get("security_group_id"),
            availability_zones=tuple(_list(get("availability_zones"))),
            notifications=_flag(get("notifications") or False) or bool(_list(get("notify_emails"))),
            notify_emails=tuple(_list(get("notify_emails"))),
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
