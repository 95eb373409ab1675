"""Start a run when an opted-in instance is restored: RDS events, plus a scheduled sweep.

RDS events reach EventBridge best effort, so two paths lead here:

- the rule on ``aws.rds`` "RDS DB Instance Event" for RDS-EVENT-0043 (restored from a
  snapshot) and RDS-EVENT-0019 (point-in-time restore): ``on_rds_event``;
- a schedule that lists the instances created within ``lookback_hours``: ``sweep``.

Either way an instance is considered only when its tag ``cutover-prep:enabled`` is
``true``. The run's input is built from a stored profile (tag ``cutover-prep:profile``,
default ``default``; a DynamoDB item) and the tags ``cutover-prep:secret-arn`` /
``cutover-prep:max-concurrency`` / ``cutover-prep:benchmark``. Exactly one run per
restore: the restore's identity is the new instance's ``DbiResourceId`` (a restore under a
name used before is a new instance with a new one; a rename keeps it). A
conditional put claims it, and the execution name is derived from it too, so whichever
path comes first starts the run and the other one finds it taken. A claim whose start was
not confirmed (Step Functions throttled, the function timed out) is retried by the next
event or sweep under the same execution name, so a restore is never claimed and lost.

Tags that make a bad input start nothing; the rejection is published once per restore
and reason as a ``Cutover Prep Run Not Started`` event (the completion event's fields),
so whoever is told about finished runs is told about it too, and the next sweep starts
the run once the tags are fixed (within ``lookback_hours`` of the restore).

The sweep cannot tell a restore from any other new instance (DescribeDBInstances does not
say), so it takes every opted-in instance created within the window: a read replica's or
a new instance's volume is made from a snapshot and loaded lazily as well, and the tag is
the owner's say-so. Instances a run of this deployment restored itself are left to that run:
the tag ``cutover-prep:run-id`` alone is no proof (the run's restore copies tags to snapshots, so a
customer's restore from one carries it), so the instance must also carry this deployment's tag and
that run's record in the table must name it as the instance it restores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from botocore.exceptions import BotoCoreError, ClientError

from cutover_prep.dal import profiles
from cutover_prep.dal.deployment import DeploymentTable
from cutover_prep.dal.records.deployment import RestoreClaim
from cutover_prep.live import completion
from cutover_prep.models.run_input import InvalidInput, execution_arn, parse_run_input
from cutover_prep.rds.answers import DbInstance
from cutover_prep.rds.instances import RUN_TAG
from cutover_prep.rds.instances import describe as describe_instance
from cutover_prep.settings import deployment_id
from cutover_prep.workflows import DEPLOYMENT_TAG

if TYPE_CHECKING:
    from cutover_prep.models.steps import TriggerEvent

TAG_ENABLED = "cutover-prep:enabled"
TAG_PROFILE = "cutover-prep:profile"
TAG_SECRET = "cutover-prep:secret-arn"
TAG_MAX_CONCURRENCY = "cutover-prep:max-concurrency"
TAG_BENCHMARK = "cutover-prep:benchmark"
RESTORE_EVENTS = ("RDS-EVENT-0043", "RDS-EVENT-0019")
EVENT_PATTERN = {
    "source": ["aws.rds"],
    "detail-type": ["RDS DB Instance Event"],
    "detail": {"EventID": list(RESTORE_EVENTS)},
}


class Outcome(TypedDict):
    """What the trigger did with one instance (the handler logs and returns it)."""

    instance: NotRequired[str]
    action: str  # started | duplicate | ignored | rejected | waiting | deferred | error
    why: NotRequired[str]
    execution_arn: NotRequired[str | None]
    via: NotRequired[str]
    restore: NotRequired[str]
    retried_claim: NotRequired[bool]


def matches_pattern(event: TriggerEvent) -> bool:
    """The rule's pattern, for tests and for events handed over by other means."""
    return (event.source == "aws.rds" and event.detail_type == "RDS DB Instance Event"
            and event.detail.EventID in RESTORE_EVENTS)


def opted_in(instance: DbInstance) -> bool:
    return instance.tags.get(TAG_ENABLED, "").strip().lower() == "true"


def restore_key(instance: DbInstance) -> str | None:
    """The instance's ``DbiResourceId``: one per restored instance, the same from ``creating`` on
    and across a rename. Without one (never seen from RDS), the name and creation time; None
    while neither is known: the sweep looks again."""
    if instance.dbi_resource_id:
        return instance.dbi_resource_id
    created = instance.created
    return f"{instance.identifier}@{created.isoformat()}" if created is not None else None


def execution_name(identifier: str, key: str) -> str:
    """Deterministic, ≤ 80 characters, only the characters Step Functions accepts."""
    ident = "".join(c if c.isalnum() or c in "-_" else "-" for c in identifier)[:50]
    return f"restore-{ident}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def build_input(instance: DbInstance, profile: dict[str, Any] | None) -> dict[str, Any]:
    """The run input of the instance's restore: its profile (a run input without the instance, ``dal.profiles``)
    with the instance and what its tags say."""
    tags = instance.tags
    run = json.loads(json.dumps(profile or {}))
    target = run.setdefault("target", {})
    target["db_instance_identifier"] = instance.identifier
    if tags.get(TAG_SECRET):
        target["secret_arn"] = tags[TAG_SECRET]
    if not target.get("secret_arn"):
        raise InvalidInput(f"instance {instance.identifier}: no secret: tag it {TAG_SECRET}=ARN "
                           f"or put target.secret_arn in its profile")
    if tags.get(TAG_MAX_CONCURRENCY):
        try:
            run.setdefault("warmup", {})["max_concurrency"] = int(tags[TAG_MAX_CONCURRENCY])
        except ValueError:
            raise InvalidInput(f"tag {TAG_MAX_CONCURRENCY}={tags[TAG_MAX_CONCURRENCY]!r} is not a number") from None
    if tags.get(TAG_BENCHMARK):
        value = tags[TAG_BENCHMARK].strip().lower()
        if value not in ("true", "false"):
            raise InvalidInput(f"tag {TAG_BENCHMARK}={tags[TAG_BENCHMARK]!r}: true or false")
        run.setdefault("benchmark", {})["enabled"] = value == "true"
    run.pop("run_id", None)
    parse_run_input(run)  # fail here, with the field named, rather than in the workflow
    return run


def _duplicate(ident: str, key: str, claim: RestoreClaim) -> Outcome:
    return {"instance": ident, "action": "duplicate", "why": f"restore {key} already has a run",
            "execution_arn": claim.execution_arn}


class Starter:
    """Claims a restore once and starts its execution. Clients injected; the table's items through
    ``dal.deployment``."""

    def __init__(self, *, dynamodb: Any, table: str, stepfunctions: Any, state_machine_arn: str, rds: Any,
                 events: Any = None) -> None:
        self.items = DeploymentTable(dynamodb=dynamodb, table=table)
        self._ddb, self.table, self.sfn, self.arn, self.rds = dynamodb, table, stepfunctions, state_machine_arn, rds
        self.events = events

    def profile(self, name: str) -> dict[str, Any] | None:
        """The stored profile; a named one that is missing is an error, a missing ``default`` is defaults."""
        data = profiles.load(self._ddb, self.table, name)
        if data is None and name != profiles.DEFAULT:
            raise InvalidInput(f"profile {name!r} (tag {TAG_PROFILE}) not found: store it with "
                               f"`cutover-prep profile put {name} --input FILE`")
        return data

    def claim(self, key: str, via: str) -> RestoreClaim | None:
        """None when this call claimed the restore, else the existing claim (``status`` CLAIMED or STARTED)."""
        return None if self.items.claim_restore(key, via) else self.claimed(key)

    def claimed(self, key: str) -> RestoreClaim:
        """The restore's claim (``status`` CLAIMED or STARTED; None when it has none)."""
        return self.items.restore_claim(key) or RestoreClaim()

    def _confirm(self, key: str, execution_arn: str) -> None:
        self.items.confirm_restore(key, execution_arn)

    def reject(self, instance: DbInstance, key: str, why: str, via: str) -> bool:
        """Record the rejection once per restore and reason and publish it; True when it was new."""
        digest = hashlib.sha256(why.encode()).hexdigest()[:16]
        new = self.items.reject_restore(key, digest, why=why, via=via)
        if new and self.events is not None:
            completion.publish(self.events, completion.not_started_detail(
                instance.identifier, instance.engine, why), detail_type=completion.NOT_STARTED)
        return new

    def consider(self, instance: DbInstance, via: str) -> Outcome:
        ident = instance.identifier or ""
        if not opted_in(instance):
            return {"instance": ident, "action": "ignored", "why": f"not tagged {TAG_ENABLED}=true"}
        if run_id := self.restored_by_run(instance):  # its own restore event would start a second run on it
            return {"instance": ident, "action": "ignored", "why": f"restored by run {run_id}, which warms it"}
        key = restore_key(instance)
        if key is None:
            return {"instance": ident, "action": "waiting", "why": "the instance has no resource id yet; "
                    "the scheduled sweep looks again"}
        known = self.claimed(key)
        if known.status == "STARTED":  # before the tags and the profile: they may have changed since
            return _duplicate(ident, key, known)
        profile_name = instance.tags.get(TAG_PROFILE, profiles.DEFAULT)
        try:
            run_input = build_input(instance, self.profile(profile_name))
        except InvalidInput as exc:
            self.reject(instance, key, str(exc), via)
            return {"instance": ident, "action": "rejected", "why": str(exc)}
        existing = self.claim(key, via)
        if existing is not None and existing.status == "STARTED":
            return _duplicate(ident, key, existing)
        name = execution_name(ident, key)
        try:
            started = self.sfn.start_execution(stateMachineArn=self.arn, name=name, input=json.dumps(run_input))
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ExecutionAlreadyExists":
                raise  # the claim stays unconfirmed: the retry or the next sweep starts it under the same name
            arn = execution_arn(self.arn, name)
            self._confirm(key, arn)
            return {"instance": ident, "action": "duplicate", "why": f"execution {name} exists", "execution_arn": arn}
        self._confirm(key, started["executionArn"])
        return {"instance": ident, "action": "started", "execution_arn": started["executionArn"], "via": via,
                "restore": key, "retried_claim": existing is not None}

    def restored_by_run(self, instance: DbInstance) -> str | None:
        """The run of this deployment that restored ``instance`` and warms it, when proven: its run tag and
        this deployment's tag, and that run's record names it as the instance its restore creates."""
        tags, deployment = instance.tags, deployment_id()
        run_id = tags.get(RUN_TAG)
        if not run_id or not deployment or tags.get(DEPLOYMENT_TAG) != deployment:
            return None
        run = self.items.run_item(run_id)
        if run is None or not run.restore or run.db_instance_identifier != instance.identifier:
            return None
        return run_id

    def describe(self, identifier: str) -> DbInstance | None:
        try:
            return describe_instance(self.rds, identifier)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "DBInstanceNotFound":
                return None
            raise


def on_rds_event(event: TriggerEvent, starter: Starter) -> Outcome:
    if not matches_pattern(event):
        return {"action": "ignored", "why": "not a restore event"}
    detail = event.detail
    identifier = detail.SourceIdentifier or (detail.SourceArn or "").rsplit(":", 1)[-1]
    instance = starter.describe(identifier)
    if instance is None:
        return {"instance": identifier, "action": "ignored", "why": "instance no longer exists"}
    return starter.consider(instance, via=str(detail.EventID))


# Statuses from which an instance will not become available by itself: not ours to start.
NOT_STARTABLE = frozenset({
    "deleting", "deleted", "failed", "stopped", "stopping", "storage-full", "restore-error",
    "incompatible-restore", "incompatible-parameters", "incompatible-network", "incompatible-option-group",
    "inaccessible-encryption-credentials", "inaccessible-encryption-credentials-recoverable",
})


def sweep(starter: Starter, *, lookback_hours: float = 24, now: datetime | None = None,
          time_left_s: Callable[[], float] | None = None, reserve_s: float = 20.0) -> list[Outcome]:
    """The scheduled fallback: opted-in instances created within the lookback window.

    Oldest first (the next to fall out of the window); when ``time_left_s()`` drops below
    ``reserve_s`` the rest is ``deferred`` to the next sweep rather than cut off mid-call.
    """
    since = (now or datetime.now(UTC)) - timedelta(hours=lookback_hours)
    candidates = []
    for page in starter.rds.get_paginator("describe_db_instances").paginate():
        for instance in map(DbInstance.model_validate, page["DBInstances"]):
            created = instance.created
            if created is None or created < since or not opted_in(instance):
                continue
            if instance.status in NOT_STARTABLE:
                continue
            candidates.append((created, instance))
    candidates.sort(key=lambda c: c[0])
    results: list[Outcome] = []
    for _, instance in candidates:
        ident = instance.identifier or ""
        if time_left_s is not None and time_left_s() < reserve_s:
            results.append({"instance": ident, "action": "deferred", "why": "out of time; the next sweep"})
            continue
        try:
            results.append(starter.consider(instance, via="schedule"))
        except ClientError as exc:  # one instance's trouble does not stop the sweep; the next one retries
            results.append({"instance": ident, "action": "error",
                            "why": f"{exc.response['Error']['Code']}: {exc.response['Error'].get('Message')}"})
        except BotoCoreError as exc:
            results.append({"instance": ident, "action": "error", "why": str(exc)})
    return results
