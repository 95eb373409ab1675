"""A restore finishes → the RDS event is routed by the deployed rule's pattern (moto's EventBridge)
→ the OnRestore handler → the real workflow warms the real PostgreSQL database → READY, once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cutover_prep import deps
from cutover_prep.local.harness import LocalAws
from cutover_prep.local.lambda_runtime import FakeContext
from cutover_prep.restore.trigger import EVENT_PATTERN, TAG_ENABLED, TAG_PROFILE, TAG_SECRET
from handlers import on_restore
from tests.integration.test_workflow import capture_completion_events

pytestmark = pytest.mark.postgres


def route_rds_events(aws: LocalAws):
    """The trigger's rule on the default bus with an SQS target: what EventBridge would hand the function."""
    sqs, events = aws.client("sqs"), aws.client("events")
    url = sqs.create_queue(QueueName="restore-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="cutover-prep-restores", EventPattern=json.dumps(EVENT_PATTERN))
    events.put_targets(Rule="cutover-prep-restores", Targets=[{"Id": "q", "Arn": arn}])

    def publish_and_route(event_id: str, identifier: str) -> list[dict[str, Any]]:
        instance_arn = f"arn:aws:rds:{aws.region}:123456789012:db:{identifier}"
        events.put_events(Entries=[{
            "Source": "aws.rds", "DetailType": "RDS DB Instance Event", "Resources": [instance_arn],
            "Detail": json.dumps({"EventCategories": ["restoration"], "SourceType": "DB_INSTANCE",
                                  "SourceArn": instance_arn, "SourceIdentifier": identifier,
                                  "Message": "Restored from snapshot", "EventID": event_id})}])
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        for m in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return [json.loads(m["Body"]) for m in messages]
    return publish_and_route


def invoke(event: dict[str, Any]) -> dict[str, Any]:
    return on_restore.handler(event, FakeContext("cutover-prep-on-restore", 120))


@pytest.fixture
def aws(monkeypatch):
    with LocalAws() as local:
        monkeypatch.setenv("STATE_MACHINE_ARN", local.state_machine_arn)
        deps.reset()  # settings are read once per process, as in Lambda
        yield local


def test_a_restore_event_starts_one_run_that_ends_ready(aws, sample_db):
    secret = aws.create_secret("restored", {"username": sample_db.user, "password": sample_db.password,
                                            "engine": "postgres", "dbInstanceIdentifier": "restored-db"})
    profile = {"target": {"engine": "postgres", "host": sample_db.host, "port": sample_db.port,
                          "database": sample_db.database},
               # the catalogues waived, as test_workflow.py's run_input does (read by default; proven by
               # test_postgres_census.py): this test is about the trigger, not what a run reads
               "warmup": {"unit_mb": 4, "databases": [sample_db.database], "max_concurrency": 4,
                          "exclude_schemas": ["pg_catalog", "information_schema"]},
               "benchmark": {"enabled": False}}
    aws.client("dynamodb").put_item(TableName=aws.table, Item={
        "pk": {"S": "PROFILE#rehearsal"}, "sk": {"S": "PROFILE"}, "input": {"S": json.dumps(profile)}})
    instance = aws.create_instance("restored-db")
    aws.client("rds").add_tags_to_resource(ResourceName=instance["DBInstanceArn"], Tags=[
        {"Key": TAG_ENABLED, "Value": "true"}, {"Key": TAG_SECRET, "Value": secret},
        {"Key": TAG_PROFILE, "Value": "rehearsal"}])
    route = route_rds_events(aws)
    completions = capture_completion_events(aws)

    assert route("RDS-EVENT-0005", "restored-db") == []  # "DB instance created": not the rule's
    (routed,) = route("RDS-EVENT-0043", "restored-db")
    result = invoke(routed)
    assert result["action"] == "started", result
    assert invoke(routed)["action"] == "duplicate"  # EventBridge delivers at least once
    (point_in_time,) = route("RDS-EVENT-0019", "restored-db")
    assert invoke(point_in_time)["action"] == "duplicate"
    swept = invoke({"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}})
    assert [r["action"] for r in swept["swept"]] == ["duplicate"]

    described = aws.wait(result["execution_arn"], timeout_s=300)
    assert described["status"] == "SUCCEEDED", described
    output = json.loads(described["output"])
    assert output["verdict"] == "READY", output
    (execution,) = aws.client("stepfunctions").list_executions(stateMachineArn=aws.state_machine_arn)["executions"]
    assert execution["executionArn"] == result["execution_arn"]
    payload = aws.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])["input"]
    assert json.loads(payload)["target"]["secret_arn"] == secret  # the secret's ARN, never its value
    (finished,) = completions()
    assert finished["detail"]["verdict"] == "READY"
    assert finished["detail"]["target"]["db_instance_identifier"] == "restored-db"
