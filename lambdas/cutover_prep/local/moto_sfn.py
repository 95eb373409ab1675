"""moto's Step Functions interpreter as the local harness runs it: the workflow's own waits scaled (Wait states and
Retry intervals, ``time_scale``; 0: none) without touching the process's ``time.sleep``, the Step Functions
integration's names as AWS spells them, and one boto3 client per service and region for every Task state."""

from __future__ import annotations

import importlib
import threading
import time
from typing import Any
from unittest import mock


class ScaledTime:
    """The workflow's own clock: its ``sleep`` lasts ``scale`` times as long (0: none); the ``time`` module as moto's
    retrier sees it, and the Wait states' sleep."""

    def __init__(self, scale: float) -> None:
        self._scale = scale

    def sleep(self, seconds: float) -> None:
        if self._scale:
            time.sleep(seconds * self._scale)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)



def scaled_waits(time_scale: float) -> list[Any]:
    """The Wait states and the Retry intervals last ``time_scale`` times as long (0: none)."""
    scaled = ScaledTime(time_scale)
    return [
        mock.patch(
            "moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function.WaitFunction._wait_interval",
            lambda _self, env, wait_seconds: scaled.sleep(wait_seconds)),
        # the Retry intervals: moto's retrier calls ``time.sleep`` through its own name ``time``, which is given
        # a scaled sleep; patching ``...retrier_decl.time.sleep`` would patch the ``time`` module itself, and
        # every sleep of the process (a retry's back-off, a poll) would return at once and its loop spin
        mock.patch("moto.stepfunctions.parser.asl.component.common.retry.retrier_decl.time", scaled),
    ]


def sfn_integration_as_aws() -> list[Any]:
    """moto's Step Functions integration (``states:startExecution.sync:2``, the comparison's child runs)
    leaves parameter and response names as boto3 spells them (LocalStack's interpreter, which moto's
    is, normalises them elsewhere): ``StateMachineArn`` fails and ``ExecutionArn`` is missing. Do what
    AWS does: the ASL's parameters are the API's (PascalCase), the answer's fields are PascalCase with
    epoch-millisecond dates (``Status``, ``ExecutionArn``, ``Output``)."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service_sfn

    service = state_task_service_sfn.StateTaskServiceSfn
    original = service._normalise_parameters

    def parameters(self: Any, parameters: dict[str, Any], boto_service_name: str | None = None,
                   service_action_name: str | None = None) -> None:
        original(self, parameters, boto_service_name=boto_service_name, service_action_name=service_action_name)
        for key in list(parameters):
            parameters[key[:1].lower() + key[1:]] = parameters.pop(key)

    def response(self: Any, response: Any, boto_service_name: str | None = None,
                 service_action_name: str | None = None) -> None:
        if isinstance(response, dict):
            for key in list(response):
                value = response.pop(key)
                response[key[:1].upper() + key[1:]] = (int(value.timestamp() * 1000) if hasattr(value, "timestamp")
                                                       else value)

    return [mock.patch.object(service, "_normalise_parameters", parameters),
            mock.patch.object(service, "_normalise_response", response)]


_SFN_CLIENT_USERS = (  # the interpreter's modules that make a client for a state this project's ASL has
    "state_task.lambda_eval_utils", "state_task.service.state_task_service_dynamodb",
    "state_task.service.state_task_service_events", "state_task.service.state_task_service_sfn",
    "state_task.service.state_task_service_aws_sdk", "state_map.item_reader.eval.resource_eval_s3")


def sfn_clients_shared() -> list[Any]:
    """moto's interpreter makes a new boto3 client for every Task state it runs (``boto_client_for``: a Lambda
    client per invocation, a DynamoDB or EventBridge client per optimised integration), tens of ms of CPU each
    under the GIL: 9 % of a workflow test's samples (py-spy, tests/integration/test_workflow.py). One client per
    service and region serves them all while the harness runs (boto3 clients are thread-safe; moto's function
    does not use its ``state_credentials``). Patched where each interpreter module bound the name."""
    from moto.stepfunctions.parser.asl.utils import boto_client

    original = boto_client.boto_client_for
    clients: dict[tuple[str, str, bool], Any] = {}
    mutex = threading.Lock()

    def shared(region: str, service: str, state_credentials: Any = None) -> Any:
        key = (region, service, bool(boto_client.botocore_stubber.enabled))
        with mutex:
            if key not in clients:
                clients[key] = original(region=region, service=service, state_credentials=state_credentials)
            return clients[key]

    prefix = "moto.stepfunctions.parser.asl.component.state.exec."
    return [mock.patch.object(importlib.import_module(prefix + name), "boto_client_for", shared)
            for name in _SFN_CLIENT_USERS]
