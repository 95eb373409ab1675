"""connection_spec: the credentials go only to the RDS endpoint or an allow-listed host; TLS mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cutover_prep.engines import DatabaseUnreachable
from cutover_prep.settings import ConnectionPolicy, Settings, connection_policy
from tests.unit.contexts import spec_of

PASSWORD = "s3cr3t-Pa55"
ENDPOINT = "db1.abcdefghijkl.eu-west-1.rds.amazonaws.com"
# names its instance (test_secret_binding); its host is not where the password goes
SECRET = {"username": "warmer", "password": PASSWORD, "engine": "postgres", "host": "evil.example.com",
          "port": 5432, "dbname": "app", "dbInstanceIdentifier": "db1"}


def reader(secret: dict[str, Any] = SECRET):
    return lambda arn: json.dumps(secret)


def run(host: str | None = None, address: str | None = ENDPOINT, **target: Any) -> dict[str, Any]:
    t = {"db_instance_identifier": "db1", "secret_arn": "arn:aws:secretsmanager:eu-west-1:1:secret:x",
         "engine": "postgres", **target}
    if host is not None:
        t["host"] = host
    return {"target": t, "instance": {"address": address, "port": 5432, "engine_family": "postgres"}}


def policy(**env: str) -> ConnectionPolicy:
    return ConnectionPolicy.model_validate(env)


def test_the_rds_endpoint_is_used_not_the_secrets_host() -> None:
    spec = spec_of(run(), reader(), policy())
    assert spec.host == ENDPOINT and spec.port == 5432 and spec.tls == "require"
    assert PASSWORD not in repr(spec)


@pytest.mark.parametrize("host", ["127.0.0.1", "attacker.example.com", ENDPOINT + ".x"])
def test_a_target_host_that_is_not_the_endpoint_nor_allow_listed_is_refused(host: str) -> None:
    with pytest.raises(DatabaseUnreachable) as err:
        spec_of(run(host=host), reader(), policy())
    message = str(err.value)
    assert "target.host" in message and "ALLOWED_DB_HOSTS" in message and host in message
    assert PASSWORD not in message and "\n" not in message


def test_a_target_host_equal_to_the_endpoint_is_accepted_whatever_its_case() -> None:
    assert spec_of(run(host=ENDPOINT.upper() + "."), reader(), policy()).host == ENDPOINT.upper() + "."


def test_an_allow_listed_proxy_is_accepted() -> None:
    proxy = "proxy-1.proxy-abc.eu-west-1.rds.amazonaws.com"
    spec = spec_of(run(host=proxy), reader(), policy(ALLOWED_DB_HOSTS=f" other.example , {proxy.upper()} "))
    assert spec.host == proxy and spec.port == 5432


def test_the_secrets_host_cannot_redirect_the_password_when_rds_reports_no_endpoint() -> None:
    with pytest.raises(DatabaseUnreachable, match="ALLOWED_DB_HOSTS") as err:
        spec_of(run(address=None), reader(), policy())
    assert PASSWORD not in str(err.value)
    allowed = spec_of(run(address=None), reader(), policy(ALLOWED_DB_HOSTS="evil.example.com"))
    assert allowed.host == "evil.example.com"


def test_tls_mode_comes_from_the_deployment_and_defaults_to_require(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUTOVER_PREP_TLS", raising=False)
    monkeypatch.delenv("ALLOWED_DB_HOSTS", raising=False)
    assert connection_policy().tls == "require" and connection_policy().allowed_db_hosts == ()
    assert spec_of(run(), reader()).tls == "require"
    monkeypatch.setenv("CUTOVER_PREP_TLS", "Disable")
    assert spec_of(run(), reader()).tls == "disable"
    monkeypatch.setenv("CUTOVER_PREP_TLS", "off")
    with pytest.raises(ValueError, match="CUTOVER_PREP_TLS must be require, verify-ca, unverified, prefer or disable"):
        connection_policy()


def test_settings_carry_the_policy() -> None:
    settings = Settings.model_validate({"TABLE_NAME": "tbl", "BUCKET_NAME": "bkt",
                                        "ALLOWED_DB_HOSTS": "a.example,B.example.", "CUTOVER_PREP_TLS": "prefer"})
    assert settings.allowed_db_hosts == ("a.example", "b.example") and settings.tls == "prefer"
    assert Settings.model_validate({"TABLE_NAME": "tbl", "BUCKET_NAME": "bkt"}).tls == "require"


def test_oracle_gets_the_tcps_port_unless_the_user_named_a_port() -> None:
    r = run()
    r["target"]["engine"] = "oracle"
    r["instance"]["port"] = 1521
    spec = spec_of(r, reader(), policy())
    assert (spec.port, spec.tls_port) == (1521, 2484)
    spec = spec_of(run(port=2485, engine="oracle"), reader(), policy())
    assert (spec.port, spec.tls_port) == (2485, None)


def test_the_secret_fills_what_the_target_and_the_instance_leave_out() -> None:
    """Read by name from the secret's JSON: its port (its digits as text too), database and engine; the
    instance's facts by theirs (``access.facts.InstanceFacts``)."""
    bare = {"target": {**run()["target"], "engine": None}, "instance": {"address": ENDPOINT}}
    spec = spec_of(bare, reader({**SECRET, "port": " 6432 ", "dbname": "shop", "engine": "postgres"}), policy())
    assert (spec.host, spec.port, spec.database, spec.engine, spec.user) == (ENDPOINT, 6432, "shop", "postgres",
                                                                              "warmer")
    facts = {"address": ENDPOINT, "port": 5433, "engine": "postgres", "db_name": "initial"}
    plain = {k: v for k, v in SECRET.items() if k not in ("dbname", "engine")}
    spec = spec_of({**bare, "instance": facts}, reader(plain), policy())
    assert (spec.port, spec.database, spec.engine) == (5433, "initial", "postgres")
