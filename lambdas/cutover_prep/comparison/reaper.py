"""The scheduled reaper: delete comparison instances that outlived their comparison.

A comparison deletes what it restored in its Cleanup state, but a comparison that is stopped,
times out or dies otherwise runs no state. Every hour the reaper looks at each DB instance tagged
``cutover-prep:comparison`` and deletes it when all hold:

- it is older than its TTL: the tag ``cutover-prep:ttl-hours`` (set by the comparison from its
  ``ttl_hours``), else ``DEFAULT_TTL_HOURS``; its age counts from ``InstanceCreateTime``;
- it is proven its comparison's own by the rule the Cleanup uses (``ownership.judge``: its
  comparison's record in this deployment's table names it, it carries this deployment's tag and its
  comparison's, and it was created after the comparison started); the tag alone is not proof;
- its comparison is not running: that record names its execution, and it is not RUNNING.

An instance that is not proven is reported (``not_ours``, with the reason), never deleted; IAM allows
the delete only on instances carrying this deployment's tag. What it deleted and what it left (and
why) is recorded in the table per comparison of this deployment.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cutover_prep.comparison.cleanup import (
    GONE_STATES,
    CleanupOutcome,
    NotOurs,
    _problem,
    delete_instance,
    tagged_instances,
)
from cutover_prep.comparison.ownership import judge
from cutover_prep.dal.records.deployment import ComparisonItem, InstanceOutcome
from cutover_prep.rds.answers import DbInstance
from cutover_prep.settings import deployment_id
from cutover_prep.workflows import COMPARISON_TAG, TTL_TAG

DEFAULT_TTL_HOURS = 12.0


def ttl_hours(instance: DbInstance) -> float:
    try:
        value = float(instance.tags.get(TTL_TAG, DEFAULT_TTL_HOURS))
    except ValueError:
        return DEFAULT_TTL_HOURS  # a tag someone edited by hand: the default, never "forever"
    return value if value > 0 else DEFAULT_TTL_HOURS


def age_hours(instance: DbInstance, now: datetime) -> float | None:
    created = instance.created_utc()
    if created is None:  # still creating: RDS has not set it yet
        return None
    return (now - created).total_seconds() / 3600


def execution_running(sfn: Any, execution_arn: str | None) -> bool:
    if not execution_arn:
        return False
    try:
        return sfn.describe_execution(executionArn=execution_arn)["status"] == "RUNNING"
    except ClientError as exc:
        if exc.response["Error"]["Code"] in ("ExecutionDoesNotExist", "ResourceNotFound"):
            return False
        raise


def reap(*, rds: Any, sfn: Any, comparison_of: Callable[[str], ComparisonItem | None],
         record: Callable[[str, list[InstanceOutcome], list[InstanceOutcome]], None] | None = None,
         now: datetime | None = None, deployment: str | None = None) -> CleanupOutcome:
    """One sweep. ``comparison_of(comparison_id)`` -> the comparison's record in this deployment's table
    (its ``execution_arn``, ``started_at`` and the ``restores`` of its child runs) or None;
    ``record(comparison_id, deleted, left)`` stores the outcome of one comparison's instances;
    ``deployment``: this deployment's id (None: nothing can be proven ours, nothing is deleted).

    ``not_ours`` are instances with a comparison's tag not proven that comparison's (a copy restored from its
    snapshot, another deployment's): never deleted, not recorded in any comparison's record."""
    now = now or datetime.now(UTC)
    out = CleanupOutcome()
    running: dict[str, bool] = {}
    for instance in tagged_instances(rds):
        identifier = instance.identifier or ""
        comparison_id = instance.tags[COMPARISON_TAG]
        if instance.status in GONE_STATES:
            continue  # being deleted already (by the comparison's cleanup, or an earlier sweep)
        age, ttl = age_hours(instance, now), ttl_hours(instance)
        if age is None or age < ttl:
            continue  # young, or still being created: its comparison may still use it
        comparison = comparison_of(comparison_id)
        judgement = judge(instance, comparison_id=comparison_id, record=comparison, deployment=deployment)
        if not judgement.proven:
            out.not_ours.append(_entry(identifier, comparison_id, judgement.why))
            continue
        try:
            if comparison_id not in running:
                running[comparison_id] = execution_running(sfn, comparison.execution_arn if comparison else None)
            if running[comparison_id]:
                out.left.append(_entry(identifier, comparison_id, f"{age:.1f} h old (TTL {ttl:g} h) but its "
                                                                  "comparison is still running"))
                continue
            deleted = delete_instance(rds, instance, judgement)
            out.deleted.append(InstanceOutcome(
                db_instance_identifier=identifier, comparison_id=comparison_id, status=deleted.status,
                final_snapshot=deleted.final_snapshot, proof=deleted.proof, age_hours=round(age, 2), ttl_hours=ttl))
        except NotOurs as exc:
            out.not_ours.append(_entry(identifier, comparison_id, str(exc)))
        except (ClientError, BotoCoreError) as exc:
            out.left.append(_entry(identifier, comparison_id, _problem(exc)))
    if record is not None:
        for comparison_id in sorted({e.comparison_id or "" for e in out.deleted + out.left}):
            record(comparison_id, [e for e in out.deleted if e.comparison_id == comparison_id],
                   [e for e in out.left if e.comparison_id == comparison_id])
    return out


def _entry(identifier: str, comparison_id: str, why: str) -> InstanceOutcome:
    return InstanceOutcome(db_instance_identifier=identifier, comparison_id=comparison_id, why=why)


def run_reaper(*, rds: Any, sfn: Any, store: Any, now: datetime | None = None) -> dict[str, Any]:
    """The scheduled sweep: the comparison's execution from its record in the table, the outcome
    appended to that record (``reaped``: what was deleted, ``reaper_left``: what was left and why)."""
    outcome = reap(rds=rds, sfn=sfn, comparison_of=store.deployment.comparison, record=store.deployment.record_reaped,
                   now=now, deployment=deployment_id())
    kinds = ("deleted", "left", "not_ours")
    return {kind: outcome.identifiers(kind) for kind in kinds} | {"details": {
        kind: [e.model_dump(mode="json", exclude_unset=True) for e in getattr(outcome, kind)] for kind in kinds}}
