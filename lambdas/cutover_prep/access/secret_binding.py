"""Which DB instance a credentials secret belongs to, and whether the run may send it there.

A secret names its instance the way AWS documents it ("JSON structure of AWS Secrets Manager
secrets", Amazon RDS credentials):
- ``dbInstanceIdentifier`` in the secret's JSON, else its ``host`` (compared with the endpoint RDS
  reports for the instance);
- for a secret RDS manages for a master user (its JSON holds only username and password), the tag
  RDS sets on it, ``aws:rds:primaryDBInstanceArn`` (read with DescribeSecret, only when the JSON
  names no instance).
The secret must name the run's target instance, or the instance the target was restored from when
the run itself restored it from that instance's snapshot (``instance.restored_from``, recorded by
StartRestore from DescribeDBSnapshots): a restored instance has its source's master credentials.
Anything else is ``SecretNotBound`` before any connection. A secret that names no instance is
refused too, unless the deployment allows unbound secrets (CDK context ``allow_unbound_secrets``,
the functions' ``ALLOW_UNBOUND_SECRETS``); a secret that names another instance is refused always.
Messages name the secret's ARN and the instance (identifier, host or ARN), never its username or
password.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cutover_prep.access.facts import InstanceFacts
from cutover_prep.engines import DatabaseUnreachable
from cutover_prep.settings import normalize_host

RDS_INSTANCE_TAG = "aws:rds:primaryDBInstanceArn"
SWITCH = "-c allow_unbound_secrets=true"

TagReader = Callable[[str], dict[str, str]]


class SecretNotBound(DatabaseUnreachable):
    """The secret names another DB instance than the run's target (or names none): not retried."""

    error_type = "SecretNotBound"


@dataclass(frozen=True)
class Candidate:
    """An instance the secret may belong to: the target, or the instance it was restored from."""

    identifier: str
    address: str | None
    arn: str | None

    def named_by(self, kind: str, value: str) -> bool:
        if kind == "dbInstanceIdentifier":
            return value.strip().lower() == self.identifier.lower()
        if kind == "host":
            return bool(self.address) and normalize_host(value) == normalize_host(str(self.address))
        # the tag: the whole ARN where RDS reported the instance's, else its resource name (db:NAME)
        if self.arn:
            return value.strip().lower() == self.arn.lower()
        return value.strip().lower().rpartition(":db:")[2] == self.identifier.lower()


def candidates(identifier: str, instance: InstanceFacts) -> tuple[Candidate, Candidate | None]:
    """The target (``identifier``, on the ``instance`` DescribeInstance found), and the instance the run restored
    it from (None when the run restored nothing)."""
    target = Candidate(identifier, instance.address, instance.db_instance_arn)
    source = instance.restored_from
    if source is None or not source.db_instance_identifier:
        return target, None
    return target, Candidate(source.db_instance_identifier, source.address, source.db_instance_arn)


BINDING_FIELDS = ("dbInstanceIdentifier", "host")  # in the order they name the instance


def _json_binding(secret: dict[str, Any], arn: str) -> tuple[str, str] | None:
    """The instance the secret's JSON names: its first non-blank binding field. A binding field that is there
    but is not text (a number, a list, an object, a boolean, null) names nothing the run can compare, and is
    refused rather than read as naming no instance (which allow_unbound_secrets would accept)."""
    for kind in BINDING_FIELDS:
        if kind in secret and not isinstance(secret[kind], str):
            raise SecretNotBound(
                f"secret {arn}: its {kind} is not text ({json_type(secret[kind])}), so it names no instance the "
                f"run can compare: set it to the DB instance's {'identifier' if kind != 'host' else 'endpoint'} "
                "(JSON structure of AWS Secrets Manager secrets)")
    for kind in BINDING_FIELDS:
        value = secret.get(kind)
        if isinstance(value, str) and value.strip():
            return kind, value.strip()
    return None


def json_type(value: Any) -> str:
    """The JSON type of a value, for a message that never repeats the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def check(identifier: str, instance: InstanceFacts, secret: dict[str, Any], *, arn: str,
          read_tags: TagReader | None, allow_unbound: bool) -> None:
    """Return when ``secret`` may go to the target ``identifier`` (on ``instance``); raise ``SecretNotBound``
    otherwise."""
    target, source = candidates(identifier, instance)
    binding = _json_binding(secret, arn)
    why_no_tags = ""
    if binding is None and read_tags is not None:
        try:
            tag = read_tags(arn).get(RDS_INSTANCE_TAG)
        except Exception as exc:  # no permission, throttled: no binding read (never the secret's content)
            tag, why_no_tags = None, f"; its tags could not be read (DescribeSecret: {type(exc).__name__})"
        if tag:
            binding = ("tag", tag)
    if binding is None:
        if allow_unbound:
            return
        suggest = source.identifier if source else target.identifier
        raise SecretNotBound(
            f"secret {arn} names no DB instance (no dbInstanceIdentifier or host in its JSON, no {RDS_INSTANCE_TAG} "
            f"tag{why_no_tags}), so it is not sent to {target.identifier}: add "
            f'"dbInstanceIdentifier": "{suggest}" to the secret, or deploy with {SWITCH} to accept secrets '
            "that name no instance")
    kind, value = binding
    if target.named_by(kind, value) or (source is not None and source.named_by(kind, value)):
        return
    how = f"its {RDS_INSTANCE_TAG} tag" if kind == "tag" else f"its {kind}"
    aimed = target.identifier + (f" (restored by this run from a snapshot of {source.identifier})" if source else "")
    raise SecretNotBound(
        f"secret {arn} belongs to {value!r} ({how}), but it was aimed at {aimed}: credentials go only to "
        f"the instance their secret names; use the secret of {target.identifier}, or if this secret really "
        f"holds its credentials set its dbInstanceIdentifier to {target.identifier}")
