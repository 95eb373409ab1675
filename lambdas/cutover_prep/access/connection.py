"""Build a ``ConnectionSpec`` from the run's target and its Secrets Manager secret.

The secret is read inside the Lambda at run time and never returned, logged or stored.
It is used only for the instance it belongs to (``secret_binding``: its dbInstanceIdentifier or
host, or RDS's aws:rds:primaryDBInstanceArn tag, names the target or the instance the run restored
it from), else ``SecretNotBound`` before any connection.

The credentials go only to the target: the endpoint RDS reports for the instance
(the instance facts' ``address``, from DescribeDBInstances; a restored instance has a new
one), or a host the deployment allow-listed (``ALLOWED_DB_HOSTS``, e.g. an RDS Proxy).
- ``target.host`` (an override, for a proxy) must be one of those two, else the run is
  refused with ``DatabaseUnreachable`` before the secret's password is used;
- the secret's own ``host`` field is used only when RDS reports no endpoint, and only if it
  is allow-listed: a secret cannot redirect the password elsewhere either.
Port: the target's, else the instance's (not with a host override), else the secret's,
else the engine's default (``engines.registry``). The connection's TLS mode and CA file are the
deployment's (``CUTOVER_PREP_TLS``, default ``require``; ``CUTOVER_PREP_TLS_CA``, default the RDS
CA bundle; see ``engines.transport``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cutover_prep.access import secret_binding
from cutover_prep.access.facts import InstanceFacts
from cutover_prep.access.secret_binding import TagReader
from cutover_prep.engines import ConnectionSpec, DatabaseUnreachable
from cutover_prep.engines.registry import UnknownEngine, engine_names, families, family
from cutover_prep.models.target import Target
from cutover_prep.settings import ConnectionPolicy, connection_policy, normalize_host

DEFAULT_PORT = {f.name: f.default_port for f in families()}
DEFAULT_DATABASE = {f.name: f.default_database for f in families()}

SecretReader = Callable[[str], str]


def secrets_manager_reader(client: Any) -> SecretReader:
    def read(arn: str) -> str:
        return client.get_secret_value(SecretId=arn)["SecretString"]

    return read


def secrets_manager_tags(client: Any) -> TagReader:
    """The secret's tags (DescribeSecret: metadata, not its value)."""
    def read(arn: str) -> dict[str, str]:
        return {t["Key"]: t["Value"] for t in client.describe_secret(SecretId=arn).get("Tags") or []}

    return read


def allowed_host(host: str, endpoint: str | None, policy: ConnectionPolicy) -> bool:
    """Whether credentials may be sent to ``host``: the RDS endpoint or an allow-listed host."""
    return (bool(endpoint) and normalize_host(host) == normalize_host(str(endpoint))) or policy.host_allowed(host)


def target_host(target: Target, instance: InstanceFacts, secret_host: str | None, policy: ConnectionPolicy) -> str:
    """The host the credentials go to, by the rules in the module docstring; one-line error otherwise."""
    ident, endpoint = target.db_instance_identifier, instance.address
    override = target.host
    if override:
        if not allowed_host(str(override), endpoint, policy):
            raise DatabaseUnreachable(
                f"target.host {override!r} is neither the endpoint RDS reports for {ident} ({endpoint or 'none yet'}) "
                "nor in the deployment's ALLOWED_DB_HOSTS: the credentials go only there; remove target.host, "
                "or add the host (e.g. an RDS Proxy endpoint) to the stack's allowed database hosts")
        return str(override)
    if endpoint:
        return str(endpoint)
    if secret_host and allowed_host(str(secret_host), None, policy):
        return str(secret_host)
    if secret_host:
        raise DatabaseUnreachable(
            f"no endpoint for {ident}: RDS reports none yet, and the secret's host is not in the deployment's "
            "ALLOWED_DB_HOSTS (a secret cannot send the credentials elsewhere); wait for the instance or "
            "allow-list the host")
    raise DatabaseUnreachable(f"no endpoint for {ident}: the instance has none yet and the secret has no host")


class DbSecret(BaseModel):
    """The secret's fields the connection uses (AWS's structure for RDS credentials), once ``check_secret_fields``
    and ``secret_binding.check`` took it: ``port`` a whole number (or its digits); ``engine`` as the secret says
    it. The password never appears in repr."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    username: str
    password: str = Field(repr=False)
    dbname: str | None = None
    host: str | None = None
    port: int | None = None
    engine: str | None = None

    @field_validator("port", mode="before")
    @classmethod
    def _digits(cls, value: object) -> object:
        return int(value.strip()) if isinstance(value, str) else value

    @field_validator("engine", mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        return None if value is None else str(value)


def check_secret_fields(secret: dict[str, Any], arn: str) -> None:
    """The secret's fields by the types of AWS's structure ("JSON structure of AWS Secrets Manager secrets"):
    username, password, dbname text; port a whole number 1-65535 (or its digits). A field of another type was
    used as it came (a JSON true is port 1) or broke in the driver; now ``DatabaseUnreachable`` naming the field
    (never its value: it may be the password)."""
    for name in ("username", "password", "dbname"):
        if name in secret and not isinstance(secret[name], str):
            given = secret_binding.json_type(secret[name])
            raise DatabaseUnreachable(f"secret {arn}: its {name} must be text ({given} given)")
    port = secret.get("port")
    if port is None:
        return
    text = port.strip() if isinstance(port, str) else None
    number = port if isinstance(port, int) and not isinstance(port, bool) else int(text) if text and \
        text.isascii() and text.isdigit() else None
    if number is None or not 1 <= number <= 65535:
        given = "text" if isinstance(port, str) else secret_binding.json_type(port)
        raise DatabaseUnreachable(f"secret {arn}: its port must be a whole number from 1 to 65535 ({given} given "
                                  "that is not one)")


def connection_spec(target: Target, instance: Mapping[str, Any] | None, read_secret: SecretReader,
                    policy: ConnectionPolicy | None = None, *, read_tags: TagReader | None = None) -> ConnectionSpec:
    """The spec for the run's ``target`` on the ``instance`` DescribeInstance found (its facts:
    ``restore.rds.instance_facts``; none yet: empty); ``policy`` defaults to the environment's
    (``connection_policy``).

    ``read_tags`` reads the secret's tags, for a secret whose JSON names no instance (without it, such a
    secret has no binding: refused unless the policy allows unbound secrets)."""
    policy = policy or connection_policy()
    facts = InstanceFacts.model_validate(instance or {})
    arn = target.secret_arn
    try:
        secret = json.loads(read_secret(arn))
    except Exception as exc:  # a missing secret, no permission, not JSON: never echo its content
        raise DatabaseUnreachable(
            f"cannot read the credentials secret {arn}: {type(exc).__name__}; "
            "it must exist, be readable by the function and hold JSON with username and password"
        ) from None
    if not isinstance(secret, dict) or "username" not in secret or "password" not in secret:
        raise DatabaseUnreachable(f"secret {arn} must be JSON with username and password")
    check_secret_fields(secret, arn)
    secret_binding.check(target.db_instance_identifier, facts, secret, arn=arn, read_tags=read_tags,
                         allow_unbound=policy.allow_unbound_secrets)
    given = DbSecret.model_validate(secret)
    # the instance's RDS engine when RDS reports no family: an engine the run cannot warm is named as such
    engine = target.engine or facts.engine_family or facts.engine or given.engine
    if not engine:
        raise DatabaseUnreachable(f"cannot tell the engine of {target.db_instance_identifier}: "
                                  f"set target.engine to {' or '.join(engine_names())}")
    try:
        fam = family(engine)
    except UnknownEngine as exc:
        raise DatabaseUnreachable(f"{target.db_instance_identifier}: {exc}") from None
    host = target_host(target, facts, given.host, policy)
    port = int(target.port or (facts.port if not target.host else None) or given.port or fam.default_port)
    # TLS on its own port (Oracle TCPS: the SSL option's, not the endpoint's); a port the user named is used as is.
    tls_port = fam.tls_port if not target.port else None
    database = target.database or given.dbname or facts.db_name or fam.default_database
    return ConnectionSpec(engine=fam.name, host=host, port=port, database=database,
                          user=given.username, password=given.password, tls=policy.tls,
                          tls_port=tls_port, tls_ca=policy.tls_ca)
