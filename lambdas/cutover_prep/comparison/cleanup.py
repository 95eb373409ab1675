"""Delete the DB instances a comparison restored, and only those.

The candidates are the instances the comparison planned and every instance carrying its tag
``cutover-prep:comparison`` with its id. Each is deleted only when ``ownership.judge`` proves it the
comparison's own (its record, this deployment's tags, created after the comparison started); IAM
also allows ``rds:DeleteDBInstance`` only on instances carrying this deployment's tag. A proven
instance is deleted without a final snapshot and with its automated backups: it is a copy of a
snapshot that still exists.

The outcome has three lists: ``deleted`` (proven, deletion asked; its details carry the proof and
``final_snapshot: null``), ``left`` (proven or still being created, but RDS would not delete it yet:
the Cleanup asks again, then the reaper) and ``not_ours`` (found by the tag or the planned name but
not proven the comparison's: reported with the reason, never deleted).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel

from cutover_prep.comparison.ownership import Judgement, judge
from cutover_prep.dal.records.deployment import ComparisonItem, InstanceOutcome
from cutover_prep.rds.answers import DbInstance
from cutover_prep.rds.instances import describe as describe_instance
from cutover_prep.workflows import COMPARISON_TAG

GONE_STATES = {"deleting", "deleted"}
# RDS refuses to delete an instance in some states (creating, modifying ...): worth asking again later.
TRANSIENT_ERRORS = {"InvalidDBInstanceState", "Throttling", "ThrottlingException"}

__all__ = ["GONE_STATES", "CleanupOutcome", "InstanceOutcome", "NotOurs", "clean_up", "delete_instance", "describe",
           "tagged_instances"]


class NotOurs(Exception):
    """The instance is not proven the comparison's own: never deleted."""


class CleanupOutcome(BaseModel):
    """``deleted`` (proven, deletion asked), ``left`` (RDS would not delete it yet, or it could not be judged
    yet) and ``not_ours`` (not proven the comparison's: never deleted)."""

    deleted: list[InstanceOutcome] = []
    left: list[InstanceOutcome] = []
    not_ours: list[InstanceOutcome] = []

    def identifiers(self, kind: str) -> list[str]:
        return [o.db_instance_identifier for o in getattr(self, kind)]


def describe(rds: Any, identifier: str) -> DbInstance | None:
    try:
        return describe_instance(rds, identifier)
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "DBInstanceNotFound":
            return None
        raise


def tagged_instances(rds: Any, comparison_id: str | None = None) -> list[DbInstance]:
    """Every DB instance carrying the comparison tag (of ``comparison_id``, or of any comparison):
    candidates to judge, not instances to delete."""
    found = []
    for page in rds.get_paginator("describe_db_instances").paginate():
        for instance in map(DbInstance.model_validate, page["DBInstances"]):
            value = instance.tags.get(COMPARISON_TAG)
            if value is not None and (comparison_id is None or value == comparison_id):
                found.append(instance)
    return found


def delete_instance(rds: Any, instance: DbInstance, judgement: Judgement) -> InstanceOutcome:
    """Delete one proven instance; its entry in ``deleted``: RDS's answer, no final snapshot, the proof."""
    identifier = instance.identifier or ""
    if not judgement.proven:
        raise NotOurs(f"{identifier}: {judgement.why}: not deleted")
    status = instance.status
    if status not in GONE_STATES:
        answer = rds.delete_db_instance(DBInstanceIdentifier=identifier, SkipFinalSnapshot=True,
                                        DeleteAutomatedBackups=True)["DBInstance"]
        status = DbInstance.model_validate(answer).status or "deleting"
    return InstanceOutcome(db_instance_identifier=identifier, status=str(status), final_snapshot=None,
                           proof=judgement.proof)


def clean_up(rds: Any, comparison_id: str, identifiers: Iterable[str], *, record: ComparisonItem | None,
             deployment: str | None) -> CleanupOutcome:
    """Judge and delete the comparison's candidates: those it planned (``identifiers``) and any other
    instance tagged with its id. ``record``: its item in this deployment's table; ``deployment``: this
    deployment's id. One outcome per instance that exists (an instance never created is in none), each with
    its identifier and why."""
    out = CleanupOutcome()
    seen: set[str] = set()
    candidates: list[tuple[str, DbInstance | None]] = []
    try:
        for instance in tagged_instances(rds, comparison_id):
            candidates.append((instance.identifier or "", instance))
    except (ClientError, BotoCoreError) as exc:  # the planned ones are still tried one by one
        out.left.append(InstanceOutcome(db_instance_identifier="*",
                                        why=f"could not list instances by tag: {_problem(exc)}"))
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
            judgement = judge(instance, comparison_id=comparison_id, record=record, deployment=deployment)
            if not judgement.proven:
                kind = out.left if judgement.transient else out.not_ours
                kind.append(InstanceOutcome(db_instance_identifier=identifier, why=judgement.why,
                                            **({"transient": True} if judgement.transient else {})))
                continue
            out.deleted.append(delete_instance(rds, instance, judgement))
        except ClientError as exc:
            out.left.append(InstanceOutcome(db_instance_identifier=identifier, why=_problem(exc),
                                            transient=_code(exc) in TRANSIENT_ERRORS))
        except BotoCoreError as exc:
            out.left.append(InstanceOutcome(db_instance_identifier=identifier, why=_problem(exc), transient=True))
    return out


def _code(exc: ClientError) -> str | None:
    return exc.response.get("Error", {}).get("Code")


def _problem(exc: ClientError | BotoCoreError) -> str:
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'error')}: {err.get('Message', '')}".rstrip(": ")
    return str(exc)
