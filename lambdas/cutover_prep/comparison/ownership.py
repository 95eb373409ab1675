"""Which DB instances a comparison may delete: only those it can prove its own.

A tag alone proves nothing: RDS copies an instance's tags to its snapshots (CopyTagsToSnapshot) and
a snapshot's tags to an instance restored from it, another deployment in the account tags its own
instances the same way, and anyone may tag an instance by hand. An instance is the comparison's own
only when all three hold:

1. **its record**: the comparison's item in this deployment's table names the instance among those
   its child runs restore. Each child's ValidateInput writes that entry (``claim_restore``) before its
   StartRestore asks RDS for the instance, and only when the comparison's record names this child's
   execution as its parent, is running and plans this instance;
2. **its tags**: ``cutover-prep:deployment`` is this deployment's id (the stack's StackId, in the
   functions' environment), ``cutover-prep:comparison`` is the comparison's id and
   ``cutover-prep:run-id`` is the child run the record names (a run input may set no
   ``cutover-prep:*`` tag);
3. **its age**: RDS created it (``InstanceCreateTime``) after the comparison started.

The Cleanup state (``cleanup.py``) and the hourly reaper (``reaper.py``) both decide with ``judge``;
anything else they find by the tag is reported ("not ours", with the reason), never deleted. A proven
instance is deleted without a final snapshot: it is a copy of a snapshot that still exists, made by
the comparison minutes or hours ago. Nothing unproven is deleted, with or without a final snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cutover_prep.comparison.model import INSTANCE_PREFIX
from cutover_prep.dal.deployment import RESTORES
from cutover_prep.dal.records.deployment import ComparisonItem, Proof
from cutover_prep.models.restore import RUN_TAG
from cutover_prep.models.run_input import InvalidInput
from cutover_prep.rds.answers import DbInstance
from cutover_prep.settings import DEPLOYMENT_ID_ENV, deployment_id
from cutover_prep.workflows import COMPARISON_TAG, DEPLOYMENT_TAG


def _time(value: str | None) -> datetime | None:
    if value is None:
        return None
    when = datetime.fromisoformat(value)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Judgement:
    """Whether an instance is proven the comparison's own; ``why`` when not, ``proof`` when it is."""

    proven: bool
    why: str = ""
    transient: bool = False  # not provable yet (RDS is still creating it): worth asking again later
    proof: Proof | None = None


def judge(instance: DbInstance, *, comparison_id: str, record: ComparisonItem | None,
          deployment: str | None) -> Judgement:
    """Is ``instance`` comparison ``comparison_id``'s own, by its record ``record`` (this deployment's item of
    the comparison, or None) and this ``deployment``'s id?"""
    identifier = instance.identifier or ""
    tags = instance.tags
    if not deployment:
        return Judgement(False, f"this function has no {DEPLOYMENT_ID_ENV}: no instance can be proven this "
                                "deployment's (the stack sets it; redeploy)")
    if tags.get(DEPLOYMENT_TAG) != deployment:
        return Judgement(False, f"not restored by this deployment: its tag {DEPLOYMENT_TAG} is "
                                f"{tags.get(DEPLOYMENT_TAG, 'absent')!s:.200}")
    if tags.get(COMPARISON_TAG) != comparison_id:
        return Judgement(False, f"its tag {COMPARISON_TAG} is {tags.get(COMPARISON_TAG, 'absent')!s:.100}, "
                                f"not {comparison_id}")
    claim = record.restore_of(identifier) if record is not None else None
    if not claim:
        return Judgement(False, f"comparison {comparison_id}'s record has no restore of it: the tags can be copied "
                                "from a snapshot of one of its instances")
    if tags.get(RUN_TAG) != claim.run_id:
        return Judgement(False, f"its tag {RUN_TAG} is {tags.get(RUN_TAG, 'absent')!s:.100}; the comparison's "
                                f"record says run {claim.run_id} restored it")
    created = instance.created_utc()
    if created is None:
        return Judgement(False, "RDS is still creating it (no creation time yet): asked again later", transient=True)
    started = _time(record.started_at)
    if started is None or created <= started:
        return Judgement(False, f"created at {created.isoformat()}, not after comparison {comparison_id} started "
                                f"({started.isoformat() if started else 'start unknown'})")
    return Judgement(True, proof=Proof(
        record=f"{RESTORES}.{identifier}: run {claim.run_id}, recorded {claim.claimed_at}",
        tags={DEPLOYMENT_TAG: deployment, COMPARISON_TAG: comparison_id, RUN_TAG: tags[RUN_TAG]},
        created=created.isoformat(), comparison_started=started.isoformat()))


class NoDeploymentId(Exception):
    """The function does not know its deployment's id: a comparison's child restores nothing."""


def claim_restore(store: Any, config: dict[str, Any]) -> None:
    """ValidateInput of a run whose input names a comparison: write in the comparison's record that this
    run restores its instance, before StartRestore does. Refused (``InvalidInput``, nothing restored)
    unless that record is this deployment's, running, names this run's execution as the comparison's
    (the child's ``AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID``) and plans this instance under this run's
    name. Idempotent: a retried ValidateInput writes the same entry."""
    comparison_id = config["comparison"]["comparison_id"]
    run_id, identifier = config["run_id"], config["target"]["db_instance_identifier"]
    parent = config.get("started_by")
    if not deployment_id():  # its instance could never be proven the comparison's own, so never deleted
        raise NoDeploymentId(f"{DEPLOYMENT_ID_ENV} is not set: a comparison's instance restored now could not be "
                             "proven its own and would never be deleted; redeploy the stack (it sets it)")
    if not parent:
        raise InvalidInput("comparison: only a comparison's child run names a comparison, and it names the "
                           "comparison's execution in AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID; remove comparison")
    if not run_id.startswith(f"{comparison_id}-") or identifier != f"{INSTANCE_PREFIX}-{run_id}":
        raise InvalidInput(f"comparison: a child run of comparison {comparison_id} restores "
                           f"{INSTANCE_PREFIX}-{comparison_id}-<name> as run {comparison_id}-<name>, not "
                           f"{identifier} as run {run_id}; remove comparison")
    if not store.deployment.claim_comparison_restore(comparison_id, identifier, run_id=run_id, parent=parent):
        raise InvalidInput(f"comparison: no running comparison {comparison_id} of this deployment started this run "
                           f"for {identifier} (no such record, another execution's, ended, or no such instance "
                           "planned); a run input may not set comparison")
