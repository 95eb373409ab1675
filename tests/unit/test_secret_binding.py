"""Issue 20, finding 2: a secret's credentials go only to the instance the secret belongs to.

What a secret says about its instance is AWS's own structure, not ours:
- "JSON structure of AWS Secrets Manager secrets" (Secrets Manager User Guide, reference_secret_json_structure):
  the credentials of an Amazon RDS database are {"engine", "host", "username", "password", "dbname",
  "port", "dbInstanceIdentifier"}; ``host`` is the instance's host name, ``dbInstanceIdentifier`` its ID;
- a secret RDS manages for a master user is tagged by RDS itself with ``aws:rds:primaryDBInstanceArn``,
  the ARN of its DB instance (AWS managed policy AmazonRDSServiceRolePolicy lets RDS's service-linked role
  tag its ``rds!`` secrets with that key only; the ``aws:`` prefix is reserved to AWS);
- a DB instance restored from a snapshot has the master credentials of the instance the snapshot was taken
  from (DescribeDBSnapshots -> DBInstanceIdentifier), so that instance's secret is accepted when the run
  restores the snapshot itself.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cutover_prep.engines import DatabaseUnreachable
from cutover_prep.settings import ConnectionPolicy
from tests.unit.contexts import spec_of

PASSWORD = "s3cr3t-Pa55-binding"
USER = "warmer-user-9"
ARN = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:orders-prod-ro-AbCdEf"
REHEARSAL = "orders-rehearsal.cx1.eu-west-1.rds.amazonaws.com"
PROD = "orders-prod.cx1.eu-west-1.rds.amazonaws.com"
PROD_ARN = "arn:aws:rds:eu-west-1:111122223333:db:orders-prod"
REHEARSAL_ARN = "arn:aws:rds:eu-west-1:111122223333:db:orders-rehearsal"
RDS_TAG = "aws:rds:primaryDBInstanceArn"


def secret(**fields: Any) -> dict[str, Any]:
    return {"username": USER, "password": PASSWORD, "engine": "postgres", "port": 5432, "dbname": "app", **fields}


def reader(value: dict[str, Any]):
    return lambda arn: json.dumps(value)


def run(identifier: str = "orders-rehearsal", address: str = REHEARSAL, arn: str | None = REHEARSAL_ARN,
        restored_from: dict[str, Any] | None = None) -> dict[str, Any]:
    instance: dict[str, Any] = {"address": address, "port": 5432, "engine_family": "postgres", "db_instance_arn": arn}
    if restored_from is not None:
        instance["restored_from"] = restored_from
    return {"target": {"db_instance_identifier": identifier, "secret_arn": ARN, "engine": "postgres"},
            "instance": instance}


def prod_snapshot(**source: Any) -> dict[str, Any]:
    """What StartRestore records when the run restores a snapshot of orders-prod (rds.snapshot_source)."""
    return {"snapshot_identifier": "orders-prod-snap", "db_instance_identifier": "orders-prod", **source}


def policy(allow_unbound: bool = False) -> ConnectionPolicy:
    return ConnectionPolicy.model_validate({"ALLOW_UNBOUND_SECRETS": "true" if allow_unbound else "false"})


def tags(mapping: dict[str, str] | None = None, calls: list[str] | None = None):
    def read(arn: str) -> dict[str, str]:
        if calls is not None:
            calls.append(arn)
        return dict(mapping or {})
    return read


def refused(run_doc: dict[str, Any], value: dict[str, Any], *, read_tags: Any = None,
            allow_unbound: bool = False) -> str:
    extra = {"read_tags": read_tags} if read_tags is not None else {}
    with pytest.raises(DatabaseUnreachable) as err:
        spec_of(run_doc, reader(value), policy(allow_unbound), **extra)
    assert type(err.value).__name__ == "SecretNotBound", err.value  # its own name in the workflow
    message = str(err.value)
    assert "\n" not in message and PASSWORD not in message and USER not in message, message
    assert ARN in message, message
    return message


# -- the regression: a secret for orders-prod aimed at another instance --------------------------------
def test_a_secret_naming_another_instance_is_refused_before_any_connection() -> None:
    message = refused(run(), secret(dbInstanceIdentifier="orders-prod", host=PROD))
    assert "'orders-prod'" in message and "orders-rehearsal" in message  # which it names, where it was aimed
    assert "dbInstanceIdentifier" in message  # how to fix


def test_a_secret_whose_host_is_another_instances_endpoint_is_refused() -> None:
    message = refused(run(), secret(host=PROD))
    assert PROD in message and "orders-rehearsal" in message


def test_an_rds_managed_secret_of_another_instance_is_refused() -> None:
    message = refused(run(), {"username": USER, "password": PASSWORD}, read_tags=tags({RDS_TAG: PROD_ARN}))
    assert PROD_ARN in message and RDS_TAG in message


def test_a_mismatch_is_refused_even_where_unbound_secrets_are_allowed() -> None:
    refused(run(), secret(dbInstanceIdentifier="orders-prod"), allow_unbound=True)


# -- what is accepted ---------------------------------------------------------------------------------
def test_a_secret_naming_the_target_is_used_whatever_the_case() -> None:
    spec = spec_of(run(), reader(secret(dbInstanceIdentifier="Orders-Rehearsal")), policy())
    assert spec.host == REHEARSAL and spec.password == PASSWORD


def test_a_secret_whose_host_is_the_targets_endpoint_is_used() -> None:
    spec = spec_of(run(), reader(secret(host=REHEARSAL.upper() + ".")), policy())
    assert spec.host == REHEARSAL


def test_dbinstanceidentifier_wins_over_a_stale_host() -> None:
    # AWS's structure names the instance by dbInstanceIdentifier; host is only read when it is missing
    spec = spec_of(run(), reader(secret(dbInstanceIdentifier="orders-rehearsal", host=PROD)), policy())
    assert spec.host == REHEARSAL


def test_an_rds_managed_secret_of_the_target_is_used_and_its_tags_are_read_only_when_needed() -> None:
    calls: list[str] = []
    spec = spec_of(run(), reader({"username": USER, "password": PASSWORD}), policy(),
                           read_tags=tags({RDS_TAG: REHEARSAL_ARN}, calls))
    assert spec.host == REHEARSAL and calls == [ARN]
    calls.clear()
    spec_of(run(), reader(secret(dbInstanceIdentifier="orders-rehearsal")), policy(),
                    read_tags=tags({}, calls))
    assert calls == []  # the JSON names the instance: no DescribeSecret


def test_the_tag_is_compared_by_name_when_rds_reported_no_arn() -> None:
    spec = spec_of(run(arn=None), reader({"username": USER, "password": PASSWORD}), policy(),
                           read_tags=tags({RDS_TAG: REHEARSAL_ARN}))
    assert spec.host == REHEARSAL


@pytest.mark.parametrize("binding", [{"dbInstanceIdentifier": "orders-prod"}, {"host": PROD}, "tag"])
def test_the_secret_of_the_snapshots_source_instance_is_used_when_the_run_restored_it(binding: Any) -> None:
    restored = run(restored_from=prod_snapshot(address=PROD, db_instance_arn=PROD_ARN))
    value = {"username": USER, "password": PASSWORD} if binding == "tag" else secret(**binding)
    spec = spec_of(restored, reader(value), policy(), read_tags=tags({RDS_TAG: PROD_ARN}))
    assert spec.host == REHEARSAL  # the credentials go to the restored instance, never to the source


def test_the_source_instance_is_accepted_only_where_the_run_restored_it() -> None:
    # the same rehearsal instance, restored by someone else (restore trigger, a run input): no source known
    message = refused(run(), secret(dbInstanceIdentifier="orders-prod"))
    assert "'orders-prod'" in message and "snapshot" not in message  # no restore claimed


def test_another_instance_is_refused_also_when_the_run_restored_a_snapshot() -> None:
    restored = run(restored_from=prod_snapshot(address=PROD, db_instance_arn=PROD_ARN))
    message = refused(restored, secret(dbInstanceIdentifier="billing-prod"))
    assert "'billing-prod'" in message and "orders-rehearsal" in message and "a snapshot of orders-prod" in message


# -- a secret that names no instance ------------------------------------------------------------------
def test_a_secret_naming_no_instance_is_refused_by_default() -> None:
    message = refused(run(), {"username": USER, "password": PASSWORD}, read_tags=tags({}))
    assert "names no DB instance" in message and "allow_unbound_secrets" in message
    assert '"dbInstanceIdentifier": "orders-rehearsal"' in message


def test_a_secret_naming_no_instance_is_used_where_the_deployment_allows_it() -> None:
    spec = spec_of(run(), reader({"username": USER, "password": PASSWORD}), policy(allow_unbound=True),
                           read_tags=tags({}))
    assert spec.host == REHEARSAL


def test_tags_that_cannot_be_read_are_no_binding() -> None:
    def denied(arn: str) -> dict[str, str]:
        raise RuntimeError("AccessDeniedException: not authorized to perform secretsmanager:DescribeSecret")

    message = refused(run(), {"username": USER, "password": PASSWORD}, read_tags=denied)
    assert "DescribeSecret" in message
    assert spec_of(run(), reader({"username": USER, "password": PASSWORD}), policy(allow_unbound=True),
                           read_tags=denied).host == REHEARSAL


def test_the_switch_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from cutover_prep.settings import connection_policy

    monkeypatch.delenv("ALLOW_UNBOUND_SECRETS", raising=False)
    assert connection_policy().allow_unbound_secrets is False
    monkeypatch.setenv("ALLOW_UNBOUND_SECRETS", "true")
    assert connection_policy().allow_unbound_secrets is True
    monkeypatch.setenv("ALLOW_UNBOUND_SECRETS", "maybe")
    with pytest.raises(ValueError, match="ALLOW_UNBOUND_SECRETS must be true or false"):
        connection_policy()


# -- a binding field that is not text (issue 32 §8.7) ----------------------------------------------------------
# AWS's structure has dbInstanceIdentifier and host as strings ("JSON structure of AWS Secrets Manager
# secrets"): one present as a number, a list, an object, a boolean or null names no instance the run can
# compare, and was taken as naming none, which a deployment with allow_unbound_secrets then sent anywhere.
NOT_TEXT = [123, ["orders-prod"], {"id": "orders-prod"}, True, None]


@pytest.mark.parametrize("field", ["dbInstanceIdentifier", "host"])
@pytest.mark.parametrize("value", NOT_TEXT, ids=lambda v: type(v).__name__)
def test_a_binding_field_that_is_not_text_is_refused_even_where_unbound_secrets_are_allowed(field, value) -> None:
    for allow_unbound in (False, True):
        message = refused(run(), secret(**{field: value}), read_tags=tags({}), allow_unbound=allow_unbound)
        assert field in message and "not text" in message, message


def test_a_binding_field_that_is_not_text_is_refused_also_beside_a_good_one() -> None:
    # the host names the target, but dbInstanceIdentifier (the field AWS's structure names the instance by)
    # is a list: what the secret says is not clear, so it is not used
    refused(run(), secret(dbInstanceIdentifier=["orders-rehearsal", "orders-prod"], host=REHEARSAL),
            allow_unbound=True)


@pytest.mark.parametrize(("fields", "words"), [
    ({"port": "5432; drop"}, "port"), ({"port": True}, "port"), ({"port": 5432.5}, "port"), ({"port": 70000}, "port"),
    ({"username": 42}, "username"), ({"password": ["a", "b"]}, "password"), ({"dbname": {"x": 1}}, "dbname"),
])
def test_the_secrets_other_fields_are_checked_too(fields, words) -> None:
    # the same class: a field of another type was used as it came (int(True) is port 1) or broke later
    with pytest.raises(DatabaseUnreachable) as err:
        spec_of(run(), reader(secret(dbInstanceIdentifier="orders-rehearsal", **fields)), policy())
    message = str(err.value)
    assert words in message and ARN in message and "\n" not in message, message
    assert PASSWORD not in message and USER not in message


def test_a_blank_binding_field_still_names_no_instance() -> None:
    # an empty string is text that names nothing: as if the field were absent (refused unless allowed)
    refused(run(), secret(dbInstanceIdentifier="  "), read_tags=tags({}))
    assert spec_of(run(), reader(secret(dbInstanceIdentifier="")), policy(allow_unbound=True),
                           read_tags=tags({})).host == REHEARSAL
