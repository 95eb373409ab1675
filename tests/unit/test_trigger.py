"""The restore trigger: the rule's pattern, opt-in by tag, profiles, the scheduled fallback,
and exactly one run per restore whichever path fires first (moto RDS, DynamoDB, Step Functions)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from cutover_prep.trigger import (
    TAG_ENABLED,
    TAG_PROFILE,
    TAG_SECRET,
    Starter,
    execution_name,
    matches_pattern,
    on_rds_event,
    sweep,
)
from tests.unit.conftest import TABLE

SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"


def rds_event(event_id="RDS-EVENT-0043", ident="restored-1", source="aws.rds", detail_type="RDS DB Instance Event"):
    return {"version": "0", "id": "e1", "detail-type": detail_type, "source": source, "account": "123456789012",
            "time": "2026-11-22T10:00:00Z", "region": "us-east-1",
            "resources": [f"arn:aws:rds:us-east-1:123456789012:db:{ident}"],
            "detail": {"EventCategories": ["notification"], "SourceType": "DB_INSTANCE",
                       "SourceArn": f"arn:aws:rds:us-east-1:123456789012:db:{ident}", "Date": "2026-11-22T10:00:00Z",
                       "Message": "Restored from snapshot", "SourceIdentifier": ident, "EventID": event_id}}


@pytest.mark.parametrize(("event", "matches"), [
    (rds_event("RDS-EVENT-0043"), True),
    (rds_event("RDS-EVENT-0019"), True),
    (rds_event("RDS-EVENT-0005"), False),  # instance created
    (rds_event(source="aws.ec2"), False),
    (rds_event(detail_type="RDS DB Snapshot Event"), False),
])
def test_rule_pattern(event, matches):
    assert matches_pattern(event) is matches


@pytest.fixture
def env(store):
    rds = boto3.client("rds", region_name="us-east-1")
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    iam = boto3.client("iam", region_name="us-east-1")
    role = iam.create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    arn = sfn.create_state_machine(name="m", roleArn=role, definition=json.dumps(
        {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}))["stateMachineArn"]
    starter = Starter(dynamodb=store.ddb, table=TABLE, stepfunctions=sfn, state_machine_arn=arn, rds=rds)
    return rds, sfn, arn, starter


def make_instance(rds, ident, tags):
    rds.create_db_instance(DBInstanceIdentifier=ident, DBInstanceClass="db.m5.large", Engine="postgres",
                           AllocatedStorage=100, MasterUsername="u", MasterUserPassword="password1",
                           Tags=[{"Key": k, "Value": v} for k, v in tags.items()])


def executions(sfn, arn):
    return sfn.list_executions(stateMachineArn=arn)["executions"]


def test_event_for_an_opted_in_instance_starts_one_run(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "restored-1", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    result = on_rds_event(rds_event(ident="restored-1"), starter)
    assert result["action"] == "started"
    (execution,) = executions(sfn, arn)
    payload = json.loads(sfn.describe_execution(executionArn=execution["executionArn"])["input"])
    assert payload["target"] == {"db_instance_identifier": "restored-1", "secret_arn": SECRET}


def test_not_opted_in_and_gone_instances_are_ignored(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "other", {"team": "x"})
    assert on_rds_event(rds_event(ident="other"), starter)["action"] == "ignored"
    assert on_rds_event(rds_event(ident="never-existed"), starter)["action"] == "ignored"
    assert on_rds_event(rds_event("RDS-EVENT-0005", ident="other"), starter)["action"] == "ignored"
    assert executions(sfn, arn) == []


def test_event_then_schedule_then_event_again_is_one_run(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "restored-2", {TAG_ENABLED: "TRUE", TAG_SECRET: SECRET})
    assert on_rds_event(rds_event(ident="restored-2"), starter)["action"] == "started"
    swept = sweep(starter, lookback_hours=1)
    assert [r["action"] for r in swept if r["instance"] == "restored-2"] == ["duplicate"]
    assert on_rds_event(rds_event("RDS-EVENT-0019", ident="restored-2"), starter)["action"] == "duplicate"
    assert len(executions(sfn, arn)) == 1


def test_schedule_finds_what_the_events_missed_and_skips_old_restores(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "missed", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    make_instance(rds, "untagged", {})
    results = {r["instance"]: r["action"] for r in sweep(starter, lookback_hours=1)}
    assert results == {"missed": "started"}
    later = datetime.now(UTC) + timedelta(hours=3)
    assert sweep(starter, lookback_hours=1, now=later) == []  # restored long ago: not ours to start
    assert len(executions(sfn, arn)) == 1


def test_profile_supplies_options_and_tags_override(env, store):
    rds, sfn, arn, starter = env
    profile = {"target": {"secret_arn": SECRET}, "warmup": {"max_concurrency": 16},
               "benchmark": {"seconds_per_point": 60}}
    store.ddb.put_item(TableName=TABLE, Item={"pk": {"S": "PROFILE#oracle-prod"}, "sk": {"S": "PROFILE"},
                                              "input": {"S": json.dumps(profile)}})
    make_instance(rds, "restored-3", {TAG_ENABLED: "true", TAG_PROFILE: "oracle-prod",
                                      "cutover-prep:max-concurrency": "32"})
    assert on_rds_event(rds_event(ident="restored-3"), starter)["action"] == "started"
    payload = json.loads(sfn.describe_execution(executionArn=executions(sfn, arn)[0]["executionArn"])["input"])
    assert payload["warmup"]["max_concurrency"] == 32 and payload["benchmark"]["seconds_per_point"] == 60


@pytest.mark.parametrize(("tags", "needle"), [
    ({TAG_ENABLED: "true"}, TAG_SECRET),
    ({TAG_ENABLED: "true", TAG_SECRET: "not-an-arn"}, "target.secret_arn"),
    ({TAG_ENABLED: "true", TAG_SECRET: SECRET, "cutover-prep:max-concurrency": "lots"}, "not a number"),
])
def test_bad_tags_are_rejected_with_the_reason_and_start_nothing(env, tags, needle):
    rds, sfn, arn, starter = env
    make_instance(rds, "bad", tags)
    result = on_rds_event(rds_event(ident="bad"), starter)
    assert result["action"] == "rejected" and needle in result["why"]
    assert executions(sfn, arn) == []


def test_execution_names_are_valid_and_stable():
    key = "a" * 63 + "@2026-11-22T10:00:00+00:00"
    name = execution_name(key)
    assert name == execution_name(key) and len(name) <= 80
    assert name != execution_name("a" * 63 + "@2026-11-23T10:00:00+00:00")
    assert all(c.isalnum() or c in "-_" for c in name)
