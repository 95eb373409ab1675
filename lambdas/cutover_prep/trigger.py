"""Start a run when an opted-in instance is restored: RDS events, plus a scheduled sweep.

RDS events reach EventBridge best effort, so two paths lead here:

- the rule on ``aws.rds`` "RDS DB Instance Event" for RDS-EVENT-0043 (restored from a
  snapshot) and RDS-EVENT-0019 (point-in-time restore): ``on_rds_event``;
- a schedule that lists the instances created within ``lookback_hours``: ``sweep``.

Either way an instance is considered only when its tag ``cutover-prep:enabled`` is
``true``. The run's input is built from a stored profile (tag ``cutover-prep:profile``,
default ``default``; a DynamoDB item) and the tags ``cutover-prep:secret-arn`` /
``cutover-prep:max-concurrency`` / ``cutover-prep:benchmark``. Exactly one run per
restore: the restore's identity is the instance id plus its creation time; a
conditional put claims it, and the execution name is derived from it too, so whichever
path comes first starts the run and the other one finds it taken.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cutover_prep.inputs import InvalidInput, parse_run_input

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


def matches_pattern(event: dict[str, Any]) -> bool:
    """The rule's pattern, for tests and for events handed over by other means."""
    detail = event.get("detail") or {}
    return (event.get("source") == "aws.rds" and event.get("detail-type") == "RDS DB Instance Event"
            and detail.get("EventID") in RESTORE_EVENTS)


def _tags(instance: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in instance.get("TagList") or []}


def opted_in(instance: dict[str, Any]) -> bool:
    return _tags(instance).get(TAG_ENABLED, "").strip().lower() == "true"


def restore_key(instance: dict[str, Any]) -> str:
    created = instance.get("InstanceCreateTime")
    created_iso = created.isoformat() if isinstance(created, datetime) else str(created or "unknown")
    return f"{instance['DBInstanceIdentifier']}@{created_iso}"


def execution_name(key: str) -> str:
    """Deterministic, ≤ 80 characters, only the characters Step Functions accepts."""
    ident = key.split("@", 1)[0][:50]
    return f"restore-{ident}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def build_input(instance: dict[str, Any], profile: dict[str, Any] | None) -> dict[str, Any]:
    tags = _tags(instance)
    run = json.loads(json.dumps(profile or {}))
    target = run.setdefault("target", {})
    target["db_instance_identifier"] = instance["DBInstanceIdentifier"]
    if tags.get(TAG_SECRET):
        target["secret_arn"] = tags[TAG_SECRET]
    if not target.get("secret_arn"):
        raise InvalidInput(f"instance {instance['DBInstanceIdentifier']}: no secret: tag it {TAG_SECRET}=ARN "
                           f"or put target.secret_arn in its profile")
    if tags.get(TAG_MAX_CONCURRENCY):
        try:
            run.setdefault("warmup", {})["max_concurrency"] = int(tags[TAG_MAX_CONCURRENCY])
        except ValueError:
            raise InvalidInput(f"tag {TAG_MAX_CONCURRENCY}={tags[TAG_MAX_CONCURRENCY]!r} is not a number") from None
    if tags.get(TAG_BENCHMARK):
        run.setdefault("benchmark", {})["enabled"] = tags[TAG_BENCHMARK].strip().lower() != "false"
    run.pop("run_id", None)
    parse_run_input(run)  # fail here, with the field named, rather than in the workflow
    return run


class Starter:
    """Claims a restore once and starts its execution. Clients injected."""

    def __init__(self, *, dynamodb: Any, table: str, stepfunctions: Any, state_machine_arn: str, rds: Any) -> None:
        self.ddb, self.table, self.sfn, self.arn, self.rds = dynamodb, table, stepfunctions, state_machine_arn, rds

    def profile(self, name: str) -> dict[str, Any] | None:
        raw = self.ddb.get_item(TableName=self.table, Key={"pk": {"S": f"PROFILE#{name}"}, "sk": {"S": "PROFILE"}})
        item = raw.get("Item")
        return json.loads(item["input"]["S"]) if item else None

    def claim(self, key: str, via: str) -> bool:
        try:
            self.ddb.put_item(TableName=self.table, Item={
                "pk": {"S": f"RESTORE#{key}"}, "sk": {"S": "RESTORE"}, "via": {"S": via},
                "claimed_at": {"S": datetime.now(UTC).isoformat()}},
                ConditionExpression="attribute_not_exists(pk)")
            return True
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise

    def consider(self, instance: dict[str, Any], via: str) -> dict[str, Any]:
        ident = instance["DBInstanceIdentifier"]
        if not opted_in(instance):
            return {"instance": ident, "action": "ignored", "why": f"not tagged {TAG_ENABLED}=true"}
        key = restore_key(instance)
        profile_name = _tags(instance).get(TAG_PROFILE, "default")
        try:
            run_input = build_input(instance, self.profile(profile_name))
        except InvalidInput as exc:
            return {"instance": ident, "action": "rejected", "why": str(exc)}
        if not self.claim(key, via):
            return {"instance": ident, "action": "duplicate", "why": f"restore {key} already has a run"}
        name = execution_name(key)
        try:
            started = self.sfn.start_execution(stateMachineArn=self.arn, name=name, input=json.dumps(run_input))
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ExecutionAlreadyExists":
                return {"instance": ident, "action": "duplicate", "why": f"execution {name} exists"}
            raise
        return {"instance": ident, "action": "started", "execution_arn": started["executionArn"], "via": via,
                "restore": key}

    def describe(self, identifier: str) -> dict[str, Any] | None:
        try:
            return self.rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"][0]
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "DBInstanceNotFound":
                return None
            raise


def on_rds_event(event: dict[str, Any], starter: Starter) -> dict[str, Any]:
    if not matches_pattern(event):
        return {"action": "ignored", "why": "not a restore event"}
    detail = event["detail"]
    identifier = detail.get("SourceIdentifier") or (detail.get("SourceArn") or "").rsplit(":", 1)[-1]
    instance = starter.describe(identifier)
    if instance is None:
        return {"instance": identifier, "action": "ignored", "why": "instance no longer exists"}
    return starter.consider(instance, via=detail["EventID"])


def sweep(starter: Starter, *, lookback_hours: float = 24, now: datetime | None = None) -> list[dict[str, Any]]:
    """The scheduled fallback: opted-in instances created within the lookback window."""
    since = (now or datetime.now(UTC)) - timedelta(hours=lookback_hours)
    results = []
    for page in starter.rds.get_paginator("describe_db_instances").paginate():
        for instance in page["DBInstances"]:
            created = instance.get("InstanceCreateTime")
            if not isinstance(created, datetime) or created < since or not opted_in(instance):
                continue
            if instance.get("DBInstanceStatus") in ("deleting", "deleted", "failed"):
                continue
            results.append(starter.consider(instance, via="schedule"))
    return results
