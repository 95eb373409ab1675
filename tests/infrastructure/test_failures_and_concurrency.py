"""What checkov's findings made us fix (issue 20, finding 7): an event an asynchronously invoked
function failed on is kept, and the warm-up cannot take the account's whole Lambda concurrency.

Judges, from AWS's documentation:
- EventBridge invokes a Lambda target asynchronously; an event it cannot deliver is dropped after its
  retries unless the target has a dead-letter queue, to which EventBridge needs sqs:SendMessage in the
  queue's policy (EventBridge User Guide, "Event retry policy and using dead-letter queues").
- Lambda retries an asynchronous invocation that failed (0-2 times) and then sends the event to the
  function's dead-letter queue, with the function's execution role, which must allow sqs:SendMessage
  (Lambda Developer Guide, "Handling asynchronous invocations": dead-letter queues).
- Reserved concurrency is both a reservation and a ceiling, and Lambda keeps at least 100 executions of
  the account's concurrency (1,000 by default) unreserved (Lambda Developer Guide, "Configuring reserved
  concurrency"). Above the ceiling an invocation is throttled.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Synth, functions_by_handler, resources_for, role_of

ACCOUNT_DEFAULT_CONCURRENCY = 1000  # Lambda quotas: concurrent executions, default
UNRESERVED_MINIMUM = 100  # Lambda keeps at least this many unreserved
FOURTEEN_DAYS = 14 * 24 * 3600  # SQS's longest message retention


def _invoked_by_eventbridge(synth: Synth) -> dict[str, list[dict[str, Any]]]:
    """Function logical id -> the rule targets that invoke it (asynchronously)."""
    functions = synth.resources("AWS::Lambda::Function")
    invoked: dict[str, list[dict[str, Any]]] = {}
    for rule in synth.resources("AWS::Events::Rule").values():
        for target in rule["Properties"]["Targets"]:
            arn = target["Arn"]
            if isinstance(arn, dict) and "Fn::GetAtt" in arn and arn["Fn::GetAtt"][0] in functions:
                invoked.setdefault(arn["Fn::GetAtt"][0], []).append(target)
    return invoked


def _queue_of(arn: Any, synth: Synth) -> str:
    queues = synth.resources("AWS::SQS::Queue")
    assert isinstance(arn, dict) and arn.get("Fn::GetAtt", [None, None])[1] == "Arn", arn
    assert arn["Fn::GetAtt"][0] in queues, f"{arn} is not a queue of this stack"
    return arn["Fn::GetAtt"][0]


@pytest.mark.parametrize("variant", ["plain", "in_vpc"])
def test_what_an_asynchronously_invoked_function_fails_on_is_kept(variant: str, request) -> None:
    synth: Synth = request.getfixturevalue(variant)
    invoked = _invoked_by_eventbridge(synth)
    by_handler = {k: r["Properties"]["Handler"] for k, r in synth.resources("AWS::Lambda::Function").items()}
    # the restore trigger (restore events and the sweep) and the reaper (its schedule)
    assert {by_handler[k] for k in invoked} == {"handlers.on_restore.handler", "handlers.reap_instances.handler"}
    rules = {k: r for k, r in synth.resources("AWS::Events::Rule").items()}
    invoke_configs = {c["Properties"]["FunctionName"]["Ref"]: c["Properties"]
                      for c in synth.resources("AWS::Lambda::EventInvokeConfig").values()}
    for function_id, targets in invoked.items():
        function = synth.template["Resources"][function_id]
        # Lambda: what fails its retries goes to the dead-letter queue ...
        queue_id = _queue_of(function["Properties"].get("DeadLetterConfig", {}).get("TargetArn"), synth)
        queue = synth.template["Resources"][queue_id]["Properties"]
        assert queue.get("SqsManagedSseEnabled") is True or "KmsMasterKeyId" in queue, queue
        assert queue["MessageRetentionPeriod"] == FOURTEEN_DAYS
        assert invoke_configs[function_id]["MaximumRetryAttempts"] == 2
        # ... sent with the function's role (the role is passed without policy updates: stated explicitly)
        assert f"<{queue_id}.Arn>" in resources_for(synth, role_of(function), "sqs:SendMessage")
        # EventBridge: what it cannot deliver goes to the same queue, which lets each rule send there
        policy = next(p["Properties"]["PolicyDocument"] for p in synth.resources("AWS::SQS::QueuePolicy").values()
                      if {"Ref": queue_id} in p["Properties"]["Queues"])
        senders = [s["Condition"]["ArnEquals"]["aws:SourceArn"] for s in policy["Statement"]
                   if s["Effect"] == "Allow" and s.get("Principal") == {"Service": "events.amazonaws.com"}
                   and s["Action"] == "sqs:SendMessage"]
        for rule_id, rule in rules.items():
            for target in rule["Properties"]["Targets"]:
                if target["Arn"] == {"Fn::GetAtt": [function_id, "Arn"]}:
                    assert _queue_of(target.get("DeadLetterConfig", {}).get("Arn"), synth) == queue_id, rule_id
                    assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1
                    assert {"Fn::GetAtt": [rule_id, "Arn"]} in senders, rule_id
        assert len(targets) >= 1
        # someone hears of it: an alarm while a message waits
        alarms = [a["Properties"] for a in synth.resources("AWS::CloudWatch::Alarm").values()
                  if {"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}}
                  in a["Properties"].get("Dimensions", [])]
        assert [(a["MetricName"], a["Threshold"], a["ComparisonOperator"]) for a in alarms] == [
            ("ApproximateNumberOfMessagesVisible", 1, "GreaterThanOrEqualToThreshold")]


@pytest.mark.parametrize("variant", ["plain", "in_vpc"])
def test_no_rule_drops_an_event_it_could_not_deliver(variant: str, request) -> None:
    """The same class of fault for every EventBridge rule of the stack, whatever its target (the
    notifications topic too): a target without a dead-letter queue drops what it could not deliver."""
    synth: Synth = request.getfixturevalue(variant)
    policies = [p["Properties"] for p in synth.resources("AWS::SQS::QueuePolicy").values()]
    rules = synth.resources("AWS::Events::Rule")
    assert rules
    for rule_id, rule in rules.items():
        for target in rule["Properties"]["Targets"]:
            queue_id = _queue_of(target.get("DeadLetterConfig", {}).get("Arn"), synth)
            allowed = [s for p in policies if {"Ref": queue_id} in p["Queues"] for s in p["PolicyDocument"]["Statement"]
                       if s["Effect"] == "Allow" and s.get("Principal") == {"Service": "events.amazonaws.com"}
                       and s["Condition"]["ArnEquals"]["aws:SourceArn"] == {"Fn::GetAtt": [rule_id, "Arn"]}]
            assert allowed, f"{rule_id}: EventBridge may not send to {queue_id}"
            assert synth.resources("AWS::CloudWatch::Alarm"), "no alarm on the dead-letter queues"
            assert any(a["Properties"].get("Dimensions") == [
                {"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}}]
                for a in synth.resources("AWS::CloudWatch::Alarm").values()), f"{queue_id} has no alarm"


def _reserved(synth: Synth) -> dict[str, int]:
    return {r["Properties"]["Handler"]: r["Properties"]["ReservedConcurrentExecutions"]
            for r in synth.resources("AWS::Lambda::Function").values()
            if "ReservedConcurrentExecutions" in r["Properties"]}


def _validate_input_env(synth: Synth) -> dict[str, str]:
    _, function = functions_by_handler(synth)["handlers.validate_input.handler"]
    return function["Properties"]["Environment"]["Variables"]


def test_the_warm_up_has_a_ceiling_that_leaves_the_account_its_concurrency(plain: Synth) -> None:
    # the documented default (docs/deploy.md, context warm_concurrency): WarmUnit, the function the WarmUp
    # Map fans out into, and nothing else
    assert _reserved(plain) == {"handlers.warm_unit.handler": 100}
    assert sum(_reserved(plain).values()) <= ACCOUNT_DEFAULT_CONCURRENCY - UNRESERVED_MINIMUM
    # ValidateInput knows the ceiling, so a run cannot ask its Map for more (lambdas/.../warm_concurrency.py)
    assert _validate_input_env(plain)["WARM_CONCURRENCY"] == "100"


def test_the_ceiling_comes_from_context_and_zero_reserves_nothing(synth_factory) -> None:
    synth = synth_factory({"warm_concurrency": "0"})
    assert synth.error is None  # cdk-nag
    assert _reserved(synth) == {}  # 0 is no reservation, never ReservedConcurrentExecutions 0 (always throttled)
    assert "WARM_CONCURRENCY" not in _validate_input_env(synth)
    warm_unit, _ = functions_by_handler(synth)["handlers.warm_unit.handler"]
    skips = synth.template["Resources"][warm_unit]["Metadata"]["checkov"]["skip"]
    assert "CKV_AWS_115" in {s["id"] for s in skips}  # acknowledged, with its reason, instead


@pytest.mark.parametrize("value", ["-1", "1001", "many"])
def test_a_bad_ceiling_is_named(value: str) -> None:
    from cutover_prep_cdk import build_app
    from cutover_prep_cdk.config import ConfigError

    with pytest.raises(ConfigError, match="warm_concurrency"):
        build_app({"skip_layer_build": True, "warm_concurrency": value})
