"""Issue 36 §2: the gate workflow (statemachines/gate.asl.json, the very file the CDK deploys) executed by
moto's Step Functions interpreter, its EvaluateGate step the real handler. The run's verdict is the run
item Finalize writes (``Store.update_run``); the instance is moto's; the events go to EventBridge, where a
rule sends them to an SQS queue the test reads (the judge of what a pipeline would receive)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from cutover_prep.dal.store import Store
from cutover_prep.local.harness import LocalAws


@pytest.fixture
def aws() -> Any:
    with LocalAws(time_scale=0.02) as local:  # a 10 s Wait state sleeps 0.2 s
        local.create_instance("db1")
        store = local_store(local)
        store.start_run({"run_id": "r1", "target": {"db_instance_identifier": "db1"},
                         "started_at": "2026-11-27T00:00:00+00:00", "warmup": {}})
        yield local


def local_store(local: LocalAws) -> Store:
    return Store(dynamodb=local.client("dynamodb"), s3=local.client("s3"), table=local.table, bucket=local.bucket)


def events_queue(local: LocalAws) -> str:
    sqs, events = local.client("sqs"), local.client("events")
    url = sqs.create_queue(QueueName="gate-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="gate", EventPattern=json.dumps({"source": ["cutover-prep.gate"]}))
    events.put_targets(Rule="gate", Targets=[{"Id": "q", "Arn": arn}])
    return url


def received(local: LocalAws, url: str) -> list[str]:
    out = []
    while batch := local.client("sqs").receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        out += [json.loads(m["Body"])["detail-type"] for m in batch]
        for m in batch:
            local.client("sqs").delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return out


def start(local: LocalAws, payload: dict[str, Any]) -> str:
    return local.client("stepfunctions").start_execution(
        stateMachineArn=local.state_machine_arns["gate"], input=json.dumps(payload))["executionArn"]


def test_the_gate_workflow_waits_until_the_run_is_ready_then_succeeds(aws: LocalAws) -> None:
    url = events_queue(aws)
    local_store(aws).update_run("r1", status="SUCCEEDED", verdict="NOT_READY", verdict_reasons=["3 MiB not read"])
    arn = start(aws, {"run_id": "r1", "gate": {"db_instance_identifier": "db1"}, "timeout_seconds": 600,
                      "poll_seconds": 10})
    time.sleep(1.5)
    assert aws.describe(arn)["status"] == "RUNNING"  # closed: it waits (Wait states), it does not fail
    threading.Timer(0.5, lambda: local_store(aws).update_run("r1", verdict="READY", verdict_reasons=[])).start()
    desc = aws.wait(arn, timeout_s=60)
    assert desc["status"] == "SUCCEEDED", desc
    out = json.loads(desc["output"])
    assert out["state"] == "open" and [c["state"] for c in out["conditions"]] == ["open", "open", "open"]
    history = aws.client("stepfunctions").get_execution_history(executionArn=arn, maxResults=1000)["events"]
    assert any(e["type"] == "WaitStateEntered" for e in history)
    assert received(aws, url) == ["GateClosed", "GateOpened"]  # one event per change, not per check


def test_the_gate_workflow_fails_by_name_at_the_deadline(aws: LocalAws) -> None:
    local_store(aws).update_run("r1", status="SUCCEEDED", verdict="NOT_READY", verdict_reasons=["3 MiB not read"])
    arn = start(aws, {"run_id": "r1", "gate": {"db_instance_identifier": "db1"}, "timeout_seconds": 10,
                      "poll_seconds": 10})
    desc = aws.wait(arn, timeout_s=90)
    assert desc["status"] == "FAILED" and desc.get("error") == "GateClosed", desc


def test_a_bad_gate_input_fails_the_execution_with_a_named_error(aws: LocalAws) -> None:
    arn = start(aws, {"gate": {"db_instance_identifier": "db1", "dms": {"task_arn": "task1"}}})
    desc = aws.wait(arn, timeout_s=30)
    assert desc["status"] == "FAILED" and desc.get("error") == "InvalidGateInput", desc
    assert "gate.dms.task_arn" in desc.get("cause", "")
