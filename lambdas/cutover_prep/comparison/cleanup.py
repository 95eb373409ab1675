"""Delete the DB instances a comparison restored, and only those.

An instance is deleted only when it carries the tag ``cutover-prep:comparison`` with this
comparison's id (the IAM policy of the functions also allows ``rds:DeleteDBInstance`` only on
instances carrying that tag: the code refuses first, IAM refuses anyway). It is deleted without a
final snapshot and with its automated backups: it is a copy of a snapshot that still exists.

What could not be deleted is "left", with the reason; the scheduled reaper (``reaper.py``) tries
again once the instance's TTL has passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cutover_prep.workflows import COMPARISON_TAG

GONE_STATES = {"deleting", "deleted"}
# RDS refuses to delete an instance in some states (creating, modifying ...): worth asking again later.
TRANSIENT_ERRORS = {"InvalidDBInstanceState", "Throttling", "ThrottlingException"}


class NotOurs(Exception):
    """The instance does not carry this comparison's tag: never deleted."""


def tags_of(instance: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in instance.get("TagList") or []}


def describe(rds: Any, identifier: str) -> dict[str, Any] | None:
    try:
        return rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"][0]
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "DBInstanceNotFound":
            return None
        raise


def tagged_instances(rds: Any, comparison_id: str | None = None) -> list[dict[str, Any]]:
    """Every DB instance carrying the comparison tag (of ``comparison_id``, or of any comparison)."""
    found = []
    for page in rds.get_paginator("describe_db_instances").paginate():
        for instance in page["DBInstances"]:
            value = tags_of(instance).get(COMPARISON_TAG)
            if value is not None and (comparison_id is None or value == comparison_id):
                found.append(instance)
    return found


def delete_instance(rds: Any, instance: dict[str, Any], comparison_id: str) -> str:
    """Delete one instance of ``comparison_id``; returns the answer RDS gave (its status)."""
    identifier = instance["DBInstanceIdentifier"]
    if tags_of(instance).get(COMPARISON_TAG) != comparison_id:
        raise NotOurs(f"{identifier} does not carry the tag {COMPARISON_TAG}={comparison_id}: not deleted")
    if instance.get("DBInstanceStatus") in GONE_STATES:
        return str(instance["DBInstanceStatus"])
    answer = rds.delete_db_instance(DBInstanceIdentifier=identifier, SkipFinalSnapshot=True,
                                    DeleteAutomatedBackups=True)["DBInstance"]
    return str(answer.get("DBInstanceStatus") or "deleting")


def clean_up(rds: Any, comparison_id: str, identifiers: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Delete the comparison's instances: those it planned (``identifiers``) and any other instance
    tagged with its id. Returns ``{"deleted": [...], "left": [...]}``: one entry per instance that
    exists (an instance never created is in neither), each with its identifier and why."""
    deleted: list[dict[str, Any]] = []
    left: list[dict[str, Any]] = []
    seen: set[str] = set()
    candidates: list[tuple[str, dict[str, Any] | None]] = []
    try:
        for instance in tagged_instances(rds, comparison_id):
            candidates.append((instance["DBInstanceIdentifier"], instance))
    except (ClientError, BotoCoreError) as exc:  # the planned ones are still tried one by one
        left.append({"db_instance_identifier": "*", "why": f"could not list instances by tag: {_problem(exc)}"})
    listed = {identifier for identifier, _ in candidates}
    candidates += [(identifier, None) for identifier in identifiers if identifier not in listed]
    for identifier, instance in candidates:
        if identifier in seen:
            continue
        seen.add(identifier)
        try:
            instance = instance or describe(rds, identifier)
            if instance is None:
                continue  # never created (the child failed before its restore): nothing to delete
            status = delete_instance(rds, instance, comparison_id)
            deleted.append({"db_instance_identifier": identifier, "status": status})
        except NotOurs as exc:
            left.append({"db_instance_identifier": identifier, "why": str(exc)})
        except ClientError as exc:
            left.append({"db_instance_identifier": identifier, "why": _problem(exc),
                         "transient": exc.response.get("Error", {}).get("Code") in TRANSIENT_ERRORS})
        except BotoCoreError as exc:
            left.append({"db_instance_identifier": identifier, "why": _problem(exc), "transient": True})
    return {"deleted": deleted, "left": left}


def _problem(exc: ClientError | BotoCoreError) -> str:
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'error')}: {err.get('Message', '')}".rstrip(": ")
    return str(exc)
