"""Environment variables of the Lambda functions, as a pydantic model."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

DEPLOYMENT_ID_ENV = "CUTOVER_PREP_DEPLOYMENT_ID"  # the stack sets it on every function: its StackId (workflows)

TlsMode = Literal["require", "verify-ca", "unverified", "prefer", "disable"]  # see engines.transport


def normalize_host(host: str) -> str:
    """A host name as compared with the allow-list: lower case, no trailing dot (paths kept as they are)."""
    host = host.strip()
    return host if host.startswith("/") else host.lower().rstrip(".")


class ConnectionPolicy(BaseModel):
    """Where database credentials may go and how (read by ``connection`` and the engines).

    - ``ALLOWED_DB_HOSTS``: comma-separated hosts (e.g. an RDS Proxy endpoint) that may receive
      the credentials besides the endpoint RDS reports for the target instance; set by the
      stack at deploy time, empty by default.
    - ``CUTOVER_PREP_TLS``: ``require`` (default: TLS verified against the RDS CA bundle,
      PostgreSQL refuses cleartext password authentication, Oracle uses TCPS), ``prefer``
      (TLS when the server offers it, unverified; else plaintext) or ``disable`` (plaintext);
      ``verify-ca`` (the certificate verified, not its host name) and ``unverified`` (TLS, not
      verified). Only the local run against a database the user typed sets any but ``require``,
      as its DSN asks (``sslmode``, ``ssl-mode``, ``protocol``).
    - ``CUTOVER_PREP_TLS_CA``: a PEM file of CA certificates that replaces the RDS CA bundle for
      ``require`` and ``verify-ca`` (the local run's ``sslrootcert``/``ssl-ca``); unset by default.
    - ``ALLOW_UNBOUND_SECRETS``: ``true`` lets a secret that names no DB instance be used
      (``secret_binding``); default ``false``, set by the stack from CDK context
      ``allow_unbound_secrets``. A secret that names another instance is refused either way.
    """

    allowed_db_hosts: tuple[str, ...] = Field(alias="ALLOWED_DB_HOSTS", default=())
    tls: TlsMode = Field(alias="CUTOVER_PREP_TLS", default="require")
    tls_ca: str | None = Field(alias="CUTOVER_PREP_TLS_CA", default=None)
    allow_unbound_secrets: bool = Field(alias="ALLOW_UNBOUND_SECRETS", default=False)

    @field_validator("allowed_db_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list | tuple):
            return tuple(normalize_host(str(v)) for v in value if str(v).strip())
        return value

    @field_validator("tls_ca", mode="before")
    @classmethod
    def _no_empty_ca(cls, value: object) -> object:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("tls", mode="before")
    @classmethod
    def _tls_lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    def host_allowed(self, host: str) -> bool:
        return normalize_host(host) in self.allowed_db_hosts


class Settings(ConnectionPolicy):
    table_name: str = Field(alias="TABLE_NAME", min_length=3)
    bucket_name: str = Field(alias="BUCKET_NAME", min_length=3)
    service_name: str = Field(alias="POWERTOOLS_SERVICE_NAME", default="cutover-prep")
    safety_margin_seconds: float = Field(alias="SAFETY_MARGIN_SECONDS", default=30.0, ge=1)
    read_attempts: int = Field(alias="READ_ATTEMPTS", default=3, ge=1, le=10)
    state_machine_arn: str | None = Field(alias="STATE_MACHINE_ARN", default=None)
    restore_lookback_hours: float = Field(alias="RESTORE_LOOKBACK_HOURS", default=24, gt=0, le=24 * 14)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings.model_validate(dict(os.environ))


def connection_policy() -> ConnectionPolicy:
    """The connection policy from the environment alone (read at each call: cheap, and tests set it).

    A bad ``CUTOVER_PREP_TLS`` or ``ALLOW_UNBOUND_SECRETS`` is one line naming the variable and its values."""
    env = {k: v for k, v in os.environ.items() if k in _POLICY_VALUES}
    try:
        return ConnectionPolicy.model_validate(env)
    except ValidationError as exc:
        name = next((str(e["loc"][0]) for e in exc.errors() if e.get("loc") and e["loc"][0] in _POLICY_VALUES),
                    "CUTOVER_PREP_TLS")
        raise ValueError(f"{name} must be {_POLICY_VALUES[name]}, got {env.get(name)!r}") from None


# the environment variables of the policy that take one of a few values: what a bad one is told
_POLICY_VALUES = {"ALLOWED_DB_HOSTS": "comma-separated host names",
                  "CUTOVER_PREP_TLS": "require, verify-ca, unverified, prefer or disable",
                  "CUTOVER_PREP_TLS_CA": "a PEM file of CA certificates",
                  "ALLOW_UNBOUND_SECRETS": "true or false"}


def environment(*names: str) -> dict[str, str]:
    """The variables ``names`` of the function's environment that are set (read at each call): the one reader of
    the environment besides the models above, for the few modules that take a mapping (``warm_concurrency``,
    ``live.names``) and are tested with their own."""
    return {name: os.environ[name] for name in names if name in os.environ}


class AwsEnvironment(BaseModel):
    """What the Lambda runtime (or the shell) says of the AWS region: ``AWS_REGION``, else ``AWS_DEFAULT_REGION``."""

    region: str | None = Field(alias="AWS_REGION", default=None)
    default_region: str | None = Field(alias="AWS_DEFAULT_REGION", default=None)


def aws_region() -> str | None:
    """The function's region (read at each call; None when neither variable is set or both are empty)."""
    env = AwsEnvironment.model_validate({k: v for k, v in os.environ.items() if k in ("AWS_REGION",
                                                                                        "AWS_DEFAULT_REGION")})
    return env.region or env.default_region or None


def deployment_id() -> str | None:
    """This deployment's id (``CUTOVER_PREP_DEPLOYMENT_ID``: the stack sets its StackId on every function),
    read at each call; None when unset. The run tags what it restores with it; the comparison's Cleanup
    and the reaper delete only instances carrying it (``comparison/ownership.py``)."""
    return os.environ.get(DEPLOYMENT_ID_ENV, "").strip() or None
