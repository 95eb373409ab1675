"""``LocalAws.wait`` is woken by moto's interpreter when an execution ends; it does not describe a running
execution in a loop (issue 24 §4: those calls took a fifth of a workflow test's CPU)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from cutover_prep.local import harness
from cutover_prep.local.harness import LocalAws

WAIT_ONE_SECOND = json.dumps({"StartAt": "Hold", "States": {
    "Hold": {"Type": "Wait", "Seconds": 1, "Next": "Done"},
    "Done": {"Type": "Pass", "Result": {"ok": True}, "End": True}}})


@pytest.mark.parametrize("on_poll", [False, True])
def test_wait_returns_when_the_execution_ends_without_describing_it_in_a_loop(monkeypatch, on_poll):
    # with no periodic look at all, only moto's word that the execution ended can end the wait
    monkeypatch.setattr(harness, "LOOK_S", 3600.0)
    polls: list[int] = []
    with LocalAws(time_scale=1.0) as aws:
        sfn = aws.client("stepfunctions")
        machine = sfn.create_state_machine(name="hold", definition=WAIT_ONE_SECOND,
                                           roleArn="arn:aws:iam::123456789012:role/sfn")["stateMachineArn"]
        arn = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
        describes: list[str] = []
        describe = aws.describe
        monkeypatch.setattr(aws, "describe", lambda a: describes.append(a) or describe(a))
        result: dict[str, Any] = {}
        waiter = threading.Thread(target=lambda: result.update(aws.wait(
            arn, timeout_s=3600, poll_s=0.05, on_poll=(lambda: polls.append(1)) if on_poll else None)), daemon=True)
        waiter.start()
        waiter.join(timeout=300)  # a hang guard: without the wake-up this wait would last an hour
        assert not waiter.is_alive(), "wait was not woken when the execution ended"
    assert result["status"] == "SUCCEEDED" and json.loads(result["output"]) == {"ok": True}
    # once before the end (or once, after it, when it ended first) and once after moto said it ended
    assert 1 <= len(describes) <= 2, describes
    if not on_poll:
        assert polls == []


def test_the_harness_skips_the_workflows_waits_and_nothing_else(monkeypatch):
    """The harness skips the ASL's Wait states and Retry intervals (time_scale 0), not every ``time.sleep`` of the
    process: it patched ``time.sleep`` itself, so in a local run each sleep of the product (a retry's back-off, a
    poll between two looks) returned at once and its loop spun, taking the CPU from the run's readers. Python's
    documentation of ``time.sleep``: it suspends "for the given number of seconds" (at least, unless a signal
    handler raises); a skipped sleep returns having slept none."""
    import time

    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    with LocalAws() as aws:
        started = time.monotonic()
        time.sleep(0.2)
        slept = time.monotonic() - started
        started = time.monotonic()
        retrier_decl.time.sleep(3600)  # what moto's Retry interval calls: skipped
        skipped = time.monotonic() - started
        assert aws.time_scale == 0
    assert slept >= 0.2
    assert skipped < 60  # a hang guard: an hour if the interval were slept


def test_the_interpreter_makes_one_client_per_service_not_one_per_task_state(monkeypatch):
    """moto's interpreter made a new boto3 client for every Task state (its ``boto_client_for``), tens of ms of CPU
    each; the harness shares one per service while it runs. Five DynamoDB Task states, then five more in a second
    execution: one DynamoDB client made in all (old code: ten)."""
    import boto3

    get = {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem", "ResultPath": None}
    made: list[str] = []
    with LocalAws(time_scale=0.0) as aws:
        key = {"pk": {"S": "x"}, "sk": {"S": "y"}}
        states = {f"Get{i}": {**get, "Parameters": {"TableName": aws.table, "Key": key},
                              **({"Next": f"Get{i + 1}"} if i < 4 else {"End": True})} for i in range(5)}
        sfn = aws.client("stepfunctions")
        machine = sfn.create_state_machine(name="gets", definition=json.dumps({"StartAt": "Get0", "States": states}),
                                           roleArn="arn:aws:iam::123456789012:role/sfn")["stateMachineArn"]
        client = boto3.client
        monkeypatch.setattr(boto3, "client",
                            lambda *a, **k: made.append(k.get("service_name") or a[0]) or client(*a, **k))
        for run in range(2):
            arn = sfn.start_execution(stateMachineArn=machine, name=f"gets-{run}", input="{}")["executionArn"]
            result = aws.wait(arn, timeout_s=300, poll_s=0.05)
            assert result["status"] == "SUCCEEDED", result
    assert made.count("dynamodb") == 1, made
