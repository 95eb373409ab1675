"""Build a ``ConnectionSpec`` from the run's target and its Secrets Manager secret.

The secret is read inside the Lambda at run time and never returned, logged or stored.
Host and port come, in this order, from the target's explicit override, the RDS
instance's endpoint (a restored instance has a new one), then the secret.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from cutover_prep.engines import ConnectionSpec, DatabaseUnreachable

DEFAULT_PORT = {"postgres": 5432, "oracle": 1521, "mysql": 3306}
DEFAULT_DATABASE = {"postgres": "postgres", "oracle": "ORCL", "mysql": "mysql"}

SecretReader = Callable[[str], str]


def secrets_manager_reader(client: Any) -> SecretReader:
    def read(arn: str) -> str:
        return client.get_secret_value(SecretId=arn)["SecretString"]

    return read


def connection_spec(run: dict[str, Any], read_secret: SecretReader) -> ConnectionSpec:
    target, instance = run["target"], run.get("instance") or {}
    try:
        secret = json.loads(read_secret(target["secret_arn"]))
    except Exception as exc:  # a missing secret, no permission, not JSON: never echo its content
        raise DatabaseUnreachable(
            f"cannot read the credentials secret {target['secret_arn']}: {type(exc).__name__}; "
            "it must exist, be readable by the function and hold JSON with username and password"
        ) from None
    if not isinstance(secret, dict) or "username" not in secret or "password" not in secret:
        raise DatabaseUnreachable(f"secret {target['secret_arn']} must be JSON with username and password")
    engine = target.get("engine") or instance.get("engine_family") or secret.get("engine")
    if engine in ("postgresql",):
        engine = "postgres"
    if engine not in DEFAULT_PORT:
        raise DatabaseUnreachable(f"cannot tell the engine of {target['db_instance_identifier']}: "
                                  "set target.engine to postgres or oracle")
    host = target.get("host") or instance.get("address") or secret.get("host")
    if not host:
        raise DatabaseUnreachable(f"no endpoint for {target['db_instance_identifier']}: "
                                  "the instance has none yet and the secret has no host")
    port = int(target.get("port") or (instance.get("port") if not target.get("host") else None)
               or secret.get("port") or DEFAULT_PORT[engine])
    database = (target.get("database") or secret.get("dbname") or instance.get("db_name")
                or DEFAULT_DATABASE[engine])
    return ConnectionSpec(engine=engine, host=host, port=port, database=database,
                          user=secret["username"], password=secret["password"])
