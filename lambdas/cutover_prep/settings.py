"""Environment variables of the Lambda functions, as a pydantic model."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

TlsMode = Literal["require", "prefer", "disable"]


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
      (TLS when the server offers it, unverified; else plaintext) or ``disable`` (plaintext).
      Only the local run against a database the user typed sets ``prefer`` or ``disable``.
    """

    allowed_db_hosts: tuple[str, ...] = Field(alias="ALLOWED_DB_HOSTS", default=())
    tls: TlsMode = Field(alias="CUTOVER_PREP_TLS", default="require")

    @field_validator("allowed_db_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list | tuple):
            return tuple(normalize_host(str(v)) for v in value if str(v).strip())
        return value

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

    A bad ``CUTOVER_PREP_TLS`` is one line naming the variable and its values."""
    env = {k: v for k, v in os.environ.items() if k in ("ALLOWED_DB_HOSTS", "CUTOVER_PREP_TLS")}
    try:
        return ConnectionPolicy.model_validate(env)
    except ValidationError:
        raise ValueError(f"CUTOVER_PREP_TLS must be require, prefer or disable, got {env.get('CUTOVER_PREP_TLS')!r}"
                         ) from None
